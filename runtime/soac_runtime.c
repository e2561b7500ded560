/*===- soac_runtime.c - memory of compiled soac code ------------------------===*
 *
 * The allocation functions compiled code calls (finalize-memref-to-llvm with
 * use-generic-functions). Memory comes from malloc, so that whoever receives a
 * result buffer frees it with free(). Large buffers are advised to use
 * transparent huge pages, as numpy does for its arrays: the first touch of a
 * fresh 40 MB buffer then costs about a fifth of the page faults' time.
 * Large buffers freed by compiled code are kept for its next allocations
 * (below). Allocation failure returns NULL, which compiled code checks
 * (soac-lower-checks). Buffers allocated during a checked call are tracked,
 * so that a failed call frees them (soac_calls.c).
 * Also here: the record of failed checks in kernels emulated on the CPU.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
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

/* Buffers of KEPT_SIZE bytes or more that compiled code frees are kept, up
 * to KEPT_BUFFERS of them and KEPT_BYTES in all, for its next allocations
 * of as much or up to half as much. glibc gives such buffers back to the
 * system (they are mmap'ed, or trimmed from the top of the heap), so a
 * function that allocates one per call faulted in and zeroed every page of
 * it at every call: k-means' gradient, one 51 MB buffer per call, spent 15 %
 * of its time there on 8 threads; a linear regression over 1.6 million rows
 * (12.8 MB temporaries) ran its loss in 15 ms instead of 8.4 ms with 16 MB
 * as the bound. The bound is 64 KB now, with 8 buffers: the Rosenbrock HVP
 * over 100,000 points (0.8 MB temporaries, given back by glibc's heap trim)
 * went from 0.47 to 0.25-0.36 ms per call, and from 4.9 to 2.1 ms over
 * 400,000. A kept buffer is still a malloc'ed one, so a caller that
 * receives it frees it with free(). */
enum { KEPT_BUFFERS = 8 };
#define KEPT_SIZE ((size_t)64 << 10)
#define KEPT_BYTES ((size_t)1 << 30)
static struct {
  pthread_mutex_t lock;
  void *buffers[KEPT_BUFFERS];
  size_t sizes[KEPT_BUFFERS];
} kept = {PTHREAD_MUTEX_INITIALIZER, {0}, {0}};

/* The smallest kept buffer of at least `size` bytes (at most twice that)
 * aligned to `alignment`, or NULL. The smallest, so that a small request
 * does not take the buffer a later, larger one of the same call needs. */
static void *reuse(size_t size, size_t alignment) {
  if (size < KEPT_SIZE)
    return NULL;
  int best = -1;
  pthread_mutex_lock(&kept.lock);
  for (int i = 0; i < KEPT_BUFFERS; ++i)
    if (kept.buffers[i] && kept.sizes[i] >= size && kept.sizes[i] / 2 <= size &&
        (uintptr_t)kept.buffers[i] % alignment == 0 &&
        (best < 0 || kept.sizes[i] < kept.sizes[best]))
      best = i;
  void *found = best < 0 ? NULL : kept.buffers[best];
  if (best >= 0)
    kept.buffers[best] = NULL;
  pthread_mutex_unlock(&kept.lock);
  return found;
}

/* Frees `p`, or keeps it: in an empty place, or in the place of the
 * smallest kept buffer if `p` is larger, while they hold KEPT_BYTES at most. */
static void release(void *p) {
  size_t size = p ? malloc_usable_size(p) : 0;
  if (size < KEPT_SIZE || size > KEPT_BYTES) {
    free(p);
    return;
  }
  pthread_mutex_lock(&kept.lock);
  int slot = 0;
  size_t total = 0;
  for (int i = 0; i < KEPT_BUFFERS; ++i) {
    total += kept.buffers[i] ? kept.sizes[i] : 0;
    if (kept.buffers[slot] && (!kept.buffers[i] || kept.sizes[i] < kept.sizes[slot]))
      slot = i;
  }
  size_t replaced = kept.buffers[slot] ? kept.sizes[slot] : 0;
  void *dropped = p;
  if ((!kept.buffers[slot] || replaced < size) && total - replaced + size <= KEPT_BYTES) {
    dropped = kept.buffers[slot];
    kept.buffers[slot] = p;
    kept.sizes[slot] = size;
  }
  pthread_mutex_unlock(&kept.lock);
  free(dropped);
}

/* Frees every kept buffer; whether there was one. */
static int drop_kept(void) {
  void *dropped[KEPT_BUFFERS];
  int count = 0;
  pthread_mutex_lock(&kept.lock);
  for (int i = 0; i < KEPT_BUFFERS; ++i)
    if (kept.buffers[i]) {
      dropped[count++] = kept.buffers[i];
      kept.buffers[i] = NULL;
    }
  pthread_mutex_unlock(&kept.lock);
  for (int i = 0; i < count; ++i)
    free(dropped[i]);
  return count > 0;
}

/* New memory (NULL when there is none, even once the kept buffers are
 * given back), advised to use huge pages. malloc(0) may return NULL, which
 * compiled code takes for a failure: at least a byte is asked for. */
static void *fresh(size_t size, size_t alignment) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    void *p = NULL;
    if (posix_memalign(&p, alignment, size ? size : 1) == 0) {
      advise_huge_pages(p, size);
      return p;
    }
    if (!drop_kept())
      break;
  }
  return NULL;
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  if (alignment < sizeof(void *))
    alignment = sizeof(void *);
  void *p = reuse(size, alignment);
  if (!p)
    p = fresh(size, alignment);
  soac_track_allocation(p);
  return p;
}

/* malloc's alignment, which posix_memalign gives for any smaller one. */
void *_mlir_memref_to_llvm_alloc(size_t size) {
  return _mlir_memref_to_llvm_aligned_alloc(sizeof(void *), size);
}

void _mlir_memref_to_llvm_free(void *p) {
  soac_untrack_allocation(p);
  release(p);
}

void soac_free_tracked(void *p) { release(p); }

/* The failure record of the kernels' checks this thread launches
 * (soac-lower-kernel-checks; its words: soac_calls.h). Kernels emulated on
 * the CPU record their first failed check here. */
static _Thread_local int64_t kernel_failures[SOAC_FAILURE_RECORD_WORDS];

void *soac_failure_record(void) { return kernel_failures; }

/* After each launch whose kernel has checks: emulated kernels are done when
 * their loops end, so a recorded failure stops the call at once. */
void soac_check_kernel_failures(void) {
  soac_report_recorded_failure(kernel_failures);
}

/* Nothing is left in flight when CPU code returns, and a failure was
 * reported right after its launch. */
void soac_settle_kernels(int report) {
  if (!report)
    kernel_failures[0] = 0;
}
