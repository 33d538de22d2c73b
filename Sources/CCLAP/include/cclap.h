/* The CLAP headers the plugin is written against (CLAP 1.1.1, as Debian 12's dpf-source ships them
   in /usr/share/dpf/distrho/src: the build adds that folder to the include path). */
#pragma once
#include <clap/entry.h>
#include <clap/plugin-factory.h>
#include <clap/plugin.h>
#include <clap/plugin-features.h>
#include <clap/host.h>
#include <clap/events.h>
#include <clap/process.h>
#include <clap/stream.h>
#include <clap/ext/params.h>
#include <clap/ext/state.h>
#include <clap/ext/note-ports.h>
#include <clap/ext/audio-ports.h>

/* The Swift side of the entry (public @_cdecl functions; the version script hides them). */
bool toneshaper_clap_init(const char *plugin_path);
void toneshaper_clap_deinit(void);
const void *toneshaper_clap_get_factory(const char *factory_id);
