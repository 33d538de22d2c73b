// Plain C reference of ToneShaper's per-sample voice algorithm (written for this benchmark).
#include "CReference.h"
#include <math.h>
#include <string.h>

static inline float poly_sin_2pi(float x) {
    /* sin(2*pi*x) for x in [0,1): fold to [0, 1/4], odd Taylor series to z^11 (as the engine). */
    float y = x - 0.5f;
    float a = fabsf(y);
    float folded = fminf(a, 0.5f - a);
    float z = 6.2831853071795864f * folded;
    float z2 = z * z;
    float p = -2.5052108e-08f;
    p = p * z2 + 2.7557319e-06f;
    p = p * z2 - 1.9841270e-04f;
    p = p * z2 + 8.3333333e-03f;
    p = p * z2 - 1.6666667e-01f;
    p = p * z2 + 1.0f;
    float s = z * p;
    return y < 0 ? s : -s;
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
