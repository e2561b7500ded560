/*===- soac_calls.h - the call a thread works for --------------------------===*
 *
 * Shared by the parts of soac's CPU and GPU runtimes: a call made through
 * soac_call_checked keeps its first failure and the buffers it has
 * allocated, so that a failed call frees them all (soac_calls.c); the
 * allocation functions add and remove buffers (soac_runtime.c,
 * soac_cuda_runtime.c).
 *
 *===----------------------------------------------------------------------===*/
#ifndef SOAC_CALLS_H
#define SOAC_CALLS_H

#include <stddef.h>
#include <stdint.h>

/* Kinds of failure, as soac-lower-checks numbers them (FailureKind). */
enum {
  SOAC_FAILED_CHECK = 1,  /* a cf.assert: sizes of a SOAC's operands */
  SOAC_INDEX_OUT_OF_RANGE = 2,
  SOAC_OUT_OF_MEMORY = 3, /* allocation failed, or its size overflowed */
  SOAC_DEVICE_FAILURE = 4, /* the GPU driver failed (a kernel faulted) */
};

/* Adds `pointer` to, or removes it from, the buffers of the call the thread
 * works for (nothing outside a checked call). */
void soac_track_allocation(void *pointer);
void soac_untrack_allocation(void *pointer);

/* Frees a tracked buffer of a failed call: each runtime's allocation
 * functions define it (free, or the GPU's free). */
void soac_free_tracked(void *pointer);

/* Waits for the kernels this thread still has in flight (each runtime
 * defines it: the CPU has none). A failed check they recorded stops the
 * call, as soac_report_error does, when `report` is 1: when a checked call's
 * function has returned. With 0 it is dropped: when a call starts (what a
 * direct call left is not its failure) and after a call has stopped. */
void soac_settle_kernels(int report);

/* Stops the call (longjmp) with a failure of `kind`: `format` (printf, two
 * `%lld`s at most) with `a` and `b`; outside a checked call, prints it and
 * aborts. */
_Noreturn void soac_report_error(int32_t kind, const char *format, int64_t a,
                                 int64_t b);

/* The record of failed checks of the kernels a thread launches
 * (soac_failure_record, soac-lower-kernel-checks): the failed check's kind
 * (0: none), the address of its message, its two values. */
enum { SOAC_FAILURE_RECORD_WORDS = 4 };

/* Stops the call with the failure `record` holds, if any, and clears it
 * (both runtimes, once the kernels that may write it have finished). */
void soac_report_recorded_failure(int64_t *record);

#endif /* SOAC_CALLS_H */
