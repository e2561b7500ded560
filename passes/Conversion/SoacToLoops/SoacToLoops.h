//===- SoacToLoops.h - soac ops to linalg/scf/tensor loops ------*- C++ -*-===//
//
// convert-soac-to-loops: every soac op becomes loops over its outer
// dimension, still on tensors. The pass and its patterns, for pipelines that
// want them in their own rewrites.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOLOOPS_SOACTOLOOPS_H
#define SOAC_PASSES_CONVERSION_SOACTOLOOPS_SOACTOLOOPS_H

#include "passes/Conversion/Passes.h"

#include "mlir/IR/PatternMatch.h"

namespace soac {

/// Patterns lowering soac ops on tensors to linalg, scf and tensor ops (the
/// patterns of convert-soac-to-loops), with that pass's options. They
/// include the fusion patterns of soac-fuse-maps, which must run in the same
/// rewrite (see LoweringOrder.h).
void populateSoacToLoopsPatterns(mlir::RewritePatternSet &patterns,
                                 const ConvertSoacToLoopsOptions &options);

} // namespace soac

#endif // SOAC_PASSES_CONVERSION_SOACTOLOOPS_SOACTOLOOPS_H
