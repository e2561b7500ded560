//===- Redomap.cpp - a reduce folded in its map's loop --------------------===//
#include "passes/Conversion/SoacToLoops/Redomap.h"

#include "passes/Utils/Bodies.h"
#include "passes/Conversion/SoacToLoops/Loops.h"

#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace soac::loops {

namespace {

/// Whether `reduce` reads only rows of results of `map` that nothing else
/// reads, and its neutral elements and the values its operator captures
/// are defined before `map`: it can then run as part of map's loop.
bool foldsOnlyRowsOf(ReduceOp reduce, MapOp map) {
  for (Value input : reduce.getInputs()) {
    if (input.getDefiningOp() != map.getOperation())
      return false;
    for (OpOperand &use : input.getUses())
      if (use.getOwner() != reduce.getOperation() ||
          !readsRowsOf(reduce, use))
        return false;
  }
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(reduce.getBody(), captured);
  captured.insert(reduce.getInits().begin(), reduce.getInits().end());
  DominanceInfo dominance;
  return llvm::all_of(captured, [&](Value value) {
    return dominance.properlyDominates(value, map);
  });
}

} // namespace

ReduceOp foldedReduce(MapOp map) {
  if (!isNestedInParallelOp(map) || waitsForFusion(map))
    return nullptr;
  for (Operation *user : map->getUsers()) {
    auto reduce = dyn_cast<ReduceOp>(user);
    if (reduce && reduce->getBlock() == map->getBlock() &&
        foldsOnlyRowsOf(reduce, map))
      return reduce;
  }
  return nullptr;
}

bool foldedWithItsMap(ReduceOp reduce) {
  auto map = reduce.getInputs().front().getDefiningOp<MapOp>();
  return map && foldedReduce(map) == reduce;
}

} // namespace soac::loops
