/*===- soac_calls.h - the call a thread works for --------------------------===*
 *
 * Shared by the parts of soac's CPU runtime: a call made through
 * soac_call_checked keeps its first failure and the buffers it has
 * allocated, so that a failed call frees them all (soac_calls.c); the
 * allocation functions add and remove buffers (soac_runtime.c).
 *
 *===----------------------------------------------------------------------===*/
#ifndef SOAC_CALLS_H
#define SOAC_CALLS_H

#include <stddef.h>

/* Kinds of failure, as soac-lower-checks numbers them (FailureKind). */
enum {
  SOAC_FAILED_CHECK = 1,  /* a cf.assert: sizes of a SOAC's operands */
  SOAC_INDEX_OUT_OF_RANGE = 2,
  SOAC_OUT_OF_MEMORY = 3, /* allocation failed, or its size overflowed */
};

/* Adds `pointer` to, or removes it from, the buffers of the call the thread
 * works for (nothing outside a checked call). */
void soac_track_allocation(void *pointer);
void soac_untrack_allocation(void *pointer);

#endif /* SOAC_CALLS_H */
