//===- LoweringOrder.cpp - when a SOAC may be lowered ---------------------===//
#include "passes/Conversion/SoacToLoops/LoweringOrder.h"

#include "passes/Utils/Bodies.h"
#include "passes/Conversion/SoacToLoops/Redomap.h"
#include "passes/Transforms/FuseMaps.h"

using namespace mlir;

namespace soac::loops {

bool waitsForEnclosingSoac(Operation *op) {
  Operation *parent = op->getParentOp();
  return parent && isa<SoacDialect>(parent->getDialect());
}

LogicalResult readyToLower(Operation *op, PatternRewriter &rewriter) {
  if (waitsForEnclosingSoac(op))
    return rewriter.notifyMatchFailure(op, "lowered after its enclosing SOAC");
  if (auto map = dyn_cast<MapOp>(op))
    if (waitsForFusion(map) || waitsForMapFusion(map))
      return rewriter.notifyMatchFailure(map, "fused into its consumer");
  if (auto reduce = dyn_cast<ReduceOp>(op))
    if (foldedWithItsMap(reduce))
      return rewriter.notifyMatchFailure(reduce, "folded in its map's loop");
  return success();
}

} // namespace soac::loops
