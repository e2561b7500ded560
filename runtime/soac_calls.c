/*===- soac_calls.c - checked calls of compiled soac code ------------------===*
 *
 * A call made through soac_call_checked stops at the first failed run-time
 * check and returns the check's message instead of aborting the process:
 *
 *  - on the calling thread, a failed check (soac_report_error) jumps back
 *    to soac_call_checked at once;
 *  - on a thread of a parallel region, which cannot be stopped, it is
 *    recorded (soac_record_error) and the compiled code skips what the check
 *    guarded; the call stops when the region ends (soac_parallel_check), or
 *    when it returns.
 *
 * Either way every buffer the call allocated and did not free (results
 * included) is freed, so a failed call leaks nothing. Each thread of a
 * parallel region learns which call it works for from soac_parallel_enter.
 * Outside a checked call (a C program calling a shared library directly) a
 * failed check prints its message and aborts, as cf.assert does.
 *
 *===----------------------------------------------------------------------===*/

#include "soac_calls.h"

#include <inttypes.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Buffers a call allocated and has not freed: an open-addressing hash set
 * of pointers (linear probing, deletion by backward shift), locked while
 * the threads of a parallel region may use it (Call, below). */
typedef struct {
  void **slots;
  size_t capacity; /* a power of two, or 0 */
  size_t count;
} PointerSet;

/* Buffers allocated inside parallel regions go to one of STRIPES sets,
 * chosen by the pointer, each with its own lock: with one lock for the whole
 * call, threads that allocate per row spent their time waiting for each
 * other (BA's gradient on 16 threads took 37 times as long as on one). */
enum { STRIPES = 64, STRIPE_BITS = 6, CACHE_LINE = 64 };
typedef struct {
  _Alignas(CACHE_LINE) atomic_flag lock;
  PointerSet set;
} Stripe;

typedef struct Call {
  jmp_buf stop;
  atomic_int failure; /* 0, or the kind of the first failure */
  char message[1024];
  PointerSet live;   /* buffers allocated outside parallel regions */
  atomic_flag lock;  /* of `live` while parallel regions run */
  _Atomic(Stripe *) stripes; /* made by the first allocation in a region */
  atomic_int tracking; /* 0 once a set could not grow: nothing is tracked */
} Call;

static _Thread_local Call *current;     /* the call this thread works for */
static _Thread_local int parallel_depth; /* parallel regions it is inside */
static _Thread_local Call *outside;      /* `current` before the outermost region */
static _Thread_local int last_failure;   /* the kind, for soac_failure_kind */
static _Thread_local char last_message[1024];

/* Fibonacci hashing: its high bits depend on all of the pointer's. */
static uint64_t pointer_hash(void *pointer) {
  return (uint64_t)(uintptr_t)pointer * 0x9E3779B97F4A7C15ull;
}

static size_t slot_of(const PointerSet *set, void *pointer) {
  return (size_t)(pointer_hash(pointer) >> 20) & (set->capacity - 1);
}

static int set_grow(PointerSet *set) {
  size_t capacity = set->capacity ? set->capacity * 2 : 64;
  void **slots = calloc(capacity, sizeof *slots);
  if (!slots)
    return 0;
  PointerSet grown = {slots, capacity, 0};
  for (size_t i = 0; i < set->capacity; ++i)
    if (set->slots[i]) {
      size_t j = slot_of(&grown, set->slots[i]);
      while (grown.slots[j])
        j = (j + 1) & (capacity - 1);
      grown.slots[j] = set->slots[i];
      grown.count++;
    }
  free(set->slots);
  *set = grown;
  return 1;
}

static int set_add(PointerSet *set, void *pointer) {
  if ((set->count + 1) * 2 > set->capacity && !set_grow(set))
    return 0;
  size_t i = slot_of(set, pointer);
  while (set->slots[i])
    i = (i + 1) & (set->capacity - 1);
  set->slots[i] = pointer;
  set->count++;
  return 1;
}

/* Whether `pointer` was in the set (and is no longer). */
static int set_remove(PointerSet *set, void *pointer) {
  if (!set->capacity)
    return 0;
  size_t mask = set->capacity - 1, hole = slot_of(set, pointer);
  while (set->slots[hole] != pointer) {
    if (!set->slots[hole])
      return 0; /* not here */
    hole = (hole + 1) & mask;
  }
  set->slots[hole] = NULL;
  set->count--;
  /* Backward shift: an entry later in the run moves into the hole unless its
   * home slot lies cyclically in (hole, j]. */
  for (size_t j = (hole + 1) & mask; set->slots[j]; j = (j + 1) & mask) {
    size_t home = slot_of(set, set->slots[j]);
    int stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays)
      continue;
    set->slots[hole] = set->slots[j];
    set->slots[j] = NULL;
    hole = j;
  }
  return 1;
}

static void spin(atomic_flag *flag) {
  while (atomic_flag_test_and_set_explicit(flag, memory_order_acquire))
    ;
}

static void release(atomic_flag *flag) {
  atomic_flag_clear_explicit(flag, memory_order_release);
}

/* `live` needs its lock only while the threads of a region may use it. */
static void lock(Call *call) {
  if (parallel_depth)
    spin(&call->lock);
}

static void unlock(Call *call) {
  if (parallel_depth)
    release(&call->lock);
}

/* The stripe of `pointer`, or null where the call has none (yet, or the
 * memory for them could not be had); `make` makes them on first use. */
static Stripe *stripe_of(Call *call, void *pointer, int make) {
  Stripe *stripes = atomic_load_explicit(&call->stripes, memory_order_acquire);
  if (!stripes && make) {
    lock(call);
    stripes = atomic_load_explicit(&call->stripes, memory_order_acquire);
    if (!stripes && (stripes = aligned_alloc(CACHE_LINE, STRIPES * sizeof(Stripe)))) {
      memset(stripes, 0, STRIPES * sizeof(Stripe));
      for (int i = 0; i < STRIPES; ++i)
        atomic_flag_clear(&stripes[i].lock);
      atomic_store_explicit(&call->stripes, stripes, memory_order_release);
    }
    unlock(call);
  }
  if (!stripes)
    return NULL;
  return &stripes[pointer_hash(pointer) >> (64 - STRIPE_BITS)];
}

void soac_track_allocation(void *pointer) {
  Call *call = current;
  if (!call || !pointer || !atomic_load_explicit(&call->tracking, memory_order_relaxed))
    return;
  int added;
  if (parallel_depth) {
    Stripe *stripe = stripe_of(call, pointer, 1);
    added = stripe != NULL;
    if (stripe) {
      spin(&stripe->lock);
      added = set_add(&stripe->set, pointer);
      release(&stripe->lock);
    }
  } else {
    added = set_add(&call->live, pointer);
  }
  if (!added) /* out of memory for the sets themselves: stop tracking */
    atomic_store_explicit(&call->tracking, 0, memory_order_relaxed);
}

/* A buffer is freed by the thread that allocated it, or after its region:
 * its stripe first, then the buffers allocated outside regions. */
void soac_untrack_allocation(void *pointer) {
  Call *call = current;
  if (!call || !pointer)
    return;
  Stripe *stripe = stripe_of(call, pointer, 0);
  if (stripe) {
    spin(&stripe->lock);
    int found = set_remove(&stripe->set, pointer);
    release(&stripe->lock);
    if (found)
      return;
  }
  lock(call);
  set_remove(&call->live, pointer);
  unlock(call);
}

/* Keeps the first failure of `call`; later ones are dropped. */
static void record(Call *call, int kind, const char *format, int64_t a, int64_t b) {
  int none = 0;
  if (atomic_compare_exchange_strong(&call->failure, &none, kind))
    snprintf(call->message, sizeof call->message, format, (long long)a, (long long)b);
}

_Noreturn static void die(const char *format, int64_t a, int64_t b) {
  fprintf(stderr, format, (long long)a, (long long)b);
  fputc('\n', stderr);
  fflush(stderr);
  abort();
}

_Noreturn void soac_report_error(int32_t kind, const char *format, int64_t a,
                                 int64_t b) {
  Call *call = current;
  if (!call || parallel_depth)
    die(format, a, b); /* no call to stop, or threads that cannot be stopped */
  record(call, kind, format, a, b);
  longjmp(call->stop, 1);
}

void soac_report_recorded_failure(int64_t *record) {
  if (!record || !record[0])
    return;
  int32_t kind = (int32_t)record[0];
  const char *message = (const char *)(intptr_t)record[1];
  int64_t a = record[2], b = record[3];
  record[0] = 0;
  soac_report_error(kind, message, a, b);
}

void soac_record_error(int32_t kind, const char *format, int64_t a, int64_t b) {
  Call *call = current;
  if (!call)
    die(format, a, b);
  record(call, kind, format, a, b);
}

void *soac_parallel_call(void) { return current; }

void soac_parallel_enter(void *call) {
  if (parallel_depth++ == 0) {
    outside = current;
    current = call;
  }
}

void soac_parallel_exit(void) {
  if (--parallel_depth == 0)
    current = outside;
}

void soac_parallel_check(void *opaque) {
  Call *call = opaque;
  if (!call || parallel_depth || !atomic_load(&call->failure))
    return; /* an enclosing region's check will stop the call */
  longjmp(call->stop, 1);
}

static void free_all(PointerSet *set) {
  for (size_t i = 0; i < set->capacity; ++i)
    if (set->slots[i])
      soac_free_tracked(set->slots[i]);
}

static void free_live(Call *call) {
  free_all(&call->live);
  Stripe *stripes = atomic_load(&call->stripes);
  for (int i = 0; stripes && i < STRIPES; ++i)
    free_all(&stripes[i].set);
}

/* The call's sets themselves (not the buffers in them). */
static void free_sets(Call *call) {
  free(call->live.slots);
  Stripe *stripes = atomic_load(&call->stripes);
  for (int i = 0; stripes && i < STRIPES; ++i)
    free(stripes[i].set.slots);
  free(stripes);
}

const char *soac_call_checked(void (*packed)(void **), void **args) {
  Call *outer = current;
  int outer_depth = parallel_depth;
  Call *call = calloc(1, sizeof *call);
  if (!call) {
    last_failure = SOAC_OUT_OF_MEMORY;
    snprintf(last_message, sizeof last_message, "out of memory: cannot start a call");
    return last_message;
  }
  call->tracking = 1;
  atomic_flag_clear(&call->lock);
  current = call;
  parallel_depth = 0;
  soac_settle_kernels(0);
  if (!setjmp(call->stop)) {
    packed(args);
    soac_settle_kernels(1);
  }
  current = outer;
  parallel_depth = outer_depth;
  last_failure = atomic_load(&call->failure);
  if (last_failure) {
    soac_settle_kernels(0);
    free_live(call);
    snprintf(last_message, sizeof last_message, "%s", call->message);
  }
  free_sets(call);
  free(call);
  return last_failure ? last_message : NULL;
}

int soac_failure_kind(void) { return last_failure; }
