#ifndef TONESHAPER_CALLOCCOUNT_H
#define TONESHAPER_CALLOCCOUNT_H
#include <stdint.h>
/// Starts counting malloc/calloc/realloc/memalign calls made by the calling thread.
void bench_alloc_start(void);
/// Stops counting and returns the number of calls since bench_alloc_start.
int64_t bench_alloc_stop(void);
#endif
