//===- ForwardModeOpInterface.h - forward-mode rules ------------*- C++ -*-===//
//
// The interface every forward-mode rule implements (ForwardModeOpInterface.td).
// Its method takes the engine's TangentBuilder (Engine/ForwardEngine.h) by
// reference: declaring it here is enough.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_INTERFACES_FORWARDMODEOPINTERFACE_H
#define SOAC_PASSES_AUTODIFF_INTERFACES_FORWARDMODEOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"

namespace soac::autodiff {

class TangentBuilder;

} // namespace soac::autodiff

#include "passes/AutoDiff/Interfaces/ForwardModeOpInterface.h.inc"

#endif // SOAC_PASSES_AUTODIFF_INTERFACES_FORWARDMODEOPINTERFACE_H
