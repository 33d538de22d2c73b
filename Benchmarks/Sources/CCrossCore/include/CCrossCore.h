#ifndef CCROSSCORE_H
#define CCROSSCORE_H
/// Nanoseconds for one cache line to go from CPU `a` to CPU `b` and back (median of `rounds`
/// rounds of `trips` hand-offs between two threads pinned to those CPUs); -1 when pinning fails.
double cross_core_round_trip(int a, int b, int trips, int rounds);
#endif
