//===- ThreadKernel.h - maps over rows as one thread per row ----*- C++ -*-===//
//
// A soac.map whose body nests parallelism more deeply than one thread block
// can share out (maps of maps, rows of rank above one, vectors of the row
// read at computed indices) runs one thread per row, and the thread runs the
// body sequentially (Futhark sequentializes the innermost levels the same
// way):
//
//   - a nested map's elements are recomputed where they are read (a closure
//     over the scope that defined the map), and a row or slice of a tensor
//     is read where it lies; except costly maps that only SOACs read, and
//     histograms, which are computed once into per-thread scratch memory;
//   - a nested reduce is a loop folding the elements it reads;
//   - a yielded tensor is written element by element into the result row;
//   - blocks are small (kThreadBlockSize), so that the few thousand rows of
//     such maps (a row is a long computation) spread over every
//     multiprocessor;
//   - a result only a sum reads (a reduce (+) of it alone: a gradient summed
//     over the rows) is summed per warp by shuffles as it is written, so
//     that the kernel writes a row per warp and the reduce folds ceil(n /
//     32) rows (k-means' gradient wrote n x K x d values, mostly zeros).
//
// Results are allocated before the kernel runs, so the shapes of the body's
// tensors must follow from the sizes of the tensors it reads.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOGPU_THREADKERNEL_H
#define SOAC_PASSES_CONVERSION_SOACTOGPU_THREADKERNEL_H

#include "dialect/SoacOps.h"

namespace soac::kernels {

/// Succeeds when one thread can run a row of `map`; otherwise emits an error
/// at the first op of its body that cannot run there.
mlir::LogicalResult checkThreadKernel(MapOp map);

/// Replaces `map` by its kernel.
void lowerThreadKernel(MapOp map);

} // namespace soac::kernels

#endif // SOAC_PASSES_CONVERSION_SOACTOGPU_THREADKERNEL_H
