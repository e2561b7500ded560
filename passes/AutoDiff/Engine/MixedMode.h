//===- MixedMode.h - maps differentiated in mixed mode ----------*- C++ -*-===//
//
// Mixed mode (Revels et al., "Dynamic automatic differentiation of GPU
// broadcast kernels"): the reverse rule of an elementwise soac.map computes
// the partials of its body by forward mode (one tangent lane per active
// scalar the body reads) inside the adjoint map, and multiplies them by the
// results' adjoints. The body needs no reverse sweep of its own, so
// data-dependent branches in it are run once, in one fused loop.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_ENGINE_MIXEDMODE_H
#define SOAC_PASSES_AUTODIFF_ENGINE_MIXEDMODE_H

#include "passes/AutoDiff/Engine/ReverseEngine.h"

#include "dialect/SoacOps.h"

namespace soac::autodiff {

/// The attribute of a soac.map asking for (true) or against (false) mixed
/// mode, overriding soac-autodiff's mixed-mode option.
inline constexpr llvm::StringLiteral kMixedModeAttr = "soac.mixed_mode";

/// Whether `map` is differentiated in mixed mode. Fails (with an error at
/// the map) when its attribute asks for it but the map does not qualify: its
/// body must map scalars to scalars, and read only scalars among the active
/// values from outside.
mlir::FailureOr<bool> usesMixedMode(MapOp map, const AdjointBuilder &a);

/// The reverse rule of a map in mixed mode.
mlir::LogicalResult reverseInMixedMode(MapOp map, AdjointBuilder &a);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_ENGINE_MIXEDMODE_H
