// The core-to-core round trip, in C because pinning a thread to a CPU needs the cpu_set_t macros.
// A render on two threads moves its buses, voices and work claims between cores every span, so
// its speed-up follows this figure: on a VM the two vCPUs may sit on cores that share a cache or
// on cores that do not, and move between the two (Benchmarks/README.md).
#define _GNU_SOURCE
#include "CCrossCore.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) _Atomic long line;
struct side { int cpu; int trips; };

static int pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *answer(void *raw) {
    struct side *side = raw;
    if (pin(side->cpu) != 0) return (void *)1;
    for (long i = 0; i < side->trips; i++) {
        while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 1) {}
        atomic_store_explicit(&line, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

static int compare(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double cross_core_round_trip(int a, int b, int trips, int rounds) {
    double results[64];
    if (rounds < 1) rounds = 1;
    if (rounds > 64) rounds = 64;
    cpu_set_t saved;
    pthread_getaffinity_np(pthread_self(), sizeof saved, &saved);
    if (pin(a) != 0) return -1;
    for (int r = 0; r < rounds; r++) {
        atomic_store(&line, 0);
        struct side side = { b, trips };
        pthread_t thread;
        if (pthread_create(&thread, NULL, answer, &side) != 0) return -1;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long i = 0; i < trips; i++) {
            atomic_store_explicit(&line, 2 * i + 1, memory_order_release);
            while (atomic_load_explicit(&line, memory_order_acquire) != 2 * i + 2) {}
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        void *failed = NULL;
        pthread_join(thread, &failed);
        if (failed) return -1;
        results[r] = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / trips;
    }
    pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
    qsort(results, rounds, sizeof results[0], compare);
    return results[rounds / 2];
}
