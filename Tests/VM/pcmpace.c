/* How a PCM device paces its writer, for the VM test (Tests/VM/README.md).
 *
 *   pcmpace DEVICE PERIOD PERIODS COUNT
 *
 * Opens DEVICE for playback (48 kHz stereo, FLOAT_LE or else S32_LE, PERIOD × PERIODS frames),
 * writes COUNT periods of silence with blocking writes and prints one line per write:
 * "WRITE_END_MS AVAIL DELAY" (CLOCK_MONOTONIC milliseconds since the first write). The writes that
 * blocked show when the device's hardware pointer moved, and by how much: snd-aloop moves on a
 * jiffies timer, so it wakes its writer in whole-tick steps rather than once a period.
 */
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: pcmpace DEVICE PERIOD PERIODS COUNT\n"); return 2; }
    snd_pcm_t *pcm;
    int err = snd_pcm_open(&pcm, argv[1], SND_PCM_STREAM_PLAYBACK, 0);
    if (err < 0) { fprintf(stderr, "pcmpace: cannot open %s: %s\n", argv[1], snd_strerror(err)); return 1; }
    snd_pcm_hw_params_t *hw;
    snd_pcm_hw_params_alloca(&hw);
    snd_pcm_hw_params_any(pcm, hw);
    snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED);
    snd_pcm_format_t format = SND_PCM_FORMAT_FLOAT_LE;
    if (snd_pcm_hw_params_test_format(pcm, hw, format) < 0) format = SND_PCM_FORMAT_S32_LE;
    snd_pcm_hw_params_set_format(pcm, hw, format);
    snd_pcm_hw_params_set_channels(pcm, hw, 2);
    unsigned rate = 48000;
    snd_pcm_hw_params_set_rate_near(pcm, hw, &rate, 0);
    snd_pcm_uframes_t period = (snd_pcm_uframes_t)atoi(argv[2]);
    snd_pcm_uframes_t buffer = period * (snd_pcm_uframes_t)atoi(argv[3]);
    snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, 0);
    snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer);
    err = snd_pcm_hw_params(pcm, hw);
    if (err < 0) { fprintf(stderr, "pcmpace: cannot set parameters: %s\n", snd_strerror(err)); return 1; }
    printf("pcmpace: %s %s %u Hz, period %lu, buffer %lu\n", argv[1], snd_pcm_format_name(format), rate,
           (unsigned long)period, (unsigned long)buffer);
    static char silence[8192 * 8];
    int count = atoi(argv[4]);
    double t0 = ms();
    for (int i = 0; i < count; i++) {
        snd_pcm_sframes_t n = snd_pcm_writei(pcm, silence, period);
        double t = ms() - t0;
        if (n < 0) {
            printf("%.3f xrun %s\n", t, snd_strerror((int)n));
            snd_pcm_recover(pcm, (int)n, 1);
            continue;
        }
        snd_pcm_sframes_t avail = 0, delay = 0;
        snd_pcm_avail_delay(pcm, &avail, &delay);
        printf("%.3f %ld %ld\n", t, (long)avail, (long)delay);
    }
    snd_pcm_close(pcm);
    return 0;
}
