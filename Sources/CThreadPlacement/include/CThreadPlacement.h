#ifndef TONESHAPER_THREAD_PLACEMENT_H
#define TONESHAPER_THREAD_PLACEMENT_H

#include <pthread.h>

/// Sets `attr` so that a thread created with it starts on one of the CPUs the calling thread may
/// use other than the one it is running on now. Returns 1 if set; 0 when there is no other CPU or
/// the calls failed (then `attr` is unchanged and the thread starts wherever the kernel puts it).
int toneshaper_start_elsewhere(pthread_attr_t *attr);

/// Lets the calling thread run on every CPU the process may use (the main thread's set): undoes
/// `toneshaper_start_elsewhere` once the thread runs. Returns 0, or an errno value.
int toneshaper_run_anywhere(void);

/// The CPU the calling thread is running on, or -1.
int toneshaper_current_cpu(void);

#endif
