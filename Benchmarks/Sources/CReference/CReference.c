// Plain C reference of ToneShaper's per-sample voice algorithm (written for this benchmark).
#include "CReference.h"
#include <math.h>
#include <string.h>

static inline float poly_sin_2pi(float x) {
    /* sin(2*pi*x) for x in [0,1), as the engine's fastSin2Pi: s = x centred on 0, then
       (s*(1/4 - s^2))*4R(s^2) with R the degree-4 polynomial of docs/fit-sine.py (no fold). */
    float s = x < 0.5f ? x : x - 1.0f;
    float q = s * s;
    float r = 12.233301f;
    r = r * q - 38.123196f;
    r = r * q + 67.0439f;
    r = r * q - 64.83468f;
    r = r * q + 25.13273f;
    return (s * (0.25f - q)) * r;
}

static void render_voice(cref_voice *v, const cref_curve *c, double halfStep, int count, float *bus, int poly) {
    const double *end = c->end, *slope = c->slope, *intercept = c->intercept;
    const double du = c->du, period = c->period, ratio = v->ratio, gain = v->gain;
    double u = v->u, phase = v->phase, f = v->f;
    long seg = v->seg;
    for (int n = 0; n < count; n++) {
        /* Output of this sample from the current state. */
        if (poly) bus[n] += (float)gain * poly_sin_2pi((float)phase);
        else bus[n] += (float)(gain * sin(6.283185307179586 * phase));
        /* Advance: position in the curve, interpolated frequency, trapezoidal phase, wrap. */
        u += du;
        if (u >= period) { u -= period; seg = 0; }
        while (u >= end[seg]) seg++;
        double fNext = (intercept[seg] + slope[seg] * u) * ratio;
        phase += (f + fNext) * halfStep;
        f = fNext;
        phase -= (double)(long)phase;
    }
    v->u = u; v->phase = phase; v->f = f; v->seg = seg;
}

double cref_render_sine(cref_voice *voices, int voiceCount, const cref_curve *curve, double sampleRate,
                        long frames, int block, int poly) {
    float bus[4096];
    double checksum = 0;
    const double halfStep = 0.5 / sampleRate;
    if (block > 4096) block = 4096;
    for (long start = 0; start < frames; start += block) {
        int count = (int)(frames - start < block ? frames - start : block);
        memset(bus, 0, sizeof(float) * (size_t)count);
        for (int i = 0; i < voiceCount; i++) render_voice(&voices[i], curve, halfStep, count, bus, poly);
        checksum += bus[0] + bus[count - 1];
    }
    return checksum;
}
