#ifndef CJACK_SHIM_H
#define CJACK_SHIM_H
#include <jack/jack.h>
/// jack_client_open without its variadic tail (Swift cannot call a variadic C function): `server`
/// names the server (JackServerName), or NULL for JACK_DEFAULT_SERVER's, or "default".
jack_client_t *toneshaper_jack_client_open(const char *name, jack_options_t options, const char *server, jack_status_t *status);
/// Replaces libjack's stderr printers with one that keeps only the last error message (and drops
/// its info chatter), so the program can say one clear line of its own.
void toneshaper_jack_quiet(void);
/// The last error libjack reported (empty if none).
const char *toneshaper_jack_last_error(void);
#endif
