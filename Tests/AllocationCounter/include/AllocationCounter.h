#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H
#include <stdint.h>

/// Starts counting allocations made by the calling thread (malloc, calloc, realloc, memalign family).
void allocation_counter_start(void);
/// Stops counting and returns how many allocations the calling thread made since start.
int64_t allocation_counter_stop(void);

#endif
