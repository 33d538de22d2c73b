/* The LV2 headers the plugin is written against (Debian's lv2-dev). Their URI macros and the
   atom sequence walk are C macros Swift cannot import: the plugin spells the URIs itself. */
#pragma once
#include <lv2/core/lv2.h>
#include <lv2/atom/atom.h>
#include <lv2/midi/midi.h>
#include <lv2/urid/urid.h>
#include <lv2/state/state.h>
