/* The limit: ToneShaper's job on the dense file as a plain C program, built and timed by report.sh.
 *
 * The same job as `toneshaper render --preset article-curve` with less around it: every note of the
 * file (compare-peers.py writes them as an event list: sample, channel, key, velocity or bend)
 * plays a band-limited sawtooth whose frequency follows the article curve (54 -> 460 -> 54 -> 360 Hz,
 * Hz linear in time, one pass per second from the note's start, looping) x 2^((key - 69)/12) x the
 * channel's bend (+-2 semitones), every sample; 5 ms attack, 80 ms release, a pool of 128 voices.
 * The kernel is what the "C kernel" measured: mip-mapped saw tables (one per octave, 4096
 * points, partials up to the level's limit, built at start-up), LINEAR interpolation only, the level
 * chosen per run of samples from the highest frequency in it; the phase of each sample in closed
 * form from the run's start (frequency linear inside a curve segment, so the phase is quadratic in
 * the sample index), so the sample loop has no carried dependency and clang/gcc vectorise it
 * (gathers for the table reads). Runs are cut at events, curve points and 256-sample blocks.
 * Output: a stereo 32-bit float WAV, the same mono mix in both channels (no pan, no echo); on
 * stdout, "loop_cpu_s S": the thread CPU time of the render loop (events, voices, mix, the buffered
 * writes; not start-up, tables or the final flush), so the voices' cost can be told from the process's.
 *
 * Usage: ref-kernel EVENTS OUT.wav SECONDS      (48 kHz)
 * EVENTS lines: "SAMPLE on CHANNEL KEY VELOCITY" | "SAMPLE off CHANNEL KEY" | "SAMPLE bend CHANNEL SEMITONES"
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RATE 48000
#define BLOCK 256   /* as the engine's blocks */
#define SIZE 4096
#define LEVELS 11   /* level k: partials up to 1024 >> k (the last: 1) */
#define POOL 128

static float tables[LEVELS][SIZE + 1];

static const double curve_t[4] = {0.0, 0.231, 0.846, 1.0};
static const double curve_f[4] = {54.0, 460.0, 54.0, 360.0};

typedef struct {
    int active, channel, key, releasing;
    double age;        /* seconds since the note's start: the curve position */
    double phase;      /* cycles, [0, 1) */
    double ratio;      /* key ratio (bend applied separately) */
    float gain, level; /* velocity gain; envelope level 0..1 */
    long release_left; /* samples of release left */
} Voice;

static Voice voices[POOL];
static double bend_ratio[16];

typedef struct { long sample; int kind, channel, key; double value; } Event;

/* All levels in one pass per point: the partials summed by the sine recurrence
 * sin((h+1)p) = 2 cos(p) sin(hp) - sin((h-1)p), each level taking the sum when it has its partials. */
static void build_tables(void) {
    for (int i = 0; i < SIZE; i++) {
        double p = 2 * M_PI * i / SIZE, c2 = 2 * cos(p), s_prev = 0, s = sin(p), x = 0;
        int k = LEVELS - 1;
        for (int h = 1; h <= 1024; h++) {
            x += s / h;
            double s_next = c2 * s - s_prev;
            s_prev = s; s = s_next;
            while (k >= 0 && (1024 >> k) == h) { tables[k][i] = (float)(x * (2 / M_PI) * 0.5); k--; }
        }
    }
    for (int k = 0; k < LEVELS; k++) tables[k][SIZE] = tables[k][0];
}

static int level_for(double fmax) {
    int allowed = fmax > 0 ? (int)(0.5 * RATE / fmax) : 1024;   /* partials below Nyquist */
    int k = 0;
    while (k < LEVELS - 1 && (1024 >> k) > allowed) k++;
    return k;
}

/* n samples of one voice into out: phase(j) = p0 + j*(c0 + j*c1), frequency linear, gain linear. */
static void kernel(float *restrict out, const float *restrict table, int n, float p0, float c0, float c1,
                   float g0, float dg) {
    for (int j = 0; j < n; j++) {
        float fj = (float)j;
        float p = p0 + fj * (c0 + fj * c1);
        p -= floorf(p);
        float x = p * SIZE;
        int i = (int)x;
        float frac = x - (float)i;
        float a = table[i], b = table[i + 1];
        out[j] += (g0 + fj * dg) * (a + frac * (b - a));
    }
}

static double curve_at(double u, int *segment) {
    int s = 0;
    while (s < 2 && u >= curve_t[s + 1]) s++;
    *segment = s;
    return curve_f[s] + (curve_f[s + 1] - curve_f[s]) * (u - curve_t[s]) / (curve_t[s + 1] - curve_t[s]);
}

static void render_voice(Voice *v, float *out, int n) {
    const double attack = 0.005 * RATE, release = 0.08 * RATE;
    int done = 0;
    while (done < n && v->active) {
        double u = fmod(v->age, 1.0);
        int seg;
        double f0 = curve_at(u, &seg);
        double slope = (curve_f[seg + 1] - curve_f[seg]) / (curve_t[seg + 1] - curve_t[seg]) / RATE; /* Hz per sample */
        long to_corner = (long)ceil((curve_t[seg + 1] - u) * RATE);
        if (to_corner < 1) to_corner = 1;
        int m = n - done;
        if (to_corner < m) m = (int)to_corner;
        double r = v->ratio * bend_ratio[v->channel];
        double fa = f0 * r, fb = (f0 + slope * m) * r;
        /* envelope: linear ramp across the run (attack, sustain or release) */
        double l0 = v->level, dl;
        if (v->releasing) {
            if (v->release_left < m) m = (int)(v->release_left > 0 ? v->release_left : 0);
            dl = -1.0 / release;
        } else if (l0 < 1) {
            long left = (long)ceil((1 - l0) * attack);
            if (left < m) m = (int)left;
            dl = 1.0 / attack;
        } else {
            dl = 0;
        }
        if (m <= 0) { v->active = 0; break; }
        fb = (f0 + slope * m) * r;
        const float *table = tables[level_for(fa > fb ? fa : fb)];
        kernel(out + done, table, m, (float)v->phase, (float)(fa / RATE), (float)(0.5 * slope * r / RATE),
               (float)(v->gain * l0), (float)(v->gain * dl));
        double cycles = m * (fa + 0.5 * slope * r * m) / RATE;
        v->phase = fmod(v->phase + cycles, 1.0);
        v->age += (double)m / RATE;
        v->level = (float)fmin(1.0, fmax(0.0, l0 + dl * m));
        if (v->releasing) {
            v->release_left -= m;
            if (v->release_left <= 0) v->active = 0;
        }
        done += m;
    }
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: ref-kernel EVENTS OUT.wav SECONDS\n"); return 2; }
    FILE *in = fopen(argv[1], "r");
    if (!in) { perror(argv[1]); return 1; }
    size_t cap = 1024, count = 0;
    Event *events = malloc(cap * sizeof *events);
    char kind[8];
    long sample;
    while (events && fscanf(in, "%ld %7s", &sample, kind) == 2) {
        if (count == cap) { cap *= 2; events = realloc(events, cap * sizeof *events); if (!events) break; }
        Event *e = &events[count];
        e->sample = sample; e->key = 0; e->value = 0;
        int ok;
        if (!strcmp(kind, "on")) { e->kind = 0; ok = fscanf(in, "%d %d %lf", &e->channel, &e->key, &e->value) == 3; }
        else if (!strcmp(kind, "off")) { e->kind = 1; ok = fscanf(in, "%d %d", &e->channel, &e->key) == 2; }
        else if (!strcmp(kind, "bend")) { e->kind = 2; ok = fscanf(in, "%d %lf", &e->channel, &e->value) == 2; }
        else ok = 0;
        if (!ok || e->channel < 0 || e->channel > 15) { fprintf(stderr, "%s: bad event line %zu\n", argv[1], count + 1); return 1; }
        count++;
    }
    fclose(in);
    if (!events) { fprintf(stderr, "out of memory\n"); return 1; }
    long frames = (long)(atof(argv[3]) * RATE);
    FILE *out = fopen(argv[2], "wb");
    if (!out) { perror(argv[2]); return 1; }
    build_tables();
    for (int c = 0; c < 16; c++) bend_ratio[c] = 1;
    uint32_t data_bytes = (uint32_t)(frames * 2 * 4);
    unsigned char header[44];
    memcpy(header, "RIFF", 4); uint32_t v32 = 36 + data_bytes; memcpy(header + 4, &v32, 4);
    memcpy(header + 8, "WAVEfmt ", 8); v32 = 16; memcpy(header + 16, &v32, 4);
    uint16_t v16 = 3; memcpy(header + 20, &v16, 2); v16 = 2; memcpy(header + 22, &v16, 2);
    v32 = RATE; memcpy(header + 24, &v32, 4); v32 = RATE * 8; memcpy(header + 28, &v32, 4);
    v16 = 8; memcpy(header + 32, &v16, 2); v16 = 32; memcpy(header + 34, &v16, 2);
    memcpy(header + 36, "data", 4); memcpy(header + 40, &data_bytes, 4);
    if (fwrite(header, 1, 44, out) != 44) { perror(argv[2]); return 1; }
    static float bus[BLOCK], stereo[4096 * 2];
    int fill = 0;
    size_t next = 0;
    struct timespec v0, v1;
    double voice_seconds;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &v0);
    for (long t = 0; t < frames;) {
        while (next < count && events[next].sample <= t) {
            Event *e = &events[next++];
            if (e->kind == 0) {
                for (int i = 0; i < POOL; i++) if (!voices[i].active) {
                    voices[i] = (Voice){1, e->channel, e->key, 0, 0, 0, pow(2, (e->key - 69) / 12.0),
                                        (float)(e->value / 127 * 0.05), 0, 0};  /* as Csound's and scsynth's */
                    break;
                }
            } else if (e->kind == 1) {
                for (int i = 0; i < POOL; i++) {
                    Voice *v = &voices[i];
                    if (v->active && !v->releasing && v->channel == e->channel && v->key == e->key) {
                        v->releasing = 1; v->release_left = (long)(v->level * 0.08 * RATE + 0.5);
                    }
                }
            } else {
                bend_ratio[e->channel] = pow(2, e->value / 12);
            }
        }
        int n = BLOCK;
        if (frames - t < n) n = (int)(frames - t);
        if (next < count && events[next].sample - t < n) n = (int)(events[next].sample - t);
        memset(bus, 0, sizeof bus);
        for (int i = 0; i < POOL; i++) if (voices[i].active) render_voice(&voices[i], bus, n);
        for (int j = 0; j < n; j++) {
            float s = fminf(1.0f, fmaxf(-1.0f, bus[j]));
            stereo[2 * fill] = s; stereo[2 * fill + 1] = s;
            if (++fill == 4096) {
                if (fwrite(stereo, 8, (size_t)fill, out) != (size_t)fill) { perror(argv[2]); return 1; }
                fill = 0;
            }
        }
        t += n;
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &v1);
    voice_seconds = (double)(v1.tv_sec - v0.tv_sec) + 1e-9 * (double)(v1.tv_nsec - v0.tv_nsec);
    if (fill && fwrite(stereo, 8, (size_t)fill, out) != (size_t)fill) { perror(argv[2]); return 1; }
    if (fclose(out) != 0) { perror(argv[2]); return 1; }
    free(events);
    printf("loop_cpu_s %.6f\n", voice_seconds);   /* the render loop alone, for the report */
    return 0;
}
