// Counts heap allocations on one thread by wrapping glibc's allocator entry points.
// Everything is forwarded to glibc's __libc_* functions; only a thread-local counter is added.
#define _GNU_SOURCE
#include "CAllocCount.h"
#include <errno.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static __thread int active;
static __thread int64_t calls;

void bench_alloc_start(void) { calls = 0; active = 1; }
int64_t bench_alloc_stop(void) { active = 0; return calls; }

void *malloc(size_t n) { if (active) calls++; return __libc_malloc(n); }
void *calloc(size_t k, size_t n) { if (active) calls++; return __libc_calloc(k, n); }
void *realloc(void *p, size_t n) { if (active) calls++; return __libc_realloc(p, n); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t a, size_t n) { if (active) calls++; return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { if (active) calls++; return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    if (active) calls++;
    if (a % sizeof(void *) != 0 || (a & (a - 1)) != 0) return EINVAL;
    void *p = __libc_memalign(a, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
