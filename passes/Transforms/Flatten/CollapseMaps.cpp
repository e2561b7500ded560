//===- CollapseMaps.cpp - map∘map → one map over merged dimensions --------===//
//
//   map (λrow. map f row) A        (A : n × m × ...)
//     → expand (map f (collapse A))  (one map over n·m rows)
//
// The same row by row: the flat map runs f on the rows of A in the order the
// nest does, and the result is reshaped back.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Flatten/Flatten.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::flatten {

namespace {

/// The reassociation merging the two outer dimensions of a rank-`rank` tensor.
SmallVector<ReassociationIndices> mergeOuterTwo(int64_t rank) {
  SmallVector<ReassociationIndices> groups{{0, 1}};
  for (int64_t d = 2; d < rank; ++d)
    groups.push_back({d});
  return groups;
}

/// The type of `expanded` with its two outer dimensions merged.
RankedTensorType collapsedType(RankedTensorType expanded) {
  int64_t outer = ShapedType::kDynamic;
  if (!expanded.isDynamicDim(0) && !expanded.isDynamicDim(1))
    outer = expanded.getDimSize(0) * expanded.getDimSize(1);
  SmallVector<int64_t> shape{outer};
  llvm::append_range(shape, expanded.getShape().drop_front(2));
  return RankedTensorType::get(shape, expanded.getElementType());
}

Value materialize(OpBuilder &b, Location loc, OpFoldResult size) {
  if (auto value = dyn_cast<Value>(size))
    return value;
  return arith::ConstantIndexOp::create(
      b, loc, cast<IntegerAttr>(cast<Attribute>(size)).getInt());
}

/// True when the body of `inner` (a map in `outer`'s body) reads nothing
/// `outer`'s body defines: it is then the same function in every row.
bool independentOfRows(MapOp inner, MapOp outer) {
  Region &outerBody = outer.getBody();
  return !inner.getBody()
              .walk([&](Operation *op) {
                for (Value operand : op->getOperands())
                  if (operand.getParentRegion() == &outerBody)
                    return WalkResult::interrupt();
                return WalkResult::advance();
              })
              .wasInterrupted();
}

struct CollapseMaps : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MapOp map,
                                PatternRewriter &rewriter) const override {
    if (inCombiningOperator(map))
      return rewriter.notifyMatchFailure(map, "in a combining operator");
    Block &body = map.getBody().front();
    // The body: maps over rows of the inputs (or over results of earlier
    // such maps) whose own bodies do not depend on the row, and a yield of
    // their results.
    SmallVector<MapOp> inner;
    DenseSet<Value> innerResults;
    for (Operation &op : body.without_terminator()) {
      auto nested = dyn_cast<MapOp>(op);
      if (!nested)
        return rewriter.notifyMatchFailure(map, "a body statement is not a map");
      for (Value input : nested.getInputs())
        if (!innerResults.contains(input) &&
            !(isa<BlockArgument>(input) &&
              cast<BlockArgument>(input).getOwner() == &body))
          return rewriter.notifyMatchFailure(
              map, "an inner map reads a tensor that is not a row");
      if (!independentOfRows(nested, map))
        return rewriter.notifyMatchFailure(
            map, "an inner map body reads a value of the row");
      if (!isMemoryEffectFree(nested))
        return rewriter.notifyMatchFailure(map, "body with side effects");
      inner.push_back(nested);
      innerResults.insert(nested.getResults().begin(),
                          nested.getResults().end());
    }
    if (inner.empty())
      return rewriter.notifyMatchFailure(map, "no inner map");
    auto yield = cast<YieldOp>(body.getTerminator());
    for (Value v : yield.getValues())
      if (!innerResults.contains(v))
        return rewriter.notifyMatchFailure(map, "yields a value that is not an inner map's");

    Location loc = map.getLoc();
    rewriter.setInsertionPoint(map);
    // The outer size n, and for each row tensor its outer size m (the size
    // of the inner maps over it).
    int64_t staticOuter = staticOuterSize(map);
    Value n = outerSizeValue(rewriter, map);
    IRMapping flat;
    DenseMap<Value, OpFoldResult> innerSize;
    for (OpOperand &input : map->getOpOperands()) {
      BlockArgument row = body.getArgument(input.getOperandNumber());
      if (row.use_empty())
        continue;
      auto type = cast<RankedTensorType>(input.get().getType());
      flat.map(row, tensor::CollapseShapeOp::create(
                        rewriter, loc, input.get(), mergeOuterTwo(type.getRank())));
      innerSize[row] = tensor::getMixedSize(rewriter, loc, input.get(), 1);
    }
    for (MapOp nested : inner) {
      SmallVector<Value> inputs = llvm::map_to_vector(
          nested.getInputs(), [&](Value v) { return flat.lookup(v); });
      OpFoldResult m = innerSize.lookup(nested.getInputs().front());
      SmallVector<Type> types;
      for (OpResult result : nested.getResults()) {
        auto type = cast<RankedTensorType>(result.getType());
        SmallVector<int64_t> shape{staticOuter};
        llvm::append_range(shape, type.getShape());
        types.push_back(
            collapsedType(RankedTensorType::get(shape, type.getElementType())));
      }
      auto flatMap = MapOp::create(rewriter, loc, types, inputs);
      flatMap->setDiscardableAttrs(nested->getDiscardableAttrDictionary());
      rewriter.inlineRegionBefore(nested.getBody(), flatMap.getBody(),
                                  flatMap.getBody().end());
      for (auto [result, flatResult] :
           llvm::zip(nested.getResults(), flatMap.getResults())) {
        flat.map(result, flatResult);
        innerSize[result] = m;
      }
    }

    // Each result reshaped back: n rows of m rows. With no rows (n = 0), a
    // map's dynamic inner sizes are 0, as the nest would give.
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value empty = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        n, zero);
    SmallVector<Value> results;
    for (auto [v, result] : llvm::zip(yield.getValues(), map.getResults())) {
      auto type = cast<RankedTensorType>(result.getType());
      Value source = flat.lookup(v);
      RankedTensorType sourceType = collapsedType(type);
      if (source.getType() != sourceType)
        source = tensor::CastOp::create(rewriter, loc, sourceType, source);
      SmallVector<OpFoldResult> sizes;
      sizes.push_back(type.isDynamicDim(0) ? OpFoldResult(n)
                                           : rewriter.getIndexAttr(type.getDimSize(0)));
      if (type.isDynamicDim(1)) {
        Value m = materialize(rewriter, loc, innerSize.lookup(v));
        sizes.push_back(
            arith::SelectOp::create(rewriter, loc, empty, zero, m).getResult());
      } else {
        sizes.push_back(rewriter.getIndexAttr(type.getDimSize(1)));
      }
      for (int64_t d = 2; d < type.getRank(); ++d)
        sizes.push_back(type.isDynamicDim(d)
                            ? OpFoldResult(tensor::DimOp::create(
                                  rewriter, loc, source, d - 1).getResult())
                            : rewriter.getIndexAttr(type.getDimSize(d)));
      results.push_back(tensor::ExpandShapeOp::create(
          rewriter, loc, type, source, mergeOuterTwo(type.getRank()), sizes));
    }
    rewriter.replaceOp(map, results);
    return success();
  }
};

} // namespace

void populateCollapseMapsPatterns(RewritePatternSet &patterns) {
  patterns.add<CollapseMaps>(patterns.getContext());
}

} // namespace soac::flatten
