//===- Passes.h - soac-autodiff ---------------------------------*- C++ -*-===//
//
// The pass of Passes.td beside this file: its create function and options
// (GEN_PASS_DECL), its registration (GEN_PASS_REGISTRATION), and the
// external models it needs.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_PASSES_H
#define SOAC_PASSES_AUTODIFF_PASSES_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"

namespace soac {

#define GEN_PASS_DECL
#include "passes/AutoDiff/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/AutoDiff/Passes.h.inc"

namespace autodiff {

/// Attaches the reverse-mode and forward-mode rules to the ops of arith,
/// math, scf, tensor, func and soac (registerSoacExtensions calls it).
void registerDerivativeRules(mlir::DialectRegistry &registry);

} // namespace autodiff
} // namespace soac

#endif // SOAC_PASSES_AUTODIFF_PASSES_H
