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

/* The buffers a call allocated and has not freed: an open-addressing hash
 * set of pointers (linear probing, deletion by backward shift), locked while
 * the threads of a parallel region may use it. */
typedef struct {
  void **slots;
  size_t capacity; /* a power of two, or 0 */
  size_t count;
} PointerSet;

typedef struct Call {
  jmp_buf stop;
  atomic_int failure; /* 0, or the kind of the first failure */
  char message[1024];
  PointerSet live;
  atomic_flag lock;
  int tracking; /* 0 once the set could not grow: nothing is tracked */
} Call;

static _Thread_local Call *current;     /* the call this thread works for */
static _Thread_local int parallel_depth; /* parallel regions it is inside */
static _Thread_local Call *outside;      /* `current` before the outermost region */
static _Thread_local int last_failure;   /* the kind, for soac_failure_kind */
static _Thread_local char last_message[1024];

static size_t slot_of(const PointerSet *set, void *pointer) {
  uint64_t hash = (uint64_t)(uintptr_t)pointer * 0x9E3779B97F4A7C15ull;
  return (size_t)(hash >> 20) & (set->capacity - 1);
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

static void set_remove(PointerSet *set, void *pointer) {
  if (!set->capacity)
    return;
  size_t mask = set->capacity - 1, hole = slot_of(set, pointer);
  while (set->slots[hole] != pointer) {
    if (!set->slots[hole])
      return; /* allocated outside the call */
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
}

static void lock(Call *call) {
  if (parallel_depth)
    while (atomic_flag_test_and_set_explicit(&call->lock, memory_order_acquire))
      ;
}

static void unlock(Call *call) {
  if (parallel_depth)
    atomic_flag_clear_explicit(&call->lock, memory_order_release);
}

void soac_track_allocation(void *pointer) {
  Call *call = current;
  if (!call || !pointer || !call->tracking)
    return;
  lock(call);
  if (!set_add(&call->live, pointer))
    call->tracking = 0; /* out of memory for the set itself: stop tracking */
  unlock(call);
}

void soac_untrack_allocation(void *pointer) {
  Call *call = current;
  if (!call || !pointer)
    return;
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

static void free_live(Call *call) {
  for (size_t i = 0; i < call->live.capacity; ++i)
    if (call->live.slots[i])
      soac_free_tracked(call->live.slots[i]);
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
  if (!setjmp(call->stop)) {
    packed(args);
    soac_call_finish();
  }
  current = outer;
  parallel_depth = outer_depth;
  last_failure = atomic_load(&call->failure);
  if (last_failure) {
    free_live(call);
    snprintf(last_message, sizeof last_message, "%s", call->message);
  }
  free(call->live.slots);
  free(call);
  return last_failure ? last_message : NULL;
}

int soac_failure_kind(void) { return last_failure; }
