//===- BlockPrimitives.h - warp and block reductions, scans, atomics -*- C++ -*-===//
//
// The cooperative building blocks of the GPU kernels, generic over a SOAC's
// operator (k values combined by an associative region) and never reordering
// its operands: warp shuffles combine lanes in lane order, the warps' results
// go through workgroup memory in warp order. So reduce and scan are correct
// for operators that are associative but not commutative.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOGPU_BLOCKPRIMITIVES_H
#define SOAC_PASSES_CONVERSION_SOACTOGPU_BLOCKPRIMITIVES_H

#include "passes/Conversion/SoacToGPU/Kernel.h"

namespace soac::kernels {

/// The operator of a reduce or scan with its neutral elements.
class Combiner {
public:
  Combiner(mlir::Region &op, mlir::ValueRange neutral)
      : op(op), neutral(neutral.begin(), neutral.end()) {}

  /// op(acc, values), inlined.
  llvm::SmallVector<mlir::Value> combine(mlir::ImplicitLocOpBuilder &b,
                                         mlir::ValueRange acc,
                                         mlir::ValueRange values) const;
  mlir::ValueRange neutralElements() const { return neutral; }
  /// One commutative op combining the two arguments of a one-value operator
  /// (addf, maximumf, ...): threads may then fold interleaved rows.
  bool isCommutative() const;
  /// The workgroup buffers blockReduce and blockExclusiveScan need, one per
  /// value (kWarpsPerBlock elements).
  llvm::SmallVector<mlir::Type> workgroupTypes() const;

private:
  mlir::Region &op;
  llvm::SmallVector<mlir::Value> neutral;
};

/// Folds `count` rows read by `read(b, j)` for j = first, first + step, ...
/// into `acc` in that order.
llvm::SmallVector<mlir::Value> foldRows(
    mlir::ImplicitLocOpBuilder &b, const Combiner &combiner,
    mlir::ValueRange acc, mlir::Value first, mlir::Value end, mlir::Value step,
    llvm::function_ref<llvm::SmallVector<mlir::Value>(
        mlir::ImplicitLocOpBuilder &, mlir::Value)>
        read);

/// Every lane of the warp gets the combination of the values of all its
/// lanes, in lane order; every lane of the warp must call it.
llvm::SmallVector<mlir::Value> warpAllReduce(mlir::ImplicitLocOpBuilder &b,
                                             const Combiner &combiner,
                                             mlir::Value lane,
                                             mlir::ValueRange values);

/// Combines the values of all threads of the block in thread order; every
/// thread gets the total. `scratch`: Combiner::workgroupTypes buffers.
llvm::SmallVector<mlir::Value> blockReduce(mlir::ImplicitLocOpBuilder &b,
                                           const Combiner &combiner,
                                           mlir::Value thread,
                                           mlir::ValueRange values,
                                           mlir::ValueRange scratch);

/// Exclusive prefix of the threads' values in thread order (the neutral
/// elements at thread 0), and the block's total.
std::pair<llvm::SmallVector<mlir::Value>, llvm::SmallVector<mlir::Value>>
blockExclusiveScan(mlir::ImplicitLocOpBuilder &b, const Combiner &combiner,
                   mlir::Value thread, mlir::ValueRange values,
                   mlir::ValueRange scratch);

/// Succeeds when atomicCombine can combine values of `element` with `op`;
/// otherwise emits an error at `soacOp`.
mlir::LogicalResult checkAtomicCombine(mlir::Region &op, mlir::Type element,
                                       mlir::Operation *soacOp);

/// buffer[index] = op(buffer[index], value) atomically, for a rank-1 buffer
/// of identity layout: one atomic instruction when the operator is one op the
/// hardware has (addf, maxsi, ...), else a compare-and-swap loop on the
/// value's bits around the inlined operator.
void atomicCombine(mlir::ImplicitLocOpBuilder &b, mlir::Region &op,
                   mlir::Value buffer, mlir::Value index, mlir::Value value);

/// Succeeds when lockedCombine can update the destinations of `histogram`
/// (rank-1, of integers, floats or indices of 8, 16, 32 or 64 bits);
/// otherwise emits an error at it.
mlir::LogicalResult checkLockedCombine(ReduceByIndexOp histogram);

/// Applies `op` to element `index` of each of `buffers` (rank 1, identity
/// layout, one per destination) and `values`, and stores its results there,
/// under a spin lock per index in `locks` (i32, zero when free), for
/// operators that combine several destinations together (an argmin), which
/// no atomic instruction updates. The lock is tried, and released, inside
/// one iteration of the retry loop; LLVM may still move the release after
/// the loop, so threads of one warp contending for a lock rely on the
/// independent thread scheduling of sm_70 and later. The destinations are
/// read and written by atomic (coherent) loads and stores between the
/// lock's acquire and release.
void lockedCombine(mlir::ImplicitLocOpBuilder &b, mlir::Region &op,
                   mlir::ValueRange buffers, mlir::Value locks,
                   mlir::Value index, mlir::ValueRange values);

} // namespace soac::kernels

#endif // SOAC_PASSES_CONVERSION_SOACTOGPU_BLOCKPRIMITIVES_H
