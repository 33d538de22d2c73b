#include "CJACKShim.h"
#include <string.h>

jack_client_t *toneshaper_jack_client_open(const char *name, jack_options_t options, const char *server, jack_status_t *status) {
    if (server != NULL) return jack_client_open(name, options | JackServerName, status, server);
    return jack_client_open(name, options, status);
}

/* Written by whichever thread libjack reports from; read by the control thread after a failed call. */
static char last_error[512];

static void keep_error(const char *message) {
    if (message == NULL) return;
    strncpy(last_error, message, sizeof last_error - 1);
    last_error[sizeof last_error - 1] = 0;
}

static void drop_info(const char *message) { (void)message; }

void toneshaper_jack_quiet(void) {
    jack_set_error_function(keep_error);
    jack_set_info_function(drop_info);
}

const char *toneshaper_jack_last_error(void) { return last_error; }
