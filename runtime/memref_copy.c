/*===- memref_copy.c - memref.copy of strided buffers ----------------------===*
 *
 * finalize-memref-to-llvm lowers memref.copy of buffers that are not both
 * contiguous to a call of memrefCopy. MLIR's C runner utilities define it,
 * but they need MLIR's own libraries; soac's runtimes define it themselves so
 * that compiled code runs where MLIR is not installed.
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <string.h>

typedef struct {
  int64_t rank;
  void *descriptor;
} UnrankedMemRef;

/* The descriptor of a rank-r memref: two pointers, the offset, then r sizes
 * and r strides (in elements). */
typedef struct {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[];
} StridedDescriptor;

/* `count` elements of `bytes` bytes each, `from_step` and `to_step` bytes
 * apart. Element sizes of 8 and 4 bytes copy with constant-size memcpy,
 * which compiles to one load and one store. */
static void copy_strided(char *to, const char *from, int64_t count,
                         int64_t to_step, int64_t from_step, size_t bytes) {
  if (bytes == 8) {
    for (int64_t i = 0; i < count; ++i)
      memcpy(to + i * to_step, from + i * from_step, 8);
  } else if (bytes == 4) {
    for (int64_t i = 0; i < count; ++i)
      memcpy(to + i * to_step, from + i * from_step, 4);
  } else {
    for (int64_t i = 0; i < count; ++i)
      memcpy(to + i * to_step, from + i * from_step, bytes);
  }
}

enum { MAX_ODOMETER_RANK = 32 };

/* The innermost dimensions that are contiguous in both buffers are one run
 * (copied by one memcpy); the others are walked with an odometer, the
 * innermost of them as a strided loop. This was a division and a remainder
 * per dimension and a memcpy call per element: a convolution's gradient,
 * which copies slices of its images, spent 70 % of its time here. */
void memrefCopy(int64_t elementSize, UnrankedMemRef *source,
                UnrankedMemRef *target) {
  int64_t rank = source->rank;
  StridedDescriptor *from = source->descriptor;
  StridedDescriptor *to = target->descriptor;
  const int64_t *sizes = from->sizesAndStrides;
  const int64_t *fromStrides = from->sizesAndStrides + rank;
  const int64_t *toStrides = to->sizesAndStrides + rank;
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] <= 0)
      return;
  int64_t run = 1, walked = rank;
  while (walked > 0 && fromStrides[walked - 1] == run &&
         toStrides[walked - 1] == run) {
    run *= sizes[walked - 1];
    --walked;
  }
  size_t bytes = (size_t)(run * elementSize);
  char *toBase = to->aligned + to->offset * elementSize;
  const char *fromBase = from->aligned + from->offset * elementSize;
  if (walked == 0) {
    memcpy(toBase, fromBase, bytes);
    return;
  }
  if (walked > MAX_ODOMETER_RANK) {
    /* Not seen in practice: one run per position, its offsets recomputed. */
    int64_t positions = 1;
    for (int64_t d = 0; d < walked; ++d)
      positions *= sizes[d];
    for (int64_t flat = 0; flat < positions; ++flat) {
      int64_t rest = flat, fromOffset = 0, toOffset = 0;
      for (int64_t d = walked - 1; d >= 0; --d) {
        int64_t i = rest % sizes[d];
        rest /= sizes[d];
        fromOffset += i * fromStrides[d];
        toOffset += i * toStrides[d];
      }
      memcpy(toBase + toOffset * elementSize,
             fromBase + fromOffset * elementSize, bytes);
    }
    return;
  }
  int64_t inner = walked - 1, index[MAX_ODOMETER_RANK] = {0};
  int64_t fromOffset = 0, toOffset = 0;
  for (;;) {
    copy_strided(toBase + toOffset * elementSize,
                 fromBase + fromOffset * elementSize, sizes[inner],
                 toStrides[inner] * elementSize,
                 fromStrides[inner] * elementSize, bytes);
    int64_t d = inner - 1;
    for (; d >= 0; --d) {
      fromOffset += fromStrides[d];
      toOffset += toStrides[d];
      if (++index[d] < sizes[d])
        break;
      fromOffset -= fromStrides[d] * sizes[d];
      toOffset -= toStrides[d] * sizes[d];
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}
