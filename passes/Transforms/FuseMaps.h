//===- FuseMaps.h - fusing soac.map ops at the SOAC level -------*- C++ -*-===//
//
// A map with several consumers cannot be fused into any of them without
// being computed more than once. When those consumers are SOACs of one kind
// (maps, or reduces) reading its results row by row, they are merged into
// one SOAC (horizontal fusion), into which the map then fuses (vertical
// fusion: a map into the one map reading it, here; into other SOACs when
// they are lowered, see fusableProducer). This is what lets `reduce (+)`
// over each result of a multi-result map -- the per-point adjoint
// contributions of a gradient -- become one loop accumulating all of them.
// A cheap map read by SOACs of different kinds is copied per reader instead.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_TRANSFORMS_FUSEMAPS_H
#define SOAC_PASSES_TRANSFORMS_FUSEMAPS_H

#include "dialect/SoacOps.h"

#include "mlir/IR/PatternMatch.h"

namespace soac {

/// Whether `producer` will be fused by these patterns: the SOACs reading it
/// will be merged, the one map reading it will absorb it, or it will be
/// copied per reader. A lowering must then leave `producer` alone until that
/// has happened (Conversion/SoacToLoops/LoweringOrder.h).
bool waitsForMapFusion(MapOp producer);

/// Whether the body of `map` (nested maps included) only reads elements,
/// splats and does at most 16 arithmetic ops: no math functions, no other
/// SOACs. Such a map costs less to recompute where it is read than to store
/// and read back.
bool cheapToRecompute(MapOp map);

/// The patterns of soac-fuse-maps: sibling soac.map ops, and sibling
/// soac.reduce ops, reading the same soac.map are merged; a soac.map read
/// only by one soac.map is fused into it; a cheap soac.map read by SOACs of
/// different kinds is copied per reader. `benefit` orders them before
/// patterns that would lower the ops involved.
void populateMapFusionPatterns(mlir::RewritePatternSet &patterns,
                               mlir::PatternBenefit benefit = 1);

/// Only the copying of cheap maps per reader (the last of those patterns).
/// `evenWhenMergeable`: a map of scalars read by several SOACs is copied for
/// each whatever they are, for a lowering that does not merge SOACs (the
/// GPU's, which fuses each copy into its reader's kernel).
void populateRecomputePerReaderPatterns(mlir::RewritePatternSet &patterns,
                                        mlir::PatternBenefit benefit,
                                        bool evenWhenMergeable);

} // namespace soac

#endif // SOAC_PASSES_TRANSFORMS_FUSEMAPS_H
