#include "CALSAShim.h"
#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>

static char last_error[512];

static void quiet_handler(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
}

void toneshaper_alsa_quiet_errors(void) { snd_lib_error_set_handler(quiet_handler); }
const char *toneshaper_alsa_last_error(void) { return last_error; }
void toneshaper_alsa_clear_last_error(void) { last_error[0] = '\0'; }
