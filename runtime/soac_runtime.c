/*===- soac_runtime.c - memory of compiled soac code ------------------------===*
 *
 * The allocation functions compiled code calls (finalize-memref-to-llvm with
 * use-generic-functions). Memory comes from malloc, so that whoever receives a
 * result buffer frees it with free(). Large buffers are advised to use
 * transparent huge pages, as numpy does for its arrays: the first touch of a
 * fresh 40 MB buffer then costs about a fifth of the page faults' time.
 * Allocation failure returns NULL, which compiled code checks
 * (soac-lower-checks). Buffers allocated during a checked call are tracked,
 * so that a failed call frees them (soac_calls.c).
 * Also here: the record of failed checks in kernels emulated on the CPU.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "soac_calls.h"

enum { HUGE_PAGE_THRESHOLD = 4 << 20 };

static void advise_huge_pages(void *p, size_t size) {
#ifdef MADV_HUGEPAGE
  if (!p || size < HUGE_PAGE_THRESHOLD)
    return;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
  uintptr_t end = ((uintptr_t)p + size) & ~(page - 1);
  if (end > start)
    madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
  (void)p;
  (void)size;
#endif
}

/* malloc(0) may return NULL, which compiled code takes for a failure. */
void *_mlir_memref_to_llvm_alloc(size_t size) {
  void *p = malloc(size ? size : 1);
  advise_huge_pages(p, size);
  soac_track_allocation(p);
  return p;
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  void *p = NULL;
  if (alignment < sizeof(void *))
    alignment = sizeof(void *);
  if (posix_memalign(&p, alignment, size ? size : 1) != 0)
    return NULL;
  advise_huge_pages(p, size);
  soac_track_allocation(p);
  return p;
}

void _mlir_memref_to_llvm_free(void *p) {
  soac_untrack_allocation(p);
  free(p);
}

void soac_free_tracked(void *p) { free(p); }

/* The failure record of the kernels' checks this thread launches
 * (soac-lower-kernel-checks): kernels emulated on the CPU record their
 * first failed check here, and the launching code reports it. */
static _Thread_local int64_t kernel_failures[3];

void *soac_failure_record(void) { return kernel_failures; }

/* Emulated kernels have finished when their loops end: nothing to wait for,
 * neither before the record of failed checks is read nor when a checked
 * call returns (soac_calls.c). */
void soac_wait_for_kernels(void) {}

void soac_call_finish(void) {}
