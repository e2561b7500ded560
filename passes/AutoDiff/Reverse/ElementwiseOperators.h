//===- ElementwiseOperators.h - SOACs whose operator maps rows --*- C++ -*-===//
//
// An operator component that combines its accumulator row and value row
// (tensors) element by element with a scalar operator (a soac.map nest down
// to scalars; Futhark's "vectorised" operators) is, per position within the
// rows, the same SOAC on scalars. Its reverse rule is therefore the scalar
// rule mapped over the positions of the rows: for each position, the scalar
// SOAC is written as a small function and differentiated on the side by the
// engine, on that position's column of every operand.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_REVERSE_ELEMENTWISEOPERATORS_H
#define SOAC_PASSES_AUTODIFF_REVERSE_ELEMENTWISEOPERATORS_H

#include "passes/AutoDiff/Engine/ReverseEngine.h"

#include "dialect/SoacOps.h"

namespace soac::autodiff {

/// Whether component `j` of operator `region` combines its accumulator and
/// value rows elementwise: yield #j is a soac.map over exactly (accumulator
/// j, value j), in either order, nested to the rows' rank, whose innermost
/// body yields one scalar computed from its two elements and constants.
bool isElementwiseComponent(mlir::Region &region, unsigned j);

/// The reverse rule of component `j` (elementwise, tensor rows) of a SOAC:
/// per position within the rows, the reverse rule of the SOAC on scalars.
mlir::LogicalResult reverseElementwise(ReduceOp reduce, unsigned j,
                                       AdjointBuilder &a);
mlir::LogicalResult reverseElementwise(ScanOp scan, unsigned j,
                                       AdjointBuilder &a);
mlir::LogicalResult reverseElementwise(ReduceByIndexOp histogram, unsigned j,
                                       AdjointBuilder &a);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_REVERSE_ELEMENTWISEOPERATORS_H
