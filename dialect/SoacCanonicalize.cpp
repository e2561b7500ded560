//===- SoacCanonicalize.cpp - simplifications of soac.map -----------------===//
//
// Derivatives produce maps with rows nobody reads, inputs read only for
// their size, rows that are one value, the same row yielded twice and sums
// of histograms; these patterns (part of canonicalize) shrink them.
//
//===----------------------------------------------------------------------===//

#include "dialect/SoacOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace soac;

namespace {

/// Rebuilds `map` keeping the inputs and results marked in `keepInputs` and
/// `keepResults`; replaces the kept results and returns the new op.
MapOp rebuild(PatternRewriter &rewriter, MapOp map, ArrayRef<bool> keepInputs,
              ArrayRef<bool> keepResults) {
  MapOp replacement = copyMap(rewriter, map, keepInputs, keepResults);
  auto next = replacement.getResults().begin();
  for (auto [result, keep] : llvm::zip(map.getResults(), keepResults))
    if (keep)
      rewriter.replaceAllUsesWith(result, *next++);
  rewriter.eraseOp(map);
  return replacement;
}

/// Results nobody uses, and inputs whose rows the body never reads (one input
/// stays, for the outer size).
struct DropUnusedMapOperands : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MapOp map,
                                PatternRewriter &rewriter) const override {
    Block &body = map.getBody().front();
    SmallVector<bool> keepResults = llvm::map_to_vector(
        map.getResults(), [](Value r) { return !r.use_empty(); });
    SmallVector<bool> keepInputs = llvm::map_to_vector(
        body.getArguments(), [](Value arg) { return !arg.use_empty(); });
    if (llvm::none_of(keepInputs, [](bool keep) { return keep; }))
      keepInputs.front() = true;
    bool dropsSomething = llvm::is_contained(keepResults, false) ||
                          llvm::is_contained(keepInputs, false);
    if (!dropsSomething || llvm::none_of(keepResults, [](bool k) { return k; }))
      return failure(); // (a map without used results is dead code already)
    rebuild(rewriter, map, keepInputs, keepResults);
    return success();
  }
};

/// A result that yields an input's row unchanged is that input.
struct ForwardIdentityRows : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MapOp map,
                                PatternRewriter &rewriter) const override {
    Block &body = map.getBody().front();
    bool changed = false;
    for (auto [result, yielded] :
         llvm::zip(map.getResults(), body.getTerminator()->getOperands())) {
      auto arg = dyn_cast<BlockArgument>(yielded);
      if (!arg || arg.getOwner() != &body || result.use_empty())
        continue;
      Value input = map.getInputs()[arg.getArgNumber()];
      if (input.getType() != result.getType())
        continue;
      rewriter.replaceAllUsesWith(result, input);
      changed = true;
    }
    return success(changed);
  }
};

/// The rows of an input made by a map that yields the same value for every
/// row (one defined outside its body) are that value: the body reads it
/// directly, and the input goes (DropUnusedMapOperands). Gradients make
/// such maps: the adjoint of a sum is its seed in every row, and its
/// tangent zero. Without this, each is a tensor filled and read again.
struct ReadInvariantRowsDirectly : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MapOp map,
                                PatternRewriter &rewriter) const override {
    Block &body = map.getBody().front();
    bool changed = false;
    for (auto [input, arg] : llvm::zip(map.getInputs(), body.getArguments())) {
      auto producer = input.getDefiningOp<MapOp>();
      if (!producer || arg.use_empty())
        continue;
      Value yielded = producer.getBody().front().getTerminator()->getOperand(
          cast<OpResult>(input).getResultNumber());
      // Defined above the producer, so it dominates the producer and hence
      // this map, which reads the producer's result.
      if (producer.getBody().isAncestor(yielded.getParentRegion()) ||
          yielded.getType() != arg.getType())
        continue;
      rewriter.replaceAllUsesWith(arg, yielded);
      changed = true;
    }
    return success(changed);
  }
};

/// Two results yielding the same value are the same tensor: uses of the
/// later one take the earlier (which then loses it as unused). Derivatives
/// yield an index once per adjoint that reads it.
struct MergeDuplicateResults : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MapOp map,
                                PatternRewriter &rewriter) const override {
    Operation *yield = map.getBody().front().getTerminator();
    bool changed = false;
    for (auto [later, value] : llvm::enumerate(yield->getOperands())) {
      Value result = map.getResult(later);
      if (result.use_empty())
        continue;
      for (unsigned earlier = 0; earlier < later; ++earlier)
        if (yield->getOperand(earlier) == value &&
            map.getResult(earlier).getType() == result.getType()) {
          rewriter.replaceAllUsesWith(result, map.getResult(earlier));
          changed = true;
          break;
        }
    }
    return success(changed);
  }
};

/// An input read only for its size can be any tensor of the same outer
/// size: take the one the producing map read, so that the producer may die.
struct ReadSizeUpstream : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MapOp map,
                                PatternRewriter &rewriter) const override {
    if (map.getInputs().size() != 1 ||
        !map.getBody().front().getArgument(0).use_empty())
      return failure();
    auto producer = map.getInputs()[0].getDefiningOp<MapOp>();
    if (!producer)
      return failure();
    Value upstream = producer.getInputs()[0];
    Block &body = map.getBody().front();
    rewriter.modifyOpInPlace(map, [&] {
      map.getInputsMutable().assign(upstream);
      body.getArgument(0).setType(rowType(upstream.getType()));
    });
    return success();
  }
};

/// The histogram of `value` when it starts from the neutral element (a splat
/// of its init), has one destination and no other reader; null otherwise.
ReduceByIndexOp histogramFromNeutral(Value value) {
  auto histogram = value.getDefiningOp<ReduceByIndexOp>();
  if (!histogram || histogram.getDests().size() != 1 || !value.hasOneUse())
    return nullptr;
  Value dest = histogram.getDests()[0], init = histogram.getInits()[0];
  Attribute initValue;
  bool constantInit = matchPattern(init, m_Constant(&initValue));
  // A splat of the neutral element, or its constant folded form.
  if (auto splat = dest.getDefiningOp<tensor::SplatOp>()) {
    Attribute splatValue;
    bool same = splat.getInput() == init ||
                (constantInit &&
                 matchPattern(splat.getInput(), m_Constant(&splatValue)) &&
                 splatValue == initValue);
    return same ? histogram : nullptr;
  }
  SplatElementsAttr dense;
  bool same = constantInit && matchPattern(dest, m_Constant(&dense)) &&
              dense.getSplatValue<Attribute>() == initValue;
  return same ? histogram : nullptr;
}

/// `map (op) (reduce_by_index (op) (splat neutral) is vs) x` is the
/// histogram of `vs` accumulated into `x`: `reduce_by_index (op) x is vs`
/// (the operator is associative and commutative). Gradients sum one
/// histogram per gather of a tensor; this accumulates them into one
/// destination instead of filling and adding a tensor per gather.
struct AccumulateHistogram : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MapOp map,
                                PatternRewriter &rewriter) const override {
    if (map.getInputs().size() != 2 || map.getNumResults() != 1)
      return failure();
    Operation *combine = combiningOp(map.getBody());
    if (!combine)
      return failure();
    for (unsigned h = 0; h < 2; ++h) {
      Value other = map.getInputs()[1 - h];
      ReduceByIndexOp histogram = histogramFromNeutral(map.getInputs()[h]);
      if (!histogram || other.getType() != map.getResult(0).getType())
        continue;
      Operation *histogramCombine = combiningOp(histogram.getBody());
      if (!histogramCombine ||
          histogramCombine->getName() != combine->getName() ||
          histogramCombine->getAttrDictionary() != combine->getAttrDictionary())
        continue;
      auto accumulated = ReduceByIndexOp::create(
          rewriter, map.getLoc(), TypeRange{other.getType()},
          ValueRange{other}, histogram.getIndices(), histogram.getValues(),
          histogram.getInits());
      rewriter.cloneRegionBefore(histogram.getBody(), accumulated.getBody(),
                                 accumulated.getBody().end());
      rewriter.replaceOp(map, accumulated.getResults());
      rewriter.eraseOp(histogram);
      return success();
    }
    return failure();
  }
};

} // namespace

void MapOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<DropUnusedMapOperands, ForwardIdentityRows, ReadSizeUpstream,
               ReadInvariantRowsDirectly, MergeDuplicateResults,
               AccumulateHistogram>(context);
}
