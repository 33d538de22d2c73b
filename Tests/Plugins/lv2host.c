/* A headless LV2 host over lilv for the plugin tests: loads one bundle, runs N instances of its
   plugin side by side in blocks of B frames, sends each the same MIDI events (from a file of
   "FRAME STATUS DATA1 DATA2" lines) at their frames, optionally moves a control before the block
   that starts at a frame, and writes instance 0's output as a 32-bit float WAV. Every instance
   must produce the same samples: the first difference is reported and the exit status is 1.

   --save FILE writes instance 0's state (lilv: its ports and the plugin's state:interface) after the
   last block; --restore FILE restores every instance from such a file before the first block.

   Usage: lv2host BUNDLE_DIR PLUGIN_URI EVENTS FRAMES BLOCK OUT.wav [-n INSTANCES] [-s FRAME SYMBOL VALUE]...
                  [--save FILE] [--restore FILE] */
#include <lilv/lilv.h>
#include <lv2/atom/atom.h>
#include <lv2/atom/util.h>
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

typedef struct { long frame; uint8_t bytes[3]; } Event;
typedef struct { long frame; char symbol[64]; float value; } Set;

int main(int argc, char **argv) {
  if (argc < 7) fail("usage: lv2host BUNDLE_DIR PLUGIN_URI EVENTS FRAMES BLOCK OUT.wav [-n N] [-s FRAME SYMBOL VALUE]...");
  const char *bundle = argv[1], *uri = argv[2], *events_path = argv[3], *out_path = argv[6];
  long frames = atol(argv[4]), block = atol(argv[5]);
  int count = 1, nsets = 0;
  const char *save_path = NULL, *restore_path = NULL;
  Set sets[MAX_SETS];
  for (int a = 7; a < argc; a++) {
    if (!strcmp(argv[a], "-n") && a + 1 < argc) count = atoi(argv[++a]);
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
    events[nevents++] = (Event){ f, { (uint8_t)s, (uint8_t)d1, (uint8_t)d2 } };
  }
  fclose(ef);

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
  const LV2_Feature *features[] = { &map_feature, &unmap_feature, NULL };
  LilvNode *audio = lilv_new_uri(world, LV2_CORE__AudioPort), *control = lilv_new_uri(world, LV2_CORE__ControlPort),
           *atom = lilv_new_uri(world, LV2_ATOM__AtomPort), *output = lilv_new_uri(world, LV2_CORE__OutputPort);
  uint32_t nports = lilv_plugin_get_num_ports(plugin);
  float *defaults = calloc(nports, sizeof *defaults);
  lilv_plugin_get_port_ranges_float(plugin, NULL, NULL, defaults);

  LilvInstance *inst[MAX_INSTANCES];
  float *controls[MAX_INSTANCES], *outs[MAX_INSTANCES][2];
  LV2_Atom_Sequence *seq[MAX_INSTANCES];
  for (int k = 0; k < count; k++) {
    inst[k] = lilv_plugin_instantiate(plugin, 48000, features);
    if (!inst[k]) fail("instantiate failed");
    controls[k] = calloc(nports, sizeof(float));
    seq[k] = aligned_alloc(8, SEQ_BYTES);
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
        lilv_instance_connect_port(inst[k], i, seq[k]);
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
    for (int k = 0; k < count; k++) lilv_state_restore(state, inst[k], set_port_value, &contexts[k], 0, features);
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
        struct { LV2_Atom_Event header; uint8_t bytes[8]; } ev;
        memset(&ev, 0, sizeof ev);
        ev.header.time.frames = events[e].frame - start;
        ev.header.body.type = midi_type;
        ev.header.body.size = (events[e].bytes[0] & 0xF0) == 0xC0 || (events[e].bytes[0] & 0xF0) == 0xD0 ? 2 : 3;
        memcpy(ev.bytes, events[e].bytes, 3);
        uint32_t size = (uint32_t)lv2_atom_pad_size(sizeof(LV2_Atom_Event) + ev.header.body.size);
        if (sizeof(LV2_Atom) + seq[k]->atom.size + size > SEQ_BYTES) fail("too many events in one block");
        memcpy(lv2_atom_sequence_end(&seq[k]->body, seq[k]->atom.size), &ev, size);
        seq[k]->atom.size += size;
      }
      lilv_instance_run(inst[k], (uint32_t)n);
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
                                                    LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE, features);
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
