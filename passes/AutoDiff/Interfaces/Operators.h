//===- Operators.h - how SOAC operators combine -----------------*- C++ -*-===//
//
// The operators of reduce, scan and reduce_by_index that reverse rules
// recognize (+, *, min, max), and what asks whether a rule will read the
// values it is given (Engine/ResultsFromAdjoint.h).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_INTERFACES_OPERATORS_H
#define SOAC_PASSES_AUTODIFF_INTERFACES_OPERATORS_H

#include "mlir/IR/Region.h"

namespace soac::autodiff {

/// How one component of an operator combines its accumulator and its value.
enum class Combine { Add, Mul, Max, Min, Other };

/// How component `j` of an operator region (2k arguments, k yields)
/// combines: yield #j must be one recognized op applied to exactly
/// (accumulator j, value j).
Combine componentKind(mlir::Region &region, unsigned j);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_INTERFACES_OPERATORS_H
