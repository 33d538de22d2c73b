#ifndef TONESHAPER_CREFERENCE_H
#define TONESHAPER_CREFERENCE_H

#include <stdint.h>

/// The drawn curve as straight segments over u in [0, lastX]: segment j covers u < end[j].
/// Same layout as the engine's FrequencyCurve (first and last segments are flat, last end = +inf).
typedef struct {
    const double *end;
    const double *slope;
    const double *intercept;
    double du;      /* position step per sample (curve units) */
    double period;  /* loop length: lastX + du */
} cref_curve;

/// One voice's state: position in the curve, segment cursor, phase integral (wrapped), last
/// frequency (the trapezoid's overlap), transposition ratio and gain.
typedef struct {
    double u;
    long seg;
    double phase;
    double f;
    double ratio;
    double gain;
} cref_voice;

/// Renders `frames` frames in blocks of `block` (<= 4096): for every block, every voice runs the
/// per-sample algorithm (u += du, wrap, segment cursor, linear interpolation, f = v*ratio,
/// trapezoid phase += (f_prev + f)/2/rate, wrap to [0,1), gain * sin(2*pi*phase)) and is added to a
/// float bus. Returns a checksum of the bus so nothing is optimised away.
/// `poly` = 0: libm sin on the double phase (the reference). `poly` = 1: the engine's float
/// polynomial sin(2*pi*x) instead, to separate the cost of sin from the rest of the loop.
double cref_render_sine(cref_voice *voices, int voiceCount, const cref_curve *curve, double sampleRate,
                        long frames, int block, int poly);

#endif
