// Interposes glibc's allocator for the test process and counts calls made by a thread that asked
// to be counted. The real work is forwarded to glibc's own __libc_* entry points, so behaviour is
// unchanged; only a thread-local counter is touched.
#define _GNU_SOURCE
#include "AllocationCounter.h"
#include <stddef.h>
#include <errno.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static __thread int counting = 0;
static __thread int64_t count = 0;

static inline void note(void) { if (counting) count++; }

void allocation_counter_start(void) { count = 0; counting = 1; }
int64_t allocation_counter_stop(void) { counting = 0; return count; }

void *malloc(size_t size) { note(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { note(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { note(); return __libc_realloc(p, size); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    note();
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
