//===- Flatten.cpp - soac-flatten -----------------------------------------===//
//
// Moderate flattening: the patterns of Distribute.cpp, CollapseMaps.cpp and
// Interchange.cpp applied greedily, then the maps left holding one reduce or
// scan marked `soac.segmented`.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Flatten/Flatten.h"
#include "passes/Transforms/Passes.h"
#include "dialect/SoacOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace soac {
#define GEN_PASS_DEF_SOACFLATTEN
#include "passes/Transforms/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace soac {

void populateSoacFlattenPatterns(RewritePatternSet &patterns) {
  flatten::populateDistributionPatterns(patterns);
  flatten::populateIsolateNestPatterns(patterns);
  flatten::populateCollapseMapsPatterns(patterns);
  flatten::populateInterchangePatterns(patterns);
}

void hoistConstantsFromMaps(Operation *root) {
  SmallVector<Operation *> constants;
  root->walk([&](Operation *op) {
    if (op->hasTrait<OpTrait::ConstantLike>() && isa<MapOp>(op->getParentOp()))
      constants.push_back(op);
  });
  for (Operation *constant : constants)
    while (auto map = dyn_cast<MapOp>(constant->getParentOp()))
      constant->moveBefore(map);
}

namespace {

/// The contract of `soac.segmented`: the body is one nest topped by a reduce
/// or scan (with the maps feeding it) whose neutral elements come from
/// outside the map, and it yields exactly that reduce's (scan's) results.
bool isSegmented(MapOp map) {
  if (!flatten::hasPureBody(map))
    return false;
  SmallVector<flatten::Nest> nests = flatten::findNests(map);
  if (nests.size() != 1)
    return false;
  flatten::Nest &nest = nests.front();
  SmallVector<Value> inits;
  if (auto reduce = dyn_cast<ReduceOp>(nest.top))
    llvm::append_range(inits, reduce.getInits());
  else if (auto scan = dyn_cast<ScanOp>(nest.top))
    llvm::append_range(inits, scan.getInits());
  else
    return false;
  Block &body = map.getBody().front();
  for (Operation &op : body.without_terminator())
    if (!llvm::is_contained(nest.ops, &op) &&
        !op.hasTrait<OpTrait::ConstantLike>())
      return false;
  Region &region = map.getBody();
  if (llvm::any_of(inits, [&](Value init) {
        return region.isAncestor(init.getParentRegion());
      }))
    return false;
  return llvm::equal(body.getTerminator()->getOperands(),
                     nest.top->getResults());
}

} // namespace

void markSegmentedMaps(Operation *root) {
  root->walk([](MapOp map) {
    if (isSegmented(map))
      map->setAttr(kSegmentedAttr, UnitAttr::get(map.getContext()));
    else
      map->removeAttr(kSegmentedAttr);
  });
}

} // namespace soac

namespace {
struct SoacFlattenPass : soac::impl::SoacFlattenBase<SoacFlattenPass> {
  void runOnOperation() override {
    soac::hoistConstantsFromMaps(getOperation());
    RewritePatternSet patterns(&getContext());
    soac::populateSoacFlattenPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation().emitError("soac-flatten did not converge");
      return signalPassFailure();
    }
    soac::markSegmentedMaps(getOperation());
  }
};
} // namespace
