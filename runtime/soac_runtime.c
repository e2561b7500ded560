/*===- soac_runtime.c - memory and failed checks of compiled soac code -----===*
 *
 * The allocation functions compiled code calls (finalize-memref-to-llvm with
 * use-generic-functions). Memory comes from malloc, so that whoever receives a
 * result buffer frees it with free(). Large buffers are advised to use
 * transparent huge pages, as numpy does for its arrays: the first touch of a
 * fresh 40 MB buffer then costs about a fifth of the page faults' time. It
 * also keeps the first failed check of a call (soac_report_error).
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

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

void *_mlir_memref_to_llvm_alloc(size_t size) {
  void *p = malloc(size);
  advise_huge_pages(p, size);
  return p;
}

void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size) {
  void *p = NULL;
  if (alignment < sizeof(void *))
    alignment = sizeof(void *);
  if (posix_memalign(&p, alignment, size) != 0)
    return NULL;
  advise_huge_pages(p, size);
  return p;
}

void _mlir_memref_to_llvm_free(void *p) { free(p); }

/* Failed checks of compiled code (soac-report-failed-asserts): the first
 * message since the last soac_take_error, for the caller to raise. Messages
 * are constants of the compiled code. Shared by the threads of a call. */
static _Atomic(const char *) first_error;

void soac_report_error(const char *message) {
  const char *none = NULL;
  atomic_compare_exchange_strong(&first_error, &none, message);
}

const char *soac_take_error(void) { return atomic_exchange(&first_error, NULL); }
