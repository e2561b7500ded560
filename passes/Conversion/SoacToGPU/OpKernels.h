//===- OpKernels.h - the kernels of each soac op ----------------*- C++ -*-===//
//
// One lowering per soac op, for a SOAC outside other SOACs (nested ones run
// inside their parent's kernel); convert-soac-to-gpu (SoacToGPU.cpp) checks
// that the op is supported and chooses the lowering. Maps over rows have
// their own kernels (RowKernel.h, ThreadKernel.h).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOGPU_OPKERNELS_H
#define SOAC_PASSES_CONVERSION_SOACTOGPU_OPKERNELS_H

#include "dialect/SoacOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace soac::kernels {

/// A map with scalar rows: one thread per row.
void lowerMap(MapOp map);

/// One thread per element.
void lowerIota(IotaOp iota);

/// A tensor.splat outside kernels that is still used once the SOACs are
/// lowered: one thread per element. (Bufferized as it is, it would be a fill
/// on the host, which the GPU pipeline does not lower.)
void lowerSplat(mlir::tensor::SplatOp splat);

/// At most `maxBlocks` blocks fold rows (interleaved when the operator is
/// one commutative op, else contiguous ranges a tile at a time) and combine
/// them by warp shuffles and workgroup memory; one block combines the
/// blocks' partial results.
void lowerReduce(ReduceOp reduce, int64_t maxBlocks);

/// A reduce of vector rows (of any rank) combined elementwise by `op`, the
/// scalar operator: one thread per element and range of rows, then one per
/// element.
void lowerColumnReduce(ReduceOp reduce, mlir::Region &op);

/// Block totals (at most `maxBlocks` blocks, each a contiguous range of
/// rows), an exclusive scan of the block totals in one block, then each
/// block rescans its rows from its offset.
void lowerScan(ScanOp scan, int64_t maxBlocks);

/// A copy of the destination, then one thread per (index, row element); when
/// both are small, one block does both in one launch.
void lowerScatter(ScatterOp scatter);

/// A copy of the destination, then one atomic per value (per element of
/// vector rows combined elementwise); when both are small, one block does both
/// in one launch.
void lowerReduceByIndex(ReduceByIndexOp histogram);
/// A reduce_by_index of several destinations whose operator combines them
/// together (an argmin): every destination's bin updated under a lock per
/// bin (lockedCombine).
void lowerLockedReduceByIndex(ReduceByIndexOp histogram);

} // namespace soac::kernels

#endif // SOAC_PASSES_CONVERSION_SOACTOGPU_OPKERNELS_H
