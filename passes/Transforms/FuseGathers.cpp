//===- FuseGathers.cpp - soac-fuse-gathers ---------------------------------===//
//
// A cheap map whose results are only read element by element (gathers,
// `x[j]`) is computed where each element is read: its inputs are read at
// that index and its body runs there. On the GPU the map was a kernel of
// its own (D-LSTM's `sequence[t] * extra[0]` each time step, read by the
// first layer's kernel); now it is part of its readers'.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/FuseMaps.h"
#include "passes/Transforms/Passes.h"
#include "passes/Utils/Bodies.h"
#include "dialect/SoacOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace soac {
#define GEN_PASS_DEF_SOACFUSEGATHERS
#include "passes/Transforms/Passes.h.inc"
} // namespace soac

using namespace mlir;
using namespace soac;

namespace {

/// A map of vectors to vectors, cheap and pure, read only by tensor.extract
/// (and tensor.dim: its size is its inputs').
bool gatheredOnly(MapOp map) {
  if (map->use_empty() || !cheapToRecompute(map) ||
      !isMemoryEffectFree(map) || !hasScalarRows(map))
    return false;
  bool nested = false;
  map.getBody().walk([&](MapOp) { nested = true; });
  return !nested && !map.getInputs().empty() &&
         llvm::all_of(map->getUsers(), [](Operation *user) {
           return isa<tensor::ExtractOp, tensor::DimOp>(user);
         });
}

struct FuseGatheredMap : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MapOp map,
                                PatternRewriter &rewriter) const override {
    if (!gatheredOnly(map))
      return rewriter.notifyMatchFailure(map, "not a cheap map only gathered");
    Block &body = map.getBody().front();
    for (Operation *user : llvm::to_vector(map->getUsers())) {
      if (auto dim = dyn_cast<tensor::DimOp>(user)) {
        rewriter.modifyOpInPlace(
            dim, [&] { dim.getSourceMutable().assign(map.getInputs()[0]); });
        continue;
      }
      auto extract = cast<tensor::ExtractOp>(user);
      rewriter.setInsertionPoint(extract);
      IRMapping mapping;
      for (auto [input, arg] : llvm::zip(map.getInputs(), body.getArguments()))
        mapping.map(arg, tensor::ExtractOp::create(rewriter, extract.getLoc(),
                                                   input,
                                                   extract.getIndices()));
      for (Operation &op : body.without_terminator())
        rewriter.clone(op, mapping);
      unsigned result = cast<OpResult>(extract.getTensor()).getResultNumber();
      rewriter.replaceOp(extract, mapping.lookupOrDefault(
                                      body.getTerminator()->getOperand(result)));
    }
    rewriter.eraseOp(map);
    return success();
  }
};

struct SoacFuseGathersPass
    : soac::impl::SoacFuseGathersBase<SoacFuseGathersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseGatheredMap>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
