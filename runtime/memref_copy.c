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

void memrefCopy(int64_t elementSize, UnrankedMemRef *source,
                UnrankedMemRef *target) {
  int64_t rank = source->rank;
  StridedDescriptor *from = source->descriptor;
  StridedDescriptor *to = target->descriptor;
  const int64_t *sizes = from->sizesAndStrides;
  const int64_t *fromStrides = from->sizesAndStrides + rank;
  const int64_t *toStrides = to->sizesAndStrides + rank;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d)
    count *= sizes[d];
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat, fromOffset = from->offset, toOffset = to->offset;
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t i = rest % sizes[d];
      rest /= sizes[d];
      fromOffset += i * fromStrides[d];
      toOffset += i * toStrides[d];
    }
    memcpy(to->aligned + toOffset * elementSize,
           from->aligned + fromOffset * elementSize, (size_t)elementSize);
  }
}
