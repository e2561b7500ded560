/*===- soac_runtime.c - memory and failed checks of compiled soac code -----===*
 *
 * The allocation functions compiled code calls (finalize-memref-to-llvm with
 * use-generic-functions). Memory comes from malloc, so that whoever receives a
 * result buffer frees it with free(). Large buffers are advised to use
 * transparent huge pages, as numpy does for its arrays: the first touch of a
 * fresh 40 MB buffer then costs about a fifth of the page faults' time. Its
 * soac_call_checked stops a call at a failed check (soac_report_error).
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
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

/* Failed checks of compiled code (soac-report-failed-asserts). A call made
 * through soac_call_checked stops at the first failed check and returns its
 * message (the temporaries it had allocated are leaked). Anywhere else, and
 * inside an OpenMP parallel region (whose other threads wait for this one),
 * the process prints the message and aborts, as a failed cf.assert does.
 * Messages are constants of the compiled code. */
static _Thread_local jmp_buf *checked_call;
static _Thread_local const char *failed_check;

int omp_in_parallel(void) __attribute__((weak));

void soac_report_error(const char *message) {
  int in_parallel = omp_in_parallel && omp_in_parallel();
  if (checked_call && !in_parallel) {
    failed_check = message;
    longjmp(*checked_call, 1);
  }
  fprintf(stderr, "%s\n", message);
  fflush(stderr);
  abort();
}

/* Calls `packed` (MLIR's packed interface: an array of pointers to the
 * arguments, then to the result) on `args`; returns NULL, or the message of
 * the check that stopped it. */
const char *soac_call_checked(void (*packed)(void **), void **args) {
  jmp_buf here;
  jmp_buf *outer = checked_call;
  checked_call = &here;
  if (setjmp(here)) {
    checked_call = outer;
    return failed_check;
  }
  packed(args);
  checked_call = outer;
  return NULL;
}
