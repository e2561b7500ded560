//===- ReverseModeOpInterface.h - reverse-mode rules ------------*- C++ -*-===//
//
// The interface every reverse-mode rule implements (ReverseModeOpInterface.td).
// Its methods take the engine's AdjointBuilder (Engine/ReverseEngine.h) by
// reference: declaring it here is enough.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_INTERFACES_REVERSEMODEOPINTERFACE_H
#define SOAC_PASSES_AUTODIFF_INTERFACES_REVERSEMODEOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"

namespace soac::autodiff {

class AdjointBuilder;

/// How an op re-executes by default (ReverseModeOpInterface::reexecute):
/// cloned into the forward code of `scope`.
void cloneIntoForward(AdjointBuilder &scope, mlir::Operation *op);

} // namespace soac::autodiff

#include "passes/AutoDiff/Interfaces/ReverseModeOpInterface.h.inc"

#endif // SOAC_PASSES_AUTODIFF_INTERFACES_REVERSEMODEOPINTERFACE_H
