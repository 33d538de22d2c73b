/* A headless LV2 host over lilv for the plugin tests: loads one bundle, runs N instances of its
   plugin side by side in blocks of B frames, sends each the same MIDI events (from a file of
   "FRAME STATUS DATA1 DATA2" lines) at their frames, optionally moves a control before the block
   that starts at a frame, and writes instance 0's output as a 32-bit float WAV. Every instance
   must produce the same samples: the first difference is reported and the exit status is 1.

   --save FILE writes instance 0's state (lilv: its ports and the plugin's state:interface) after the
   last block; --restore FILE restores every instance from such a file before the first block.

   -p FRAME PROPERTY PATH sends a patch:Set of that property (a URI) to the file PATH (an atom:Path) on
   the atom input at FRAME, as a host's file chooser does; -g FRAME sends a patch:Get. The host has the
   worker (work:schedule: the plugin's work() runs at once, in the calling thread, and its responses
   reach work_response() after the block's run(), then end_run()) and the log (log:log: each line on
   stderr as "lv2host: log: ..."); what the plugin sends on an atom output (patch:Set of a path) is
   printed as "lv2host: notify: PROPERTY PATH" for instance 0.

   Usage: lv2host BUNDLE_DIR PLUGIN_URI EVENTS FRAMES BLOCK OUT.wav [-n INSTANCES] [-s FRAME SYMBOL VALUE]...
                  [-p FRAME PROPERTY PATH]... [-g FRAME]... [--save FILE] [--restore FILE] */
#include <lilv/lilv.h>
#include <lv2/atom/atom.h>
#include <lv2/atom/forge.h>
#include <lv2/atom/util.h>
#include <lv2/log/log.h>
#include <lv2/patch/patch.h>
#include <lv2/worker/worker.h>
#include <stdarg.h>
#include <lv2/midi/midi.h>
#include <lv2/state/state.h>
#include <lv2/urid/urid.h>
#include <sndfile.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MAX_URIDS 256
#define MAX_INSTANCES 64
#define MAX_SETS 16
#define SEQ_BYTES 65536

static char *uris[MAX_URIDS];
static int nuris;

static LV2_URID map_uri(LV2_URID_Map_Handle handle, const char *uri) {
  (void)handle;
  for (int i = 0; i < nuris; i++)
    if (!strcmp(uris[i], uri)) return (LV2_URID)(i + 1);
  if (nuris == MAX_URIDS) return 0;
  uris[nuris] = strdup(uri);
  return (LV2_URID)++nuris;
}

static const char *unmap_urid(LV2_URID_Unmap_Handle handle, LV2_URID urid) {
  (void)handle;
  return urid >= 1 && (int)urid <= nuris ? uris[urid - 1] : NULL;
}

/* Control port values for lilv's state calls: the instance's own control array. */
typedef struct { const LilvPlugin *plugin; LilvWorld *world; float *controls; LV2_URID float_type; } PortContext;

static const void *get_port_value(const char *symbol, void *data, uint32_t *size, uint32_t *type) {
  PortContext *c = data;
  LilvNode *sym = lilv_new_string(c->world, symbol);
  const LilvPort *port = lilv_plugin_get_port_by_symbol(c->plugin, sym);
  lilv_node_free(sym);
  LilvNode *control = lilv_new_uri(c->world, LV2_CORE__ControlPort), *input = lilv_new_uri(c->world, LV2_CORE__InputPort);
  int is_control = port && lilv_port_is_a(c->plugin, port, control) && lilv_port_is_a(c->plugin, port, input);
  lilv_node_free(control); lilv_node_free(input);
  if (!is_control) { *size = 0; *type = 0; return NULL; }
  *size = sizeof(float); *type = c->float_type;
  return &c->controls[lilv_port_get_index(c->plugin, port)];
}

static void set_port_value(const char *symbol, void *data, const void *value, uint32_t size, uint32_t type) {
  PortContext *c = data;
  LilvNode *sym = lilv_new_string(c->world, symbol);
  const LilvPort *port = lilv_plugin_get_port_by_symbol(c->plugin, sym);
  lilv_node_free(sym);
  if (!port || size != sizeof(float) || type != c->float_type) { fprintf(stderr, "lv2host: state sets port %s oddly\n", symbol); exit(2); }
  memcpy(&c->controls[lilv_port_get_index(c->plugin, port)], value, sizeof(float));
}

static void fail(const char *what) { fprintf(stderr, "lv2host: %s\n", what); exit(2); }

/* An event for the atom input: MIDI bytes, or a patch:Set (property, path) or a patch:Get. */
typedef enum { MIDI, PATCH_SET, PATCH_GET } Kind;
typedef struct { long frame; Kind kind; uint8_t bytes[3]; const char *property, *path; } Event;
typedef struct { long frame; char symbol[64]; float value; } Set;

/* The worker, run synchronously: schedule_work calls work() at once; its responses wait in a queue
   until the block's run() has returned, then go to work_response() in order (a response may
   schedule more work, whose responses join the queue). */
#define MAX_RESPONSES 64
#define RESPONSE_BYTES 4096
typedef struct {
  LV2_Handle handle;
  const LV2_Worker_Interface *iface;
  int count;
  uint32_t sizes[MAX_RESPONSES];
  unsigned char data[MAX_RESPONSES][RESPONSE_BYTES];
} Worker;

static LV2_Worker_Status respond(LV2_Worker_Respond_Handle handle, uint32_t size, const void *data) {
  Worker *w = handle;
  if (w->count == MAX_RESPONSES || size > RESPONSE_BYTES) return LV2_WORKER_ERR_NO_SPACE;
  memcpy(w->data[w->count], data, size);
  w->sizes[w->count++] = size;
  return LV2_WORKER_SUCCESS;
}

static LV2_Worker_Status schedule_work(LV2_Worker_Schedule_Handle handle, uint32_t size, const void *data) {
  Worker *w = handle;
  if (!w->iface || !w->iface->work) return LV2_WORKER_ERR_UNKNOWN;
  return w->iface->work(w->handle, respond, w, size, data);
}

static void deliver_responses(Worker *w) {
  static unsigned char body[RESPONSE_BYTES];
  while (w->count > 0) {
    uint32_t size = w->sizes[0];
    memcpy(body, w->data[0], size);
    w->count--;
    memmove(w->sizes, w->sizes + 1, (size_t)w->count * sizeof w->sizes[0]);
    memmove(w->data, w->data + 1, (size_t)w->count * RESPONSE_BYTES);
    if (w->iface->work_response) w->iface->work_response(w->handle, size, body);
  }
  if (w->iface->end_run) w->iface->end_run(w->handle);
}

static int log_vprintf(LV2_Log_Handle handle, LV2_URID type, const char *format, va_list args) {
  (void)handle; (void)type;
  fputs("lv2host: log: ", stderr);
  return vfprintf(stderr, format, args);
}

static int log_printf(LV2_Log_Handle handle, LV2_URID type, const char *format, ...) {
  va_list args;
  va_start(args, format);
  int n = log_vprintf(handle, type, format, args);
  va_end(args);
  return n;
}

/* Appends one event (its time and its atom) to a sequence of SEQ_BYTES. */
static void append_event(LV2_Atom_Sequence *seq, long frames, const LV2_Atom *body) {
  uint32_t size = (uint32_t)lv2_atom_pad_size(sizeof(LV2_Atom_Event) + body->size);
  if (sizeof(LV2_Atom) + seq->atom.size + size > SEQ_BYTES) fail("too many events in one block");
  LV2_Atom_Event *ev = lv2_atom_sequence_end(&seq->body, seq->atom.size);
  memset(ev, 0, size);
  ev->time.frames = frames;
  memcpy(&ev->body, body, sizeof(LV2_Atom) + body->size);
  seq->atom.size += size;
}

int main(int argc, char **argv) {
  if (argc < 7) fail("usage: lv2host BUNDLE_DIR PLUGIN_URI EVENTS FRAMES BLOCK OUT.wav [-n N] [-s FRAME SYMBOL VALUE]...");
  const char *bundle = argv[1], *uri = argv[2], *events_path = argv[3], *out_path = argv[6];
  long frames = atol(argv[4]), block = atol(argv[5]);
  int count = 1, nsets = 0, npatches = 0;
  const char *save_path = NULL, *restore_path = NULL;
  Set sets[MAX_SETS];
  Event patches[MAX_SETS];
  for (int a = 7; a < argc; a++) {
    if (!strcmp(argv[a], "-n") && a + 1 < argc) count = atoi(argv[++a]);
    else if (!strcmp(argv[a], "-p") && a + 3 < argc && npatches < MAX_SETS) {
      patches[npatches++] = (Event){ .frame = atol(argv[a + 1]), .kind = PATCH_SET, .property = argv[a + 2], .path = argv[a + 3] };
      a += 3;
    } else if (!strcmp(argv[a], "-g") && a + 1 < argc && npatches < MAX_SETS) {
      patches[npatches++] = (Event){ .frame = atol(argv[a + 1]), .kind = PATCH_GET };
      a += 1;
    }
    else if (!strcmp(argv[a], "--save") && a + 1 < argc) save_path = argv[++a];
    else if (!strcmp(argv[a], "--restore") && a + 1 < argc) restore_path = argv[++a];
    else if (!strcmp(argv[a], "-s") && a + 3 < argc && nsets < MAX_SETS) {
      sets[nsets].frame = atol(argv[a + 1]);
      snprintf(sets[nsets].symbol, sizeof sets[nsets].symbol, "%s", argv[a + 2]);
      sets[nsets].value = strtof(argv[a + 3], NULL);
      if (sets[nsets].frame % block) fail("-s FRAME must start a block");
      nsets++; a += 3;
    } else fail("unknown option");
  }
  if (frames <= 0 || block <= 0 || block > 8192 || count < 1 || count > MAX_INSTANCES) fail("bad FRAMES, BLOCK or -n");

  /* the events */
  FILE *ef = fopen(events_path, "r");
  if (!ef) fail("cannot open the events file");
  size_t nevents = 0, cap = 1024;
  Event *events = malloc(cap * sizeof *events);
  unsigned s, d1, d2;
  long f;
  while (fscanf(ef, "%ld %u %u %u", &f, &s, &d1, &d2) == 4) {
    if (nevents == cap) events = realloc(events, (cap *= 2) * sizeof *events);
    events[nevents++] = (Event){ .frame = f, .kind = MIDI, .bytes = { (uint8_t)s, (uint8_t)d1, (uint8_t)d2 } };
  }
  fclose(ef);
  /* the patch messages, each before the MIDI events of its frame, in the order given */
  for (int p = 0; p < npatches; p++) {
    if (nevents == cap) events = realloc(events, (cap *= 2) * sizeof *events);
    size_t at = 0;
    while (at < nevents && (events[at].frame < patches[p].frame || (events[at].frame == patches[p].frame && events[at].kind != MIDI))) at++;
    memmove(events + at + 1, events + at, (nevents - at) * sizeof *events);
    events[at] = patches[p];
    nevents++;
  }

  /* the plugin */
  LilvWorld *world = lilv_world_new();
  lilv_world_load_specifications(world);
  char *bundle_path = realpath(bundle, NULL), bundle_uri[4096];
  if (!bundle_path) fail("no such bundle folder");
  snprintf(bundle_uri, sizeof bundle_uri, "file://%s/", bundle_path);
  LilvNode *bnode = lilv_new_uri(world, bundle_uri);
  lilv_world_load_bundle(world, bnode);
  LilvNode *unode = lilv_new_uri(world, uri);
  const LilvPlugin *plugin = lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), unode);
  if (!plugin) fail("the bundle has no such plugin");
  LV2_URID_Map map = { NULL, map_uri };
  LV2_URID_Unmap unmap = { NULL, unmap_urid };
  LV2_Feature map_feature = { LV2_URID__map, &map }, unmap_feature = { LV2_URID__unmap, &unmap };
  LV2_Log_Log log = { NULL, log_printf, log_vprintf };
  LV2_Feature log_feature = { LV2_LOG__log, &log };
  static Worker workers[MAX_INSTANCES];
  LV2_Worker_Schedule schedules[MAX_INSTANCES];
  LV2_Feature schedule_features[MAX_INSTANCES];
  const LV2_Feature *features[MAX_INSTANCES][5];
  LilvNode *audio = lilv_new_uri(world, LV2_CORE__AudioPort), *control = lilv_new_uri(world, LV2_CORE__ControlPort),
           *atom = lilv_new_uri(world, LV2_ATOM__AtomPort), *output = lilv_new_uri(world, LV2_CORE__OutputPort);
  uint32_t nports = lilv_plugin_get_num_ports(plugin);
  float *defaults = calloc(nports, sizeof *defaults);
  lilv_plugin_get_port_ranges_float(plugin, NULL, NULL, defaults);

  LilvInstance *inst[MAX_INSTANCES];
  float *controls[MAX_INSTANCES], *outs[MAX_INSTANCES][2];
  LV2_Atom_Sequence *seq[MAX_INSTANCES], *notify[MAX_INSTANCES];
  for (int k = 0; k < count; k++) {
    schedules[k] = (LV2_Worker_Schedule){ &workers[k], schedule_work };
    schedule_features[k] = (LV2_Feature){ LV2_WORKER__schedule, &schedules[k] };
    features[k][0] = &map_feature; features[k][1] = &unmap_feature; features[k][2] = &log_feature;
    features[k][3] = &schedule_features[k]; features[k][4] = NULL;
    inst[k] = lilv_plugin_instantiate(plugin, 48000, features[k]);
    if (!inst[k]) fail("instantiate failed");
    workers[k].handle = lilv_instance_get_handle(inst[k]);
    workers[k].iface = lilv_instance_get_extension_data(inst[k], LV2_WORKER__interface);
    controls[k] = calloc(nports, sizeof(float));
    seq[k] = aligned_alloc(8, SEQ_BYTES);
    notify[k] = aligned_alloc(8, SEQ_BYTES);
    int nout = 0;
    for (uint32_t i = 0; i < nports; i++) {
      const LilvPort *port = lilv_plugin_get_port_by_index(plugin, i);
      if (lilv_port_is_a(plugin, port, control)) {
        controls[k][i] = defaults[i];
        lilv_instance_connect_port(inst[k], i, &controls[k][i]);
      } else if (lilv_port_is_a(plugin, port, audio) && lilv_port_is_a(plugin, port, output) && nout < 2) {
        outs[k][nout] = calloc((size_t)block, sizeof(float));
        lilv_instance_connect_port(inst[k], i, outs[k][nout++]);
      } else if (lilv_port_is_a(plugin, port, atom)) {
        lilv_instance_connect_port(inst[k], i, lilv_port_is_a(plugin, port, output) ? notify[k] : seq[k]);
      }
    }
    if (nout != 2) fail("the plugin does not have two audio outputs");
    lilv_instance_activate(inst[k]);
  }
  PortContext contexts[MAX_INSTANCES];
  for (int k = 0; k < count; k++)
    contexts[k] = (PortContext){ plugin, world, controls[k], map_uri(NULL, LV2_ATOM__Float) };
  if (restore_path) {
    FILE *rf = fopen(restore_path, "r");
    if (!rf) fail("cannot open the state to restore");
    static char text[1 << 23];
    size_t n = fread(text, 1, sizeof text - 1, rf);
    fclose(rf);
    text[n] = 0;
    LilvState *state = lilv_state_new_from_string(world, &map, text);
    if (!state) fail("the state file does not read as a state");
    for (int k = 0; k < count; k++) lilv_state_restore(state, inst[k], set_port_value, &contexts[k], 0, features[k]);
    lilv_state_free(state);
  }
  uint32_t set_ports[MAX_SETS];
  for (int i = 0; i < nsets; i++) {
    LilvNode *sym = lilv_new_string(world, sets[i].symbol);
    const LilvPort *port = lilv_plugin_get_port_by_symbol(plugin, sym);
    lilv_node_free(sym);
    if (!port) fail("-s: no port with that symbol");
    set_ports[i] = lilv_port_get_index(plugin, port);
  }

  SF_INFO info = { .samplerate = 48000, .channels = 2, .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT };
  SNDFILE *out = sf_open(out_path, SFM_WRITE, &info);
  if (!out) fail(sf_strerror(NULL));
  float *frame_buf = malloc(2 * (size_t)block * sizeof(float));
  LV2_URID sequence_type = map_uri(NULL, LV2_ATOM__Sequence), midi_type = map_uri(NULL, LV2_MIDI__MidiEvent);
  LV2_URID patch_set = map_uri(NULL, LV2_PATCH__Set), patch_get = map_uri(NULL, LV2_PATCH__Get),
           patch_property = map_uri(NULL, LV2_PATCH__property), patch_value = map_uri(NULL, LV2_PATCH__value),
           path_type = map_uri(NULL, LV2_ATOM__Path), chunk_type = map_uri(NULL, LV2_ATOM__Chunk);
  LV2_Atom_Forge forge;
  lv2_atom_forge_init(&forge, &map);
  static uint8_t message[SEQ_BYTES];
  size_t next = 0;
  int status = 0;
  for (long start = 0; start < frames; start += block) {
    long n = frames - start < block ? frames - start : block;
    for (int i = 0; i < nsets; i++)
      if (sets[i].frame == start)
        for (int k = 0; k < count; k++) controls[k][set_ports[i]] = sets[i].value;
    size_t first = next;
    while (next < nevents && events[next].frame < start + n) next++;
    for (int k = 0; k < count; k++) {
      seq[k]->atom.type = sequence_type;
      seq[k]->atom.size = sizeof(LV2_Atom_Sequence_Body);
      seq[k]->body.unit = 0;
      seq[k]->body.pad = 0;
      for (size_t e = first; e < next; e++) {
        if (events[e].kind == MIDI) {
          struct { LV2_Atom atom; uint8_t bytes[8]; } midi = { { 0, midi_type }, { 0 } };
          midi.atom.size = (events[e].bytes[0] & 0xF0) == 0xC0 || (events[e].bytes[0] & 0xF0) == 0xD0 ? 2 : 3;
          memcpy(midi.bytes, events[e].bytes, 3);
          append_event(seq[k], events[e].frame - start, &midi.atom);
          continue;
        }
        /* a patch message, as a host's generic interface forges it */
        lv2_atom_forge_set_buffer(&forge, message, sizeof message);
        LV2_Atom_Forge_Frame object;
        LV2_Atom_Forge_Ref ref = lv2_atom_forge_object(&forge, &object, 0, events[e].kind == PATCH_SET ? patch_set : patch_get);
        if (events[e].kind == PATCH_SET) {
          lv2_atom_forge_key(&forge, patch_property);
          lv2_atom_forge_urid(&forge, map_uri(NULL, events[e].property));
          lv2_atom_forge_key(&forge, patch_value);
          lv2_atom_forge_path(&forge, events[e].path, (uint32_t)strlen(events[e].path));
        }
        lv2_atom_forge_pop(&forge, &object);
        if (!ref) fail("a patch message does not fit");
        append_event(seq[k], events[e].frame - start, (const LV2_Atom *)message);
      }
      notify[k]->atom.type = chunk_type;
      notify[k]->atom.size = SEQ_BYTES - sizeof(LV2_Atom);
      lilv_instance_run(inst[k], (uint32_t)n);
      if (k == 0 && notify[0]->atom.type == sequence_type) {
        LV2_ATOM_SEQUENCE_FOREACH(notify[0], ev) {
          const LV2_Atom_Object *obj = (const LV2_Atom_Object *)&ev->body;
          if (!lv2_atom_forge_is_object_type(&forge, obj->atom.type) || obj->body.otype != patch_set) continue;
          const LV2_Atom *property = NULL, *value = NULL;
          lv2_atom_object_get(obj, patch_property, &property, patch_value, &value, 0);
          if (property && property->type == forge.URID && value && value->type == path_type)
            fprintf(stderr, "lv2host: notify: %s %.*s\n", unmap_urid(NULL, ((const LV2_Atom_URID *)property)->body),
                    (int)value->size, (const char *)LV2_ATOM_BODY_CONST(value));
        }
      }
      if (workers[k].iface) deliver_responses(&workers[k]);
    }
    for (int k = 1; k < count && !status; k++)
      for (long i = 0; i < n; i++)
        if (outs[k][0][i] != outs[0][0][i] || outs[k][1][i] != outs[0][1][i]) {
          fprintf(stderr, "lv2host: instance %d differs from instance 0 at frame %ld\n", k, start + i);
          status = 1;
          break;
        }
    for (long i = 0; i < n; i++) { frame_buf[2 * i] = outs[0][0][i]; frame_buf[2 * i + 1] = outs[0][1][i]; }
    if (sf_writef_float(out, frame_buf, n) != n) fail(sf_strerror(out));
  }
  if (sf_close(out) != 0) fail("closing the output failed");
  if (save_path) {
    LilvState *state = lilv_state_new_from_instance(plugin, inst[0], &map, NULL, NULL, NULL, NULL, get_port_value, &contexts[0],
                                                    LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE, features[0]);
    if (!state) fail("the plugin's state could not be taken");
    char *text = lilv_state_to_string(world, &map, &unmap, state, "urn:toneshaper:test:saved", NULL);
    FILE *sf = fopen(save_path, "w");
    if (!text || !sf || fputs(text, sf) < 0 || fclose(sf) != 0) fail("cannot write the state");
    lilv_free(text);
    lilv_state_free(state);
  }
  for (int k = 0; k < count; k++) { lilv_instance_deactivate(inst[k]); lilv_instance_free(inst[k]); }
  lilv_world_free(world);
  return status;
}
