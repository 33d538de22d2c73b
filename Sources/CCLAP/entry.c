/* clap_entry is a const data symbol, which Swift cannot define: it is defined here and forwards
   to the Swift functions. It is the shared object's one exported symbol (packaging/clap/exports.map). */
#include "cclap.h"

CLAP_EXPORT const clap_plugin_entry_t clap_entry = {
    CLAP_VERSION_INIT, toneshaper_clap_init, toneshaper_clap_deinit, toneshaper_clap_get_factory,
};
