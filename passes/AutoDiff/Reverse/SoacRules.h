//===- SoacRules.h - reverse-mode rules of the SOACs ------------*- C++ -*-===//
//
// The reverse rules of the SOACs, one file per op family:
//
//   SoacMapRules.cpp      soac.map (and how a map re-executes, keeping
//                         residuals for its adjoint)
//   SoacReduceRules.cpp   soac.reduce
//   SoacScanRules.cpp     soac.scan
//   SoacScatterRules.cpp  soac.scatter
//   SoacHistogramRules.cpp  soac.reduce_by_index: +, *, min, max
//   SoacGeneralHistogram.cpp  soac.reduce_by_index: any other operator
//   ElementwiseOperators.cpp  reduce, scan, reduce_by_index whose operator
//                         is applied elementwise to tensor rows
//
// SoacRules.cpp attaches them (registerSoacRules) and defines the helpers
// below, which several of them use.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_REVERSE_SOACRULES_H
#define SOAC_PASSES_AUTODIFF_REVERSE_SOACRULES_H

#include "passes/AutoDiff/Interfaces/Operators.h"
#include "passes/AutoDiff/Interfaces/RuleModel.h"

#include "dialect/SoacOps.h"

namespace soac::autodiff {

mlir::LogicalResult reverseOf(ReduceOp reduce, AdjointBuilder &a);
mlir::LogicalResult reverseOf(ScanOp scan, AdjointBuilder &a);
mlir::LogicalResult reverseOf(ScatterOp scatter, AdjointBuilder &a);
mlir::LogicalResult reverseOf(ReduceByIndexOp histogram, AdjointBuilder &a);

/// Attaches the reverse rule of soac.map, which also says how a map
/// re-executes (SoacMapRules.cpp).
void attachMapRule(mlir::MLIRContext *context);

/// Adds to `original`'s adjoint the sum over rows of `perRow`.
void accumulateRowSum(AdjointBuilder &a, mlir::Value original,
                      mlir::Value perRow);

/// Rows of `tensor` gathered at `indices` (index, i32 or i64), zero rows for
/// indices out of range.
mlir::Value gatherRows(AdjointBuilder &a, mlir::Value tensor,
                       mlir::Value indices);

/// The reverse rule of a reduce_by_index with any associative and
/// commutative operator on scalars (SoacGeneralHistogram.cpp).
mlir::LogicalResult reverseGeneralHistogram(ReduceByIndexOp histogram,
                                            AdjointBuilder &a);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_REVERSE_SOACRULES_H
