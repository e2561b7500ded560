//===- SplitHistograms.h - one reduce_by_index per destination --*- C++ -*-===//
//
// The GPU runs reduce_by_index with one atomic per value, which updates one
// destination element. A histogram of several destinations whose operator
// combines each destination by itself (a sum and a count, a minimum and a
// maximum) is therefore run as one histogram per destination; one whose
// operator mixes them (an argmin: the index kept follows the values'
// comparison) cannot be updated atomically: it updates all destinations
// under a lock per bin (lowerLockedReduceByIndex, OpKernels.h).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOGPU_SPLITHISTOGRAMS_H
#define SOAC_PASSES_CONVERSION_SOACTOGPU_SPLITHISTOGRAMS_H

#include "dialect/SoacOps.h"

namespace soac::kernels {

/// Replaces `histogram` (several destinations) by one reduce_by_index per
/// destination, sharing its indices, each with the part of the operator
/// that computes its result, and returns them. Returns nullopt, changing
/// nothing, when a result of the operator reads another destination's
/// arguments.
std::optional<llvm::SmallVector<mlir::Operation *>>
splitByDestination(ReduceByIndexOp histogram);

} // namespace soac::kernels

#endif // SOAC_PASSES_CONVERSION_SOACTOGPU_SPLITHISTOGRAMS_H
