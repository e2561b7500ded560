//===- ResultsFromAdjoint.h - a map's results from its adjoint map -*- C++ -*-===//
//
// The adjoint map of a soac.map re-executes the map's body per row. When the
// adjoints of the map's results do not depend on those results (a loss
// summed over data points: the sum's adjoint is its seed, whatever the
// terms), the adjoint map can yield the results too, and the map need not
// run in the forward code at all: its results are read from the adjoint map,
// and what the forward code computed from them moves after it. The forward
// run then keeps no residuals for the adjoint map either: the adjoint map
// computes the body once, keeping inside each row what its own nested
// SOACs' adjoints read. ADBench's GMM: the d × d products of each point and
// component ran four times (forward run, re-executed in the adjoint, two
// adjoint products), now three.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_ENGINE_RESULTSFROMADJOINT_H
#define SOAC_PASSES_AUTODIFF_ENGINE_RESULTSFROMADJOINT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Block.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <utility>

namespace soac::autodiff {

class Activity;

/// The active soac.map ops of `function`'s body (not nested) whose results
/// only sums, additions, subtractions, negations and products with or
/// divisions by inactive values use, up to the function's return: the adjoints of their results are those of the return's, whatever
/// the results are. Not maps that read active tensors at computed indices,
/// whose adjoint maps scatter their reads row by row only while they yield
/// nothing else.
llvm::SmallPtrSet<mlir::Operation *, 4>
mapsWithValueFreeAdjoints(mlir::func::FuncOp function,
                          const Activity &activity);

/// In `body` (a vjp function's, complete with its return): each pair's
/// forward value replaced by the same value yielded by an adjoint map, after
/// moving what uses the forward value, up to the return, past that map.
/// A pair whose forward value something else uses (the return sweep) is
/// left alone: the adjoint map's copy is then dead.
void takeResultsFromAdjoints(
    mlir::Block &body, llvm::ArrayRef<std::pair<mlir::Value, mlir::Value>> pairs);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_ENGINE_RESULTSFROMADJOINT_H
