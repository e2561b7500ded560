/*===- soac_openmp.c - thread counts from the OpenMP runtime soac runs on ---===*
 *
 * Compiled code asks the OpenMP runtime how many threads a parallel loop will
 * get (omp_get_max_threads) and, in GPU kernels emulated on the CPU, the size
 * of its team and the number of its thread. Its parallel regions are forked by
 * libiomp5 (__kmpc_fork_call), so the answers must come from libiomp5 too.
 * Called by name, these functions would resolve to the first library of the
 * process's global scope that defines them: after `import torch` that is
 * PyTorch's libgomp, whose answers describe none of libiomp5's teams (an
 * emulated kernel's team looked smaller than its block, and
 * soac.set_num_threads did not reach the choice between parallel and
 * sequential loops). Compiled code calls these functions instead, which look
 * the queries up in libiomp5 itself.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>

typedef int (*openmp_query)(void);

/* `name` in libiomp5 once it is loaded (the JIT and soac.set_num_threads
 * load it), else wherever the process finds it; NULL when nowhere. */
static void *find(const char *name) {
  void *library = dlopen("libiomp5.so", RTLD_NOW | RTLD_NOLOAD);
  void *query = library ? dlsym(library, name) : NULL;
  if (library)
    dlclose(library); /* drops the reference RTLD_NOLOAD added */
  return query ? query : dlsym(RTLD_DEFAULT, name);
}

/* The answer of `name`, looked up once per process; `otherwise` when no
 * OpenMP runtime is loaded (then no parallel region runs either). */
static int ask(_Atomic(void *) *cache, const char *name, int otherwise) {
  void *query = atomic_load_explicit(cache, memory_order_acquire);
  if (!query) {
    query = find(name);
    if (!query)
      return otherwise;
    atomic_store_explicit(cache, query, memory_order_release);
  }
  return ((openmp_query)query)();
}

int soac_omp_max_threads(void) {
  static _Atomic(void *) cache;
  return ask(&cache, "omp_get_max_threads", 1);
}

int soac_omp_team_size(void) {
  static _Atomic(void *) cache;
  return ask(&cache, "omp_get_num_threads", 1);
}

int soac_omp_thread_number(void) {
  static _Atomic(void *) cache;
  return ask(&cache, "omp_get_thread_num", 0);
}
