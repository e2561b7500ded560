//===- Bodies.h - inlining SOAC bodies and fusing maps into consumers -*- C++ -*-===//
//
// Shared by the lowerings (CPU loops and GPU kernels): both clone SOAC bodies
// where rows are computed, and both recompute a map's rows inside the one
// SOAC that reads them instead of materializing the map's result.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_UTILS_BODIES_H
#define SOAC_PASSES_UTILS_BODIES_H

#include "dialect/SoacOps.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac {

/// Clones the single block of `body` at the builder's insertion point with its
/// arguments bound to `args`; returns the values its soac.yield yields.
/// `reassociate` marks the cloned floating-point ops `reassoc`: for the
/// operator of a reduction, whose order of combination is unspecified, this
/// lets LLVM vectorize the loop that folds it.
llvm::SmallVector<mlir::Value> inlineBody(mlir::ImplicitLocOpBuilder &b,
                                          mlir::Region &body,
                                          mlir::ValueRange args,
                                          bool reassociate = false);

/// True when `map` maps scalars to scalars (1-D inputs and results).
bool hasScalarRows(MapOp map);

/// Whether `consumer` reads operand `use` row by row, in order, at one index
/// per iteration (a map producing it can be fused into `consumer`): any
/// operand of a map, the inputs of a reduce or scan, the indices and values
/// of a scatter or reduce_by_index.
bool readsRowsOf(mlir::Operation *consumer, mlir::OpOperand &use);

/// The map producing `tensor` if it can be fused into `consumer`: every use
/// of every result of the map is a row-wise read by `consumer` (a SOAC reading
/// that operand row by row, in order), in the same block, so fusion
/// recomputes nothing more often than the map would run.
MapOp fusableProducer(mlir::Value tensor, mlir::Operation *consumer);

/// The map whose rows `histogram` reads stacked: every operand it reads row
/// by row (indices, values) is a tensor.collapse_shape merging the same
/// number (two or more) of outer dimensions of a result of that map, in the
/// same block, and the map's results have no other use. Its lowering then computes one row of the map
/// at a time and adds that row's batch, never storing the map's results
/// whole (the sparse adjoints of nested reads, AutoDiff/Engine/SparseAdjoints.h).
MapOp stackedProducer(ReduceByIndexOp histogram);

/// A soac.map waits to be fused when its consumer will recompute it (see
/// Conversion/SoacToLoops/LoweringOrder.h for the whole ordering contract).
bool waitsForFusion(MapOp map);

} // namespace soac

#endif // SOAC_PASSES_UTILS_BODIES_H
