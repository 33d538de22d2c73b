#include "clv2.h"
#include <lv2/atom/util.h>

void clv2_patch_init(CLV2Patch *patch, LV2_URID_Map *map) {
  patch->patch_Set = map->map(map->handle, LV2_PATCH__Set);
  patch->patch_Get = map->map(map->handle, LV2_PATCH__Get);
  patch->patch_property = map->map(map->handle, LV2_PATCH__property);
  patch->patch_value = map->map(map->handle, LV2_PATCH__value);
  patch->atom_Path = map->map(map->handle, LV2_ATOM__Path);
  lv2_atom_forge_init(&patch->forge, map);
  patch->writing = 0;
}

int clv2_patch_read(const CLV2Patch *patch, const LV2_Atom *atom, LV2_URID *property, const char **path, uint32_t *length) {
  *property = 0;
  *path = NULL;
  *length = 0;
  if (!lv2_atom_forge_is_object_type(&patch->forge, atom->type) || atom->size < sizeof(LV2_Atom_Object_Body)) return 0;
  const LV2_Atom_Object *object = (const LV2_Atom_Object *)atom;
  const LV2_Atom *key = NULL, *value = NULL;
  lv2_atom_object_get(object, patch->patch_property, &key, patch->patch_value, &value, 0);
  if (key && (key->type != patch->forge.URID || key->size < sizeof(LV2_URID))) return 0;
  if (key) *property = ((const LV2_Atom_URID *)key)->body;
  if (object->body.otype == patch->patch_Get) return 2;
  if (object->body.otype != patch->patch_Set || !key || !value) return 0;
  if (value->type != patch->atom_Path) return 3;
  const char *text = (const char *)LV2_ATOM_BODY_CONST(value);
  if (value->size < 2 || text[value->size - 1] != 0) return 3;
  *path = text;
  const char *end = memchr(text, 0, value->size);
  *length = (uint32_t)(end - text);
  if (*length == 0) return 3;
  return 1;
}

void clv2_notify_begin(CLV2Patch *patch, LV2_Atom_Sequence *port) {
  const uint32_t capacity = port->atom.size;
  lv2_atom_forge_set_buffer(&patch->forge, (uint8_t *)port, capacity);
  patch->writing = lv2_atom_forge_sequence_head(&patch->forge, &patch->sequence, 0) != 0;
}

int clv2_notify_path(CLV2Patch *patch, LV2_URID property, const char *path, uint32_t length) {
  if (!patch->writing) return 0;
  /* Room for the event, the object and both properties, checked first: a forge that ran out
     leaves a partial event behind. */
  const uint32_t needed = (uint32_t)(sizeof(LV2_Atom_Event) + sizeof(LV2_Atom_Object) + 2 * sizeof(LV2_Atom_Property_Body)
                                     + 8 + lv2_atom_pad_size(length + 1) + 16);
  if (patch->forge.offset + needed > patch->forge.size) return 0;
  LV2_Atom_Forge_Frame object;
  lv2_atom_forge_frame_time(&patch->forge, 0);
  lv2_atom_forge_object(&patch->forge, &object, 0, patch->patch_Set);
  lv2_atom_forge_key(&patch->forge, patch->patch_property);
  lv2_atom_forge_urid(&patch->forge, property);
  lv2_atom_forge_key(&patch->forge, patch->patch_value);
  lv2_atom_forge_path(&patch->forge, path, length);
  lv2_atom_forge_pop(&patch->forge, &object);
  return 1;
}

void clv2_log_line(const LV2_Log_Log *log, LV2_URID type, const char *line) {
  log->printf(log->handle, type, "%s\n", line);
}
