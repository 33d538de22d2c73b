/* A headless CLAP host for the plugin tests, written against the CLAP 1.1.1 headers alone (Debian's
   dpf-source): it loads one .clap with dlopen(RTLD_LOCAL), checks what the plugin says it is, runs N
   instances side by side in blocks of B frames, sends each the same events at their frames and
   writes instance 0's output as a 32-bit float stereo WAV. Every instance must produce the same
   samples, and every sample must be written and finite: otherwise the first fault is reported and
   the exit status is 1. Exit 2: the plugin or the command line is unusable.

   Events come from a file of "FRAME STATUS DATA1 DATA2" lines (midi_events.py). By default each is
   sent as CLAP_EVENT_MIDI; with --notes, note on/off go as CLAP_EVENT_NOTE_ON/OFF with a note id per
   note and velocity v/127, the rest as MIDI.
     -s FRAME NAME VALUE   the parameter called NAME (found by name through the params extension)
                           set to VALUE (plain, in its range) by a CLAP_EVENT_PARAM_VALUE at FRAME
     -e FRAME KEY EXPR VALUE  a note expression (tuning, pressure, brightness, volume, pan,
                           vibrato, expression) at FRAME on the sounding note of KEY, addressed by
                           its note id (--notes) or by key and channel (MIDI)
     --save FILE           the state of instance 0 after the last block (clap.state, through a
                           clap_ostream that takes at most 4093 bytes a call)
     --restore FILE        every instance loads FILE before it is activated (a clap_istream that
                           gives at most 4093 bytes a call)
     --note-ends           with --notes: every note must be ended by a CLAP_EVENT_NOTE_END of its
                           id, once, by the last frame, and no other id
     --hostile             also, and none of it may crash: parameter queries out of range, state
                           bytes that are garbage, empty, truncated, endless or an erroring stream
                           (each must be refused, then a good state still loads), a zero-frame
                           process call before every block, unknown event types, other event
                           spaces, parameter ids that do not exist, NaN values, keys/channels/ports
                           out of range, events out of order and past the block, params.flush
                           between blocks with the same, an activation at another rate first
                           and a reset half way
   claphost PLUGIN.clap PLUGIN_ID --describe   prints the descriptor, ports and parameters.

   Usage: claphost PLUGIN.clap PLUGIN_ID EVENTS FRAMES BLOCK OUT.wav [-n INSTANCES] [--notes]
                   [-s FRAME NAME VALUE]... [-e FRAME KEY EXPR VALUE]... [--save FILE] [--restore FILE]
                   [--note-ends] [--hostile] */
#include <clap/entry.h>
#include <clap/events.h>
#include <clap/ext/audio-ports.h>
#include <clap/ext/note-ports.h>
#include <clap/ext/params.h>
#include <clap/ext/state.h>
#include <clap/ext/thread-check.h>
#include <clap/host.h>
#include <clap/plugin-factory.h>
#include <clap/plugin.h>
#include <clap/process.h>
#include <clap/version.h>
#include <dlfcn.h>
#include <math.h>
#include <sndfile.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INSTANCES 64
#define MAX_SETS 64
#define MAX_BLOCK 4096
#define MAX_BLOCK_EVENTS 4096
#define MAX_STATE_BYTES (64u << 20) /* a state larger than this is a runaway plugin */
#define STREAM_CHUNK 4093           /* partial reads and writes, as streams may give them */

static void fail(const char *format, ...) {
  va_list args;
  va_start(args, format);
  fputs("claphost: ", stderr);
  vfprintf(stderr, format, args);
  fputc('\n', stderr);
  va_end(args);
  exit(2);
}

/* --- the host's side: what the plugin may ask of it ------------------------------------------- */

static int in_process;         /* single-threaded: "audio thread" while inside process() */
static int callback_requested; /* request_callback: on_main_thread after the block */
static int restart_requested, params_rescanned, dirty_marks, flush_requests;

static bool host_is_main_thread(const clap_host_t *h) { (void)h; return !in_process; }
static bool host_is_audio_thread(const clap_host_t *h) { (void)h; return in_process; }
static const clap_host_thread_check_t host_thread_check = { host_is_main_thread, host_is_audio_thread };
static void host_params_rescan(const clap_host_t *h, clap_param_rescan_flags f) { (void)h; (void)f; params_rescanned++; }
static void host_params_clear(const clap_host_t *h, clap_id id, clap_param_clear_flags f) { (void)h; (void)id; (void)f; }
static void host_params_request_flush(const clap_host_t *h) { (void)h; flush_requests++; }
static const clap_host_params_t host_params = { host_params_rescan, host_params_clear, host_params_request_flush };
static void host_mark_dirty(const clap_host_t *h) { (void)h; dirty_marks++; }
static const clap_host_state_t host_state = { host_mark_dirty };
static uint32_t host_note_dialects(const clap_host_t *h) { (void)h; return CLAP_NOTE_DIALECT_CLAP | CLAP_NOTE_DIALECT_MIDI; }
static void host_note_rescan(const clap_host_t *h, uint32_t f) { (void)h; (void)f; }
static const clap_host_note_ports_t host_note_ports = { host_note_dialects, host_note_rescan };
static bool host_audio_flag(const clap_host_t *h, uint32_t f) { (void)h; (void)f; return false; }
static void host_audio_rescan(const clap_host_t *h, uint32_t f) { (void)h; (void)f; }
static const clap_host_audio_ports_t host_audio_ports = { host_audio_flag, host_audio_rescan };

static const void *host_get_extension(const clap_host_t *h, const char *id) {
  (void)h;
  if (!id) return NULL;
  if (!strcmp(id, CLAP_EXT_THREAD_CHECK)) return &host_thread_check;
  if (!strcmp(id, CLAP_EXT_PARAMS)) return &host_params;
  if (!strcmp(id, CLAP_EXT_STATE)) return &host_state;
  if (!strcmp(id, CLAP_EXT_NOTE_PORTS)) return &host_note_ports;
  if (!strcmp(id, CLAP_EXT_AUDIO_PORTS)) return &host_audio_ports;
  return NULL; /* the rest (gui, latency, timer, log…) this host does not offer */
}
static void host_request_restart(const clap_host_t *h) { (void)h; restart_requested++; }
static void host_request_process(const clap_host_t *h) { (void)h; }
static void host_request_callback(const clap_host_t *h) { (void)h; callback_requested = 1; }
static const clap_host_t host = { CLAP_VERSION_INIT, NULL, "claphost", "ToneShaper tests", "", "1",
                                  host_get_extension, host_request_restart, host_request_process, host_request_callback };

/* --- event lists -------------------------------------------------------------------------------- */

/* One slot holds any event this host sends, so a plugin that misreads a size still reads our memory. */
typedef union {
  clap_event_header_t header;
  clap_event_note_t note;
  clap_event_note_expression_t expression;
  clap_event_param_value_t value;
  clap_event_param_mod_t mod;
  clap_event_midi_t midi;
  clap_event_midi_sysex_t sysex;
  clap_event_midi2_t midi2;
  clap_event_transport_t transport;
} Slot;

typedef struct { Slot slots[MAX_BLOCK_EVENTS]; uint32_t count; } EventList;
static uint32_t list_size(const clap_input_events_t *l) { return ((const EventList *)l->ctx)->count; }
static const clap_event_header_t *list_get(const clap_input_events_t *l, uint32_t i) {
  const EventList *e = l->ctx;
  return i < e->count ? &e->slots[i].header : NULL;
}
static Slot *list_add(EventList *e, uint32_t time, uint16_t space, uint16_t type, uint32_t size) {
  if (e->count == MAX_BLOCK_EVENTS) fail("more than %d events in one block", MAX_BLOCK_EVENTS);
  Slot *s = &e->slots[e->count++];
  memset(s, 0, sizeof *s);
  s->header = (clap_event_header_t){ size, time, space, type, 0 };
  return s;
}

/* What an instance sends back: a sane header, and a NOTE_END (CLAP: when a voice has ended) counted
   per note id the host gave, once a note; an end for an id never given is stray. */
static int32_t next_note_id; /* the ids given so far: 0..<next_note_id */
typedef struct { clap_output_events_t list; unsigned *ended; long events, anonymous_ends, stray_ends; } Output;
static bool out_try_push(const clap_output_events_t *l, const clap_event_header_t *e) {
  Output *o = l->ctx;
  if (!e || e->size < sizeof(clap_event_header_t)) fail("the plugin pushed an event with no header");
  o->events++;
  if (e->space_id == CLAP_CORE_EVENT_SPACE_ID && e->type == CLAP_EVENT_NOTE_END) {
    if (e->size < sizeof(clap_event_note_t)) fail("the plugin pushed a NOTE_END of %u bytes", e->size);
    int32_t id = ((const clap_event_note_t *)e)->note_id;
    if (id == -1) o->anonymous_ends++;
    else if (id >= 0 && id < next_note_id) o->ended[id]++;
    else o->stray_ends++;
  }
  return true;
}

/* --- state streams ------------------------------------------------------------------------------ */

typedef struct { unsigned char *bytes; size_t size, capacity, at; int mode; } Stream;
enum { STREAM_BYTES, STREAM_ERROR, STREAM_ENDLESS, STREAM_ONE_BYTE };

static int64_t stream_write(const clap_ostream_t *o, const void *buffer, uint64_t size) {
  Stream *s = o->ctx;
  if (!buffer && size) return -1;
  if (size > STREAM_CHUNK) size = STREAM_CHUNK;
  if (s->size + size > MAX_STATE_BYTES) fail("the plugin's state grows past %u bytes", MAX_STATE_BYTES);
  if (s->size + size > s->capacity) {
    size_t capacity = s->capacity ? s->capacity * 2 : 65536;
    while (capacity < s->size + size) capacity *= 2;
    unsigned char *bytes = realloc(s->bytes, capacity);
    if (!bytes) fail("out of memory");
    s->bytes = bytes;
    s->capacity = capacity;
  }
  memcpy(s->bytes + s->size, buffer, size);
  s->size += size;
  return (int64_t)size;
}

static int64_t stream_read(const clap_istream_t *i, void *buffer, uint64_t size) {
  Stream *s = i->ctx;
  if (!buffer && size) return -1;
  if (size > STREAM_CHUNK) size = STREAM_CHUNK;
  switch (s->mode) {
  case STREAM_ERROR: return -1;
  case STREAM_ENDLESS: /* '[' for ever: a plugin that reads without a bound never returns */
    if (s->at > 4 * (size_t)MAX_STATE_BYTES) fail("the plugin read %zu bytes of an endless state", s->at);
    memset(buffer, '[', size);
    s->at += size;
    return (int64_t)size;
  case STREAM_ONE_BYTE: if (size > 1) size = 1; /* fall through */
  default:
    if (size > s->size - s->at) size = s->size - s->at;
    memcpy(buffer, s->bytes + s->at, size);
    s->at += size;
    return (int64_t)size;
  }
}

static Stream save_state(const clap_plugin_t *p, const clap_plugin_state_t *state) {
  Stream s = { 0 };
  clap_ostream_t o = { &s, stream_write };
  if (!state->save(p, &o)) fail("the plugin refused to save its state");
  if (s.size == 0) fail("the plugin saved an empty state");
  return s;
}

static bool load_state(const clap_plugin_t *p, const clap_plugin_state_t *state, const unsigned char *bytes, size_t size, int mode) {
  Stream s = { (unsigned char *)bytes, size, size, 0, mode };
  clap_istream_t i = { &s, stream_read };
  return state->load(p, &i);
}

/* --- the plugin's extensions, checked ------------------------------------------------------------ */

typedef struct {
  const clap_plugin_t *plugin;
  const clap_plugin_params_t *params;
  const clap_plugin_state_t *state;
  const clap_plugin_note_ports_t *note_ports;
  const clap_plugin_audio_ports_t *audio_ports;
  float *out[2];
  Output output;
} Instance;

static const void *extension(const clap_plugin_t *p, const char *id) {
  const void *e = p->get_extension(p, id);
  if (!e) fail("the plugin has no %s extension", id);
  return e;
}

static void check_ports(Instance *in, int notes) {
  const clap_plugin_t *p = in->plugin;
  if (!in->note_ports->count || !in->note_ports->get) fail("note-ports: missing functions");
  if (in->note_ports->count(p, true) < 1) fail("note-ports: no note input");
  clap_note_port_info_t note;
  memset(&note, 0, sizeof note);
  if (!in->note_ports->get(p, 0, true, &note)) fail("note-ports: get(0, input) failed");
  uint32_t want = notes ? CLAP_NOTE_DIALECT_CLAP : CLAP_NOTE_DIALECT_MIDI;
  if (!(note.supported_dialects & want)) fail("note-ports: input 0 does not take %s", notes ? "CLAP notes" : "MIDI");
  if (!in->audio_ports->count || !in->audio_ports->get) fail("audio-ports: missing functions");
  if (in->audio_ports->count(p, false) < 1) fail("audio-ports: no audio output");
  clap_audio_port_info_t audio;
  memset(&audio, 0, sizeof audio);
  if (!in->audio_ports->get(p, 0, false, &audio)) fail("audio-ports: get(0, output) failed");
  if (audio.channel_count != 2) fail("audio-ports: output 0 has %u channels, not 2", audio.channel_count);
}

/* The id of the parameter called name, and its range. */
static clap_id find_param(const Instance *in, const char *name, double *min, double *max) {
  uint32_t count = in->params->count(in->plugin);
  for (uint32_t i = 0; i < count; i++) {
    clap_param_info_t info;
    memset(&info, 0, sizeof info);
    if (!in->params->get_info(in->plugin, i, &info)) fail("params: get_info(%u) failed (count %u)", i, count);
    info.name[sizeof info.name - 1] = 0;
    if (!strcmp(info.name, name)) { *min = info.min_value; *max = info.max_value; return info.id; }
  }
  fail("params: no parameter named '%s'", name);
  return CLAP_INVALID_ID;
}

static void describe(const clap_plugin_descriptor_t *d, Instance *in) {
  printf("id %s\nname %s\nvendor %s\nversion %s\nfeatures", d->id, d->name, d->vendor ? d->vendor : "",
         d->version ? d->version : "");
  for (const char *const *f = d->features; f && *f; f++) printf(" %s", *f);
  printf("\n");
  clap_note_port_info_t note;
  memset(&note, 0, sizeof note);
  if (in->note_ports->get(in->plugin, 0, true, &note))
    printf("note-input dialects%s%s%s preferred %u\n", note.supported_dialects & CLAP_NOTE_DIALECT_CLAP ? " clap" : "",
           note.supported_dialects & CLAP_NOTE_DIALECT_MIDI ? " midi" : "",
           note.supported_dialects & CLAP_NOTE_DIALECT_MIDI_MPE ? " midi-mpe" : "", note.preferred_dialect);
  printf("note-ports in %u out %u\n", in->note_ports->count(in->plugin, true), in->note_ports->count(in->plugin, false));
  printf("audio-ports in %u out %u\n", in->audio_ports->count(in->plugin, true), in->audio_ports->count(in->plugin, false));
  uint32_t count = in->params->count(in->plugin);
  for (uint32_t i = 0; i < count; i++) {
    clap_param_info_t info;
    memset(&info, 0, sizeof info);
    if (!in->params->get_info(in->plugin, i, &info)) fail("params: get_info(%u) failed", i);
    info.name[sizeof info.name - 1] = 0;
    double value = NAN;
    char text[64] = "";
    if (!in->params->get_value(in->plugin, info.id, &value)) fail("params: get_value(%u) failed", info.id);
    if (!in->params->value_to_text(in->plugin, info.id, value, text, sizeof text)) text[0] = 0;
    text[sizeof text - 1] = 0;
    printf("param %u \"%s\" %g..%g default %g value %g \"%s\"%s%s%s%s\n", info.id, info.name, info.min_value, info.max_value,
           info.default_value, value, text, info.flags & CLAP_PARAM_IS_AUTOMATABLE ? " automatable" : "",
           info.flags & CLAP_PARAM_IS_STEPPED ? " stepped" : "", info.flags & CLAP_PARAM_IS_MODULATABLE ? " modulatable" : "",
           info.flags & CLAP_PARAM_IS_MODULATABLE_PER_NOTE_ID ? " per-note" : "");
  }
}

/* --- the hostile part ---------------------------------------------------------------------------- */

static uint32_t seed = 20261126;
static uint32_t rnd(void) { seed = seed * 1664525u + 1013904223u; return seed >> 8; }

/* Queries a host may make with values out of range, and states no plugin should accept. */
static void hostile_main_thread(Instance *in) {
  const clap_plugin_t *p = in->plugin;
  uint32_t count = in->params->count(p);
  clap_param_info_t info;
  double value = 0;
  char text[8];
  if (in->params->get_info(p, count, &info)) fail("hostile: params.get_info(count) answered");
  if (in->params->get_info(p, 0xFFFFFFFFu, &info)) fail("hostile: params.get_info(0xFFFFFFFF) answered");
  if (in->params->get_value(p, 0xDEADBEEFu, &value)) fail("hostile: params.get_value of id 0xDEADBEEF answered");
  in->params->get_value(p, CLAP_INVALID_ID, &value);
  in->params->value_to_text(p, 0xDEADBEEFu, 1, text, sizeof text);
  for (uint32_t i = 0; i < count; i++) {
    memset(&info, 0, sizeof info);
    if (!in->params->get_info(p, i, &info)) fail("params: get_info(%u) failed", i);
    const double values[] = { NAN, INFINITY, -INFINITY, 1e308, -1e308, info.min_value, info.max_value };
    for (size_t v = 0; v < sizeof values / sizeof *values; v++) {
      in->params->value_to_text(p, info.id, values[v], text, 0);
      in->params->value_to_text(p, info.id, values[v], text, 1);
      in->params->value_to_text(p, info.id, values[v], text, sizeof text);
    }
    static char longtext[100000];
    memset(longtext, '9', sizeof longtext - 1);
    const char *texts[] = { "", "nan", "-inf", "abc", "1e999", "\xff\xfe", longtext };
    for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) in->params->text_to_value(p, info.id, texts[t], &value);
  }

  Stream good = save_state(p, in->state);
  unsigned char garbage[5000];
  for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (unsigned char)rnd();
  unsigned char *flipped = malloc(good.size);
  if (!flipped) fail("out of memory");
  memcpy(flipped, good.bytes, good.size);
  size_t last = good.size; /* the last byte that is not white space: without it, no state */
  while (last > 1 && good.bytes[last - 1] && strchr(" \t\r\n", good.bytes[last - 1])) last--;
  last--;
  struct { const char *what; const unsigned char *bytes; size_t size; int mode; } bad[] = {
    { "random bytes", garbage, sizeof garbage, STREAM_BYTES },
    { "no bytes", garbage, 0, STREAM_BYTES },
    { "the first half of a good state", good.bytes, good.size / 2, STREAM_BYTES },
    { "a good state but its last byte", good.bytes, last, STREAM_BYTES },
    { "a stream that fails", good.bytes, good.size, STREAM_ERROR },
    { "an endless stream", NULL, 0, STREAM_ENDLESS },
  };
  for (size_t b = 0; b < sizeof bad / sizeof *bad; b++)
    if (load_state(p, in->state, bad[b].bytes, bad[b].size, bad[b].mode)) fail("hostile: the plugin accepted %s as its state", bad[b].what);
  for (int k = 0; k < 200; k++) { /* bytes flipped anywhere: refused or taken, never a crash */
    size_t at = rnd() % good.size;
    flipped[at] = (unsigned char)rnd();
    load_state(p, in->state, flipped, good.size, STREAM_BYTES);
    flipped[at] = good.bytes[at];
  }
  if (!load_state(p, in->state, good.bytes, good.size, STREAM_ONE_BYTE)) fail("hostile: a good state, one byte a read, was refused");
  if (!load_state(p, in->state, good.bytes, good.size, STREAM_BYTES)) fail("hostile: the good state was refused after the bad ones");
  free(flipped);
  free(good.bytes);
}

/* Events no plugin may trip on, at times in and past a block of n frames, appended out of order. */
static void hostile_events(EventList *e, uint32_t n, clap_id real_param) {
  static const uint8_t sysex[] = { 0xF0, 0x7E, 0x7F, 0x09, 0x01, 0xF7, 0xFF, 0x00 };
  uint32_t late = n ? n - 1 : 0;
  list_add(e, late, CLAP_CORE_EVENT_SPACE_ID, 0x7777, sizeof(clap_event_header_t));        /* unknown type */
  Slot *s = list_add(e, 0, 0x1234, CLAP_EVENT_NOTE_ON, sizeof(clap_event_note_t));          /* another space */
  s->note = (clap_event_note_t){ s->header, 1, 0, 0, 60, 1.0 };
  s = list_add(e, n + 100, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_PARAM_VALUE, sizeof(clap_event_param_value_t));
  s->value = (clap_event_param_value_t){ s->header, 0xDEADBEEFu, NULL, -1, -1, -1, -1, 0.5 };  /* no such id, past the block */
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_PARAM_VALUE, sizeof(clap_event_param_value_t));
  s->value = (clap_event_param_value_t){ s->header, real_param, (void *)0x1, 77, 9, 99, 999, NAN };
  s = list_add(e, late / 2, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_PARAM_MOD, sizeof(clap_event_param_mod_t));
  s->mod = (clap_event_param_mod_t){ s->header, 0xFFFFFFF0u, NULL, -1, -1, -1, -1, INFINITY };
  s = list_add(e, late, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_PARAM_MOD, sizeof(clap_event_param_mod_t));
  s->mod = (clap_event_param_mod_t){ s->header, real_param, NULL, 123456, -1, -1, -1, 1e300 };
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_NOTE_ON, sizeof(clap_event_note_t));
  s->note = (clap_event_note_t){ s->header, 5, 9, 40, 300, NAN };                            /* port, channel, key out of range */
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_NOTE_OFF, sizeof(clap_event_note_t));
  s->note = (clap_event_note_t){ s->header, 987654, -1, -1, -5, -1 };                        /* a note that never was */
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_NOTE_CHOKE, sizeof(clap_event_note_t));
  s->note = (clap_event_note_t){ s->header, -1, 3, 16, 128, 0 };
  s = list_add(e, late, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_NOTE_EXPRESSION, sizeof(clap_event_note_expression_t));
  s->expression = (clap_event_note_expression_t){ s->header, 42, -1, -1, -1, -1, 1 };       /* unknown expression */
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_NOTE_EXPRESSION, sizeof(clap_event_note_expression_t));
  s->expression = (clap_event_note_expression_t){ s->header, CLAP_NOTE_EXPRESSION_TUNING, 31337, 0, 99, 127, NAN };
  s = list_add(e, late, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_NOTE_EXPRESSION, sizeof(clap_event_note_expression_t));
  s->expression = (clap_event_note_expression_t){ s->header, CLAP_NOTE_EXPRESSION_PRESSURE, -1, -1, -1, -1, -1e308 };
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_MIDI, sizeof(clap_event_midi_t));
  s->midi = (clap_event_midi_t){ s->header, 0, { 0xF8, 0xFF, 0xFF } };                        /* clock, bytes > 127 */
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_MIDI, sizeof(clap_event_midi_t));
  s->midi = (clap_event_midi_t){ s->header, 7, { 0x90, 0x80, 0x80 } };                        /* data bytes with the top bit */
  s = list_add(e, late, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_MIDI, sizeof(clap_event_midi_t));
  s->midi = (clap_event_midi_t){ s->header, 0, { 0x00, 0x00, 0x00 } };                       /* no status byte */
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_MIDI_SYSEX, sizeof(clap_event_midi_sysex_t));
  s->sysex = (clap_event_midi_sysex_t){ s->header, 0, sysex, sizeof sysex };
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_MIDI2, sizeof(clap_event_midi2_t));
  s->midi2 = (clap_event_midi2_t){ s->header, 0, { 0x40903C00u, 0xFFFF0000u, 0, 0 } };
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_TRANSPORT, sizeof(clap_event_transport_t));
  s->transport.flags = 0xFFFFFFFFu;
  s->transport.tempo = NAN;
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_PARAM_GESTURE_BEGIN, sizeof(clap_event_param_gesture_t));
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_NOTE_END, sizeof(clap_event_note_t)); /* an output event, sent in */
  s = list_add(e, 0, CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_NOTE_ON, sizeof(clap_event_header_t)); /* a size too small for a note */
  s->note.note_id = -1;
  s->note.key = 61;
  s->note.velocity = 1;
}

/* --- the run ------------------------------------------------------------------------------------- */

typedef struct { long frame; uint8_t bytes[3]; } MidiEvent;
typedef struct { long frame; char name[CLAP_NAME_SIZE]; double value; clap_id id; } Set;
typedef struct { long frame; int key; int expression; double value; } Expression;

static int expression_named(const char *name) {
  const char *names[] = { "volume", "pan", "tuning", "vibrato", "expression", "brightness", "pressure" };
  for (int i = 0; i < 7; i++)
    if (!strcmp(name, names[i])) return i;
  fail("-e: no note expression called '%s' (volume pan tuning vibrato expression brightness pressure)", name);
  return -1;
}

static long number(const char *text, const char *what, long lo, long hi) {
  char *end;
  long v = strtol(text, &end, 10);
  if (!*text || *end || v < lo || v > hi) fail("%s: '%s' is not a whole number in %ld...%ld", what, text, lo, hi);
  return v;
}

static double real(const char *text, const char *what) {
  char *end;
  double v = strtod(text, &end);
  if (!*text || *end || !isfinite(v)) fail("%s: '%s' is not a number", what, text);
  return v;
}

static unsigned char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) fail("cannot open %s", path);
  size_t capacity = 65536, n = 0, got;
  unsigned char *bytes = malloc(capacity);
  if (!bytes) fail("out of memory");
  while ((got = fread(bytes + n, 1, capacity - n, f)) > 0) {
    n += got;
    if (n == capacity) {
      if (capacity >= MAX_STATE_BYTES) fail("%s is larger than %u bytes", path, MAX_STATE_BYTES);
      if (!(bytes = realloc(bytes, capacity *= 2))) fail("out of memory");
    }
  }
  if (ferror(f)) fail("cannot read %s", path);
  fclose(f);
  *size = n;
  return bytes;
}

int main(int argc, char **argv) {
  if (argc < 4) fail("usage: claphost PLUGIN.clap PLUGIN_ID EVENTS FRAMES BLOCK OUT.wav [-n N] [--notes] [-s FRAME NAME VALUE]... "
                     "[-e FRAME KEY EXPR VALUE]... [--save FILE] [--restore FILE] [--hostile] | PLUGIN.clap PLUGIN_ID --describe");
  char *path = realpath(argv[1], NULL); /* dlopen searches for a bare name; CLAP's init wants the file's path */
  const char *plugin_id = argv[2];
  if (!path) fail("%s: no such file", argv[1]);
  int describing = !strcmp(argv[3], "--describe");
  if (!describing && argc < 7) fail("usage: claphost PLUGIN.clap PLUGIN_ID EVENTS FRAMES BLOCK OUT.wav [options]");
  long frames = 0, block = 1;
  int count = 1, notes = 0, hostile = 0, nsets = 0, nexpressions = 0, want_ends = 0;
  const char *save_path = NULL, *restore_path = NULL;
  static Set sets[MAX_SETS];
  static Expression expressions[MAX_SETS];
  if (!describing) {
    frames = number(argv[4], "FRAMES", 1, 48000L * 3600);
    block = number(argv[5], "BLOCK", 1, MAX_BLOCK);
    for (int a = 7; a < argc; a++) {
      if (!strcmp(argv[a], "-n") && a + 1 < argc) count = (int)number(argv[++a], "-n", 1, MAX_INSTANCES);
      else if (!strcmp(argv[a], "--notes")) notes = 1;
      else if (!strcmp(argv[a], "--hostile")) hostile = 1;
      else if (!strcmp(argv[a], "--note-ends")) want_ends = 1;
      else if (!strcmp(argv[a], "--save") && a + 1 < argc) save_path = argv[++a];
      else if (!strcmp(argv[a], "--restore") && a + 1 < argc) restore_path = argv[++a];
      else if (!strcmp(argv[a], "-s") && a + 3 < argc && nsets < MAX_SETS) {
        sets[nsets].frame = number(argv[a + 1], "-s FRAME", 0, frames - 1);
        snprintf(sets[nsets].name, sizeof sets[nsets].name, "%s", argv[a + 2]);
        sets[nsets].value = real(argv[a + 3], "-s VALUE");
        nsets++;
        a += 3;
      } else if (!strcmp(argv[a], "-e") && a + 4 < argc && nexpressions < MAX_SETS) {
        expressions[nexpressions] = (Expression){ number(argv[a + 1], "-e FRAME", 0, frames - 1), (int)number(argv[a + 2], "-e KEY", 0, 127),
                                                  expression_named(argv[a + 3]), real(argv[a + 4], "-e VALUE") };
        nexpressions++;
        a += 4;
      } else fail("unknown or incomplete option '%s'", argv[a]);
    }
  }

  if (want_ends && !notes) fail("--note-ends needs --notes");

  /* the events */
  MidiEvent *events = NULL;
  size_t nevents = 0;
  if (!describing) {
    FILE *ef = fopen(argv[3], "r");
    if (!ef) fail("cannot open the events file %s", argv[3]);
    size_t cap = 1024;
    if (!(events = malloc(cap * sizeof *events))) fail("out of memory");
    unsigned s, d1, d2;
    long f, last = 0;
    int got;
    while ((got = fscanf(ef, "%ld %u %u %u", &f, &s, &d1, &d2)) == 4) {
      if (f < last || s < 0x80 || s > 0xEF || d1 > 127 || d2 > 127) fail("%s: bad event line %zu", argv[3], nevents + 1);
      last = f;
      if (nevents == cap && !(events = realloc(events, (cap *= 2) * sizeof *events))) fail("out of memory");
      events[nevents++] = (MidiEvent){ f, { (uint8_t)s, (uint8_t)d1, (uint8_t)d2 } };
    }
    if (got != EOF || ferror(ef)) fail("%s: line %zu is not 'FRAME STATUS DATA1 DATA2'", argv[3], nevents + 1);
    fclose(ef);
  }

  /* the library, its entry and its factory */
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) fail("dlopen: %s", dlerror());
  const clap_plugin_entry_t *entry = dlsym(library, "clap_entry");
  if (!entry) fail("%s exports no clap_entry", path);
  if (!clap_version_is_compatible(entry->clap_version)) fail("clap_entry has CLAP version %u.%u.%u", entry->clap_version.major,
                                                              entry->clap_version.minor, entry->clap_version.revision);
  if (!entry->init || !entry->deinit || !entry->get_factory) fail("clap_entry lacks a function");
  if (!entry->init(path)) fail("clap_entry.init(%s) failed", path);
  if (hostile && entry->get_factory("org.toneshaper.no-such-factory")) fail("hostile: get_factory of an unknown id answered");
  const clap_plugin_factory_t *factory = entry->get_factory(CLAP_PLUGIN_FACTORY_ID);
  if (!factory || !factory->get_plugin_count || !factory->get_plugin_descriptor || !factory->create_plugin) fail("no plugin factory");
  const clap_plugin_descriptor_t *descriptor = NULL;
  for (uint32_t i = 0, n = factory->get_plugin_count(factory); i < n; i++) {
    const clap_plugin_descriptor_t *d = factory->get_plugin_descriptor(factory, i);
    if (!d || !d->id || !d->name) fail("the factory's descriptor %u lacks an id or name", i);
    if (!strcmp(d->id, plugin_id)) descriptor = d;
  }
  if (!descriptor) fail("the factory has no plugin %s", plugin_id);
  if (!clap_version_is_compatible(descriptor->clap_version)) fail("the descriptor's CLAP version is not 1.x");
  if (hostile && factory->create_plugin(factory, &host, "org.toneshaper.no-such-plugin")) fail("hostile: create_plugin of an unknown id answered");

  static Instance inst[MAX_INSTANCES];
  for (int k = 0; k < count; k++) {
    const clap_plugin_t *p = factory->create_plugin(factory, &host, plugin_id);
    if (!p) fail("create_plugin failed");
    if (!p->init || !p->destroy || !p->activate || !p->deactivate || !p->start_processing || !p->stop_processing ||
        !p->reset || !p->process || !p->get_extension || !p->on_main_thread) fail("the plugin lacks a function");
    if (!p->init(p)) fail("plugin.init failed");
    inst[k].plugin = p;
    inst[k].params = extension(p, CLAP_EXT_PARAMS);
    inst[k].state = extension(p, CLAP_EXT_STATE);
    inst[k].note_ports = extension(p, CLAP_EXT_NOTE_PORTS);
    inst[k].audio_ports = extension(p, CLAP_EXT_AUDIO_PORTS);
    if (!inst[k].params->count || !inst[k].params->get_info || !inst[k].params->get_value || !inst[k].params->value_to_text ||
        !inst[k].params->text_to_value || !inst[k].params->flush) fail("params: missing functions");
    if (!inst[k].state->save || !inst[k].state->load) fail("state: missing functions");
    check_ports(&inst[k], notes);
    if (hostile && p->get_extension(p, "org.toneshaper.no-such-extension")) fail("hostile: an unknown extension answered");
  }
  if (describing) {
    describe(descriptor, &inst[0]);
    inst[0].plugin->destroy(inst[0].plugin);
    entry->deinit();
    if (dlclose(library)) fail("dlclose: %s", dlerror());
    return 0;
  }
  for (int i = 0; i < nsets; i++) {
    double min, max;
    sets[i].id = find_param(&inst[0], sets[i].name, &min, &max);
    if (sets[i].value < min || sets[i].value > max) fail("-s %s %g: outside the parameter's range %g...%g", sets[i].name, sets[i].value, min, max);
    for (int k = 1; k < count; k++)
      if (find_param(&inst[k], sets[i].name, &min, &max) != sets[i].id) fail("instances disagree on the id of %s", sets[i].name);
  }
  if (restore_path) {
    size_t size;
    unsigned char *bytes = read_file(restore_path, &size);
    for (int k = 0; k < count; k++)
      if (!load_state(inst[k].plugin, inst[k].state, bytes, size, STREAM_BYTES)) fail("the plugin refused the state in %s", restore_path);
    free(bytes);
  }
  if (hostile)
    for (int k = 0; k < count; k++) {
      hostile_main_thread(&inst[k]);
      /* activated at another rate and block first, as a host does when its settings change */
      if (!inst[k].plugin->activate(inst[k].plugin, 44100, 64, 64)) fail("plugin.activate(44100, 64, 64) failed");
      inst[k].plugin->deactivate(inst[k].plugin);
    }
  for (int k = 0; k < count; k++) {
    if (!inst[k].plugin->activate(inst[k].plugin, 48000, 1, MAX_BLOCK)) fail("plugin.activate(48000, 1, %d) failed", MAX_BLOCK);
    for (int c = 0; c < 2; c++)
      if (!(inst[k].out[c] = malloc(MAX_BLOCK * sizeof(float)))) fail("out of memory");
    inst[k].output.list = (clap_output_events_t){ &inst[k].output, out_try_push };
    if (!(inst[k].output.ended = calloc(nevents + 1, sizeof(unsigned)))) fail("out of memory");
  }
  for (int k = 0; k < count; k++) {
    in_process = 1; /* start_processing is on the audio thread */
    if (!inst[k].plugin->start_processing(inst[k].plugin)) fail("plugin.start_processing failed");
    in_process = 0;
  }

  SF_INFO info = { .samplerate = 48000, .channels = 2, .format = SF_FORMAT_WAV | SF_FORMAT_FLOAT };
  SNDFILE *out = sf_open(argv[6], SFM_WRITE, &info);
  if (!out) fail("%s: %s", argv[6], sf_strerror(NULL));
  float *interleaved = malloc(2 * MAX_BLOCK * sizeof(float));
  static EventList list, empty, odd; /* odd: the hostile events alone, for zero-frame calls and flush */
  clap_input_events_t in_list = { &list, list_size, list_get }, no_events = { &empty, list_size, list_get },
                      odd_list = { &odd, list_size, list_get };
  int32_t note_ids[16][128]; /* the sounding note of each channel and key: its id (-1 in MIDI) */
  int sounding[16][128];
  memset(sounding, 0, sizeof sounding);
  size_t next = 0;
  int status = 0;
  clap_id some_param = sets[0].id;
  if (!nsets) {
    clap_param_info_t first;
    some_param = inst[0].params->get_info(inst[0].plugin, 0, &first) ? first.id : 0;
  }
  for (long start = 0; start < frames; start += block) {
    uint32_t n = (uint32_t)(frames - start < block ? frames - start : block);
    /* this block's events in time order: at one frame, -s (a control set as the frame starts, so a
       note there plays with it), then the file's MIDI, then -e (on the notes sounding by then) */
    list.count = 0;
    for (long f = start; f < start + n; f++) {
      for (int i = 0; i < nsets; i++)
        if (sets[i].frame == f) {
          Slot *s = list_add(&list, (uint32_t)(f - start), CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_PARAM_VALUE, sizeof(clap_event_param_value_t));
          s->value = (clap_event_param_value_t){ s->header, sets[i].id, NULL, -1, -1, -1, -1, sets[i].value };
        }
      for (; next < nevents && events[next].frame == f; next++) {
        const uint8_t *m = events[next].bytes;
        int kind = m[0] & 0xF0, ch = m[0] & 0x0F, key = m[1];
        int on = kind == 0x90 && m[2] > 0, off = kind == 0x80 || (kind == 0x90 && m[2] == 0);
        if (notes && (on || off)) {
          Slot *s = list_add(&list, (uint32_t)(f - start), CLAP_CORE_EVENT_SPACE_ID, on ? CLAP_EVENT_NOTE_ON : CLAP_EVENT_NOTE_OFF,
                             sizeof(clap_event_note_t));
          int32_t id = on ? next_note_id++ : sounding[ch][key] ? note_ids[ch][key] : -1;
          s->note = (clap_event_note_t){ s->header, id, 0, (int16_t)ch, (int16_t)key, m[2] / 127.0 };
          if (on) note_ids[ch][key] = id;
        } else {
          Slot *s = list_add(&list, (uint32_t)(f - start), CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_MIDI, sizeof(clap_event_midi_t));
          s->midi = (clap_event_midi_t){ s->header, 0, { m[0], m[1], m[2] } };
          if (on) note_ids[ch][key] = -1;
        }
        if (on) sounding[ch][key] = 1;
        if (off) sounding[ch][key] = 0;
      }
      for (int i = 0; i < nexpressions; i++)
        if (expressions[i].frame == f) {
          int ch = 0, key = expressions[i].key;
          while (ch < 16 && !sounding[ch][key]) ch++;
          if (ch == 16) fail("-e at frame %ld: key %d is not sounding", f, key);
          Slot *s = list_add(&list, (uint32_t)(f - start), CLAP_CORE_EVENT_SPACE_ID, CLAP_EVENT_NOTE_EXPRESSION,
                             sizeof(clap_event_note_expression_t));
          s->expression = (clap_event_note_expression_t){ s->header, expressions[i].expression, note_ids[ch][key], 0, (int16_t)ch,
                                                          (int16_t)key, expressions[i].value };
        }
    }
    if (hostile) {
      hostile_events(&list, n, some_param);
      odd.count = 0;
      hostile_events(&odd, 0, some_param);
    }

    for (int k = 0; k < count; k++) {
      const clap_plugin_t *p = inst[k].plugin;
      clap_audio_buffer_t buffer = { inst[k].out, NULL, 2, 0, 0 };
      if (hostile && start < frames / 2 && start + n >= frames / 2) p->reset(p); /* all voices killed mid-song */
      if (hostile) {
        clap_process_t zero = { start, 0, NULL, NULL, NULL, 0, 0, &odd_list, &inst[k].output.list };
        in_process = 1;
        p->process(p, &zero); /* any status: nothing was asked */
        in_process = 0;
      }
      for (uint32_t i = 0; i < n; i++) inst[k].out[0][i] = inst[k].out[1][i] = NAN; /* what the plugin leaves unwritten shows */
      clap_process_t process = { start, n, NULL, NULL, &buffer, 0, 1, &in_list, &inst[k].output.list };
      in_process = 1;
      clap_process_status result = p->process(p, &process);
      in_process = 0;
      if (result == CLAP_PROCESS_ERROR) fail("plugin.process returned CLAP_PROCESS_ERROR at frame %ld", start);
      in_process = 1; /* flush while active is on the audio thread */
      if (hostile) inst[k].params->flush(p, &odd_list, &inst[k].output.list);
      else if (flush_requests) inst[k].params->flush(p, &no_events, &inst[k].output.list);
      in_process = 0;
      if (callback_requested) { callback_requested = 0; p->on_main_thread(p); }
    }
    flush_requests = 0;
    for (int k = 0; k < count && !status; k++)
      for (uint32_t i = 0; i < n; i++) {
        if (!isfinite(inst[k].out[0][i]) || !isfinite(inst[k].out[1][i])) {
          fprintf(stderr, "claphost: instance %d left frame %ld unwritten or not finite (%g, %g)\n", k, start + i, inst[k].out[0][i], inst[k].out[1][i]);
          status = 1;
          break;
        }
        if (k && (inst[k].out[0][i] != inst[0].out[0][i] || inst[k].out[1][i] != inst[0].out[1][i])) {
          fprintf(stderr, "claphost: instance %d differs from instance 0 at frame %ld\n", k, start + i);
          status = 1;
          break;
        }
      }
    for (uint32_t i = 0; i < n; i++) { interleaved[2 * i] = inst[0].out[0][i]; interleaved[2 * i + 1] = inst[0].out[1][i]; }
    if (sf_writef_float(out, interleaved, n) != n) fail("%s: %s", argv[6], sf_strerror(out));
  }
  if (sf_close(out) != 0) fail("closing %s failed", argv[6]);

  for (int k = 0; k < count; k++) {
    in_process = 1;
    inst[k].plugin->stop_processing(inst[k].plugin);
    in_process = 0;
  }
  if (save_path) {
    Stream s = save_state(inst[0].plugin, inst[0].state);
    FILE *f = fopen(save_path, "wb");
    if (!f || fwrite(s.bytes, 1, s.size, f) != s.size || fclose(f) != 0) fail("cannot write %s", save_path);
    free(s.bytes);
  }
  for (int k = 0; k < count; k++) {
    const Output *o = &inst[k].output;
    int32_t unended = 0, twice = 0;
    for (int32_t id = 0; id < next_note_id; id++) { unended += !o->ended[id]; twice += o->ended[id] > 1; }
    if (k == 0)
      fprintf(stderr, "claphost: the plugin sent %ld events: note ends for %d of the %d notes given, %ld without an id, %ld for ids never given\n",
              o->events, next_note_id - unended, next_note_id, o->anonymous_ends, o->stray_ends);
    if (want_ends && (unended || twice || o->stray_ends)) {
      fprintf(stderr, "claphost: instance %d: %d notes never ended, %d ended more than once, %ld ends for ids never given\n", k,
              unended, twice, o->stray_ends);
      status = 1;
    }
  }
  for (int k = 0; k < count; k++) {
    inst[k].plugin->deactivate(inst[k].plugin);
    inst[k].plugin->destroy(inst[k].plugin);
    free(inst[k].out[0]);
    free(inst[k].out[1]);
    free(inst[k].output.ended);
  }
  entry->deinit();
  if (dlclose(library)) fail("dlclose: %s", dlerror());
  free(path);
  if (restart_requested) fprintf(stderr, "claphost: the plugin asked for a restart %d time(s)\n", restart_requested);
  free(events);
  free(interleaved);
  return status;
}
