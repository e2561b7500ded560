//===- Passes.h - soac transforms -------------------------------*- C++ -*-===//
//
// The passes of Passes.td beside this file: their create functions and
// options (GEN_PASS_DECL), and their registration (GEN_PASS_REGISTRATION).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_TRANSFORMS_PASSES_H
#define SOAC_PASSES_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace soac {

#define GEN_PASS_DECL
#include "passes/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Transforms/Passes.h.inc"

} // namespace soac

#endif // SOAC_PASSES_TRANSFORMS_PASSES_H
