//===- LoweringOrder.h - when a SOAC may be lowered -------------*- C++ -*-===//
//
// The ordering contract between the fusion patterns (soac-fuse-maps,
// Transforms/FuseMaps.h) and the lowering patterns of convert-soac-to-loops,
// which run together in one greedy rewrite. A lowering must not run before
// the rewrites that would have changed what it lowers:
//
//  1. Fusion first: the fusion patterns have benefit kMapFusionBenefit, the
//     lowering patterns 1, so a map is merged or fused while its readers are
//     still SOACs.
//  2. Outside in: a SOAC in the body of a SOAC not lowered yet waits for it
//     (waitsForEnclosingSoac): bodies are cloned into loops first, so that a
//     nested SOAC is lowered where it finally runs, next to the siblings it
//     may merge with and reading the loop-carried tensors it may update in
//     place.
//  3. Producers wait for their consumers: a map whose rows only one SOAC
//     reads is recomputed by that SOAC's lowering (waitsForFusion,
//     Utils/Bodies.h); a map whose readers soac-fuse-maps will merge, or
//     that it will fuse or copy per reader, waits for that
//     (waitsForMapFusion, Transforms/FuseMaps.h).
//  4. A reduce that a map's loop folds (Redomap.h) is lowered with that map,
//     never on its own.
//
// Every lowering pattern starts with readyToLower, which checks 2-4.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOLOOPS_LOWERINGORDER_H
#define SOAC_PASSES_CONVERSION_SOACTOLOOPS_LOWERINGORDER_H

#include "mlir/IR/PatternMatch.h"

namespace soac::loops {

/// The benefit of the fusion patterns among the lowering patterns (which
/// have benefit 1): tried first (rule 1).
inline constexpr unsigned kMapFusionBenefit = 2;

/// True when `op` is in the body of a SOAC not lowered yet. SOACs are lowered
/// from the outside in: bodies are cloned into loops first, so that a nested
/// SOAC is lowered where it finally runs (reading loop-carried tensors it may
/// update in place, next to the siblings it may merge with).
bool waitsForEnclosingSoac(mlir::Operation *op);

/// Success when a lowering pattern may lower `op` now (rules 2-4);
/// otherwise a match failure saying what `op` waits for.
mlir::LogicalResult readyToLower(mlir::Operation *op,
                                 mlir::PatternRewriter &rewriter);

} // namespace soac::loops

#endif // SOAC_PASSES_CONVERSION_SOACTOLOOPS_LOWERINGORDER_H
