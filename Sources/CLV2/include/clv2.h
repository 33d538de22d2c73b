/* The LV2 headers the plugin is written against (Debian's lv2-dev). Their URI macros and the
   atom sequence walk are C macros Swift cannot import: the plugin spells the URIs itself. What
   Swift cannot call (variadic functions: the log's printf, lv2_atom_object_get) or should not do
   by hand (the atom forge, atomic pointer words) is in a few small functions here. */
#pragma once
#include <lv2/core/lv2.h>
#include <lv2/atom/atom.h>
#include <lv2/atom/forge.h>
#include <lv2/log/log.h>
#include <lv2/midi/midi.h>
#include <lv2/patch/patch.h>
#include <lv2/urid/urid.h>
#include <lv2/state/state.h>
#include <lv2/worker/worker.h>

/* A word shared by the audio thread and the others: the pointer to what the plugin plays. */
static inline void *clv2_load(void *const *word) { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }
static inline void *clv2_exchange(void **word, void *value) { return __atomic_exchange_n(word, value, __ATOMIC_ACQ_REL); }

/* The patch messages a host's file chooser sends (patch:Set of an atom:Path, patch:Get), and
   the patch:Set notifications the plugin answers with on its notify port. */
typedef struct {
  LV2_URID patch_Set, patch_Get, patch_property, patch_value, atom_Path;
  LV2_Atom_Forge forge;
  LV2_Atom_Forge_Frame sequence;
  int writing;
} CLV2Patch;

void clv2_patch_init(CLV2Patch *patch, LV2_URID_Map *map);

/* What an event's atom is: 1 a patch:Set of an atom:Path (its property, the path's bytes and length
   without the NUL, the path being non-empty and NUL-terminated), 2 a patch:Get (its property, 0
   for all), 0 anything else (a Set of another type of value: 3, with the property). */
int clv2_patch_read(const CLV2Patch *patch, const LV2_Atom *atom, LV2_URID *property, const char **path, uint32_t *length);

/* Starts the notify port's sequence for this block (its capacity is the size the host set). */
void clv2_notify_begin(CLV2Patch *patch, LV2_Atom_Sequence *port);
/* Appends a patch:Set of `property` to the path at frame 0; 0 when it does not fit. */
int clv2_notify_path(CLV2Patch *patch, LV2_URID property, const char *path, uint32_t length);

/* One line through the host's log (without its line end). */
void clv2_log_line(const LV2_Log_Log *log, LV2_URID type, const char *line);
