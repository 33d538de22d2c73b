// Where a new thread starts. Hand-written because glibc's CPU-affinity calls sit behind _GNU_SOURCE
// and the CPU_* macros, which Swift does not import.
//
// Why it matters: Linux places a new thread on its creator's CPU and leaves it to the load balancer
// to move it to an idle one; on a small VM the idle CPU sleeps and that move took up to 40 ms, the
// two render threads taking turns on one core meanwhile. Started on another CPU, a helper works at
// once; released to every CPU as it starts, it is not pinned.
#define _GNU_SOURCE
#include "CThreadPlacement.h"

#include <sched.h>
#include <unistd.h>

int toneshaper_start_elsewhere(pthread_attr_t *attr) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 0;
    int here = sched_getcpu();
    if (here < 0 || here >= CPU_SETSIZE || !CPU_ISSET(here, &allowed)) return 0;
    CPU_CLR(here, &allowed);
    if (CPU_COUNT(&allowed) == 0) return 0;
    return pthread_attr_setaffinity_np(attr, sizeof allowed, &allowed) == 0 ? 1 : 0;
}

int toneshaper_run_anywhere(void) {
    cpu_set_t allowed;
    if (sched_getaffinity(getpid(), sizeof allowed, &allowed) != 0) return 1;
    return pthread_setaffinity_np(pthread_self(), sizeof allowed, &allowed);
}

int toneshaper_current_cpu(void) { return sched_getcpu(); }
