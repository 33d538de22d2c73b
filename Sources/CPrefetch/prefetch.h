#ifndef TONESHAPER_PREFETCH_H
#define TONESHAPER_PREFETCH_H

/// Asks for the cache line holding `address` ahead of its use (Swift has no prefetch of its own).
/// A hint only: it never faults, whatever the address, and changes no value.
static inline __attribute__((always_inline)) void toneshaper_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
