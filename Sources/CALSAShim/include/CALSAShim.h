#ifndef CALSA_SHIM_H
#define CALSA_SHIM_H
/// Replaces alsa-lib's default stderr error printer with one that keeps only the last message,
/// so the program can show its own single clear line instead.
void toneshaper_alsa_quiet_errors(void);
/// The last message alsa-lib reported through its error handler (empty if none).
const char *toneshaper_alsa_last_error(void);
/// Forgets the last message, so an error after the next call is known to come from that call.
void toneshaper_alsa_clear_last_error(void);
#endif
