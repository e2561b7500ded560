//===- CollapseMaps.cpp - map∘map → one map over merged dimensions --------===//
//
//   map (λrow. map f row) A        (A : n × m × ...)
//     → expand (map f (collapse A))  (one map over n·m rows)
//
// The same row by row: the flat map runs f on the rows of A in the order the
// nest does, and the result is reshaped back.
//
// When the inner map goes over a tensor of the function rather than over the
// row (GMM's points against its K means), there are no rows to merge: the
// flat map goes over the n·K positions and reads each one's rows by index
// instead (its body may then read the row too),
//
//   map (λr. map (λm. g r m) M) A     (M : K × ...)
//     → expand (map (λi. g A[i / K] M[i mod K]) (iota (n·K)))
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Flatten/Flatten.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

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

/// n rows of m rows: `flat` (one row per position) reshaped to `type`. With
/// no rows (n = 0), a dynamic inner size is 0, as the nest would give.
Value expandRows(PatternRewriter &rewriter, Location loc, Value flat,
                 RankedTensorType type, Value n, OpFoldResult m) {
  RankedTensorType flatType = collapsedType(type);
  if (flat.getType() != flatType)
    flat = tensor::CastOp::create(rewriter, loc, flatType, flat);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  SmallVector<OpFoldResult> sizes;
  sizes.push_back(type.isDynamicDim(0) ? OpFoldResult(n)
                                       : rewriter.getIndexAttr(type.getDimSize(0)));
  if (type.isDynamicDim(1)) {
    Value empty =
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, n, zero);
    sizes.push_back(arith::SelectOp::create(rewriter, loc, empty, zero,
                                            materialize(rewriter, loc, m))
                        .getResult());
  } else {
    sizes.push_back(rewriter.getIndexAttr(type.getDimSize(1)));
  }
  for (int64_t d = 2; d < type.getRank(); ++d)
    sizes.push_back(type.isDynamicDim(d)
                        ? OpFoldResult(tensor::DimOp::create(rewriter, loc,
                                                             flat, d - 1)
                                           .getResult())
                        : rewriter.getIndexAttr(type.getDimSize(d)));
  return tensor::ExpandShapeOp::create(rewriter, loc, type, flat,
                                       mergeOuterTwo(type.getRank()), sizes);
}

struct CollapseMaps : FlattenPattern {
  using FlattenPattern::FlattenPattern;

  LogicalResult flatten(MapOp map, PatternRewriter &rewriter) const override {
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

    // Each result reshaped back: n rows of m rows.
    SmallVector<Value> results;
    for (auto [v, result] : llvm::zip(yield.getValues(), map.getResults()))
      results.push_back(expandRows(rewriter, loc, flat.lookup(v),
                                   cast<RankedTensorType>(result.getType()), n,
                                   innerSize.lookup(v)));
    rewriter.replaceOp(map, results);
    return success();
  }
};

struct CollapseMapsByIndex : FlattenPattern {
  using FlattenPattern::FlattenPattern;

  LogicalResult flatten(MapOp map, PatternRewriter &rewriter) const override {
    // Outermost maps only: inside a map, the tensors of the function include
    // the enclosing rows, and merging a nested map's positions there would
    // leave the outer map a body of index arithmetic that nothing flattens.
    if (map->getParentOfType<MapOp>())
      return rewriter.notifyMatchFailure(map, "nested in a map");
    Block &body = map.getBody().front();
    auto inner = dyn_cast<MapOp>(body.front());
    if (!inner || inner->getNextNode() != body.getTerminator())
      return rewriter.notifyMatchFailure(map, "the body is not one map");
    if (!isMemoryEffectFree(inner))
      return rewriter.notifyMatchFailure(map, "body with side effects");
    auto yield = cast<YieldOp>(body.getTerminator());
    if (!llvm::equal(yield.getValues(), inner.getResults()))
      return rewriter.notifyMatchFailure(map, "yields other values than the inner map's");
    // Each inner input: a row of the map's (a block argument) or a tensor of
    // the function, one at least (with rows only, CollapseMaps merges the
    // rows themselves, or, when the body reads the row, the map stays).
    bool readsFreeTensor = false;
    for (Value input : inner.getInputs()) {
      if (definedOutside(input, map)) {
        readsFreeTensor = true;
        continue;
      }
      auto arg = dyn_cast<BlockArgument>(input);
      if (!arg || arg.getOwner() != &body)
        return rewriter.notifyMatchFailure(map, "an inner input is neither a row nor free");
    }
    if (!readsFreeTensor)
      return rewriter.notifyMatchFailure(map, "the inner map reads rows only");

    Location loc = map.getLoc();
    rewriter.setInsertionPoint(map);
    Value n = outerSizeValue(rewriter, map);
    // m, the inner map's size, from its first input: a free tensor's outer
    // size, or the inner size of the map's input it is a row of.
    Value first = inner.getInputs().front();
    OpFoldResult m =
        definedOutside(first, map)
            ? tensor::getMixedSize(rewriter, loc, first, 0)
            : tensor::getMixedSize(
                  rewriter, loc,
                  map.getInputs()[cast<BlockArgument>(first).getArgNumber()], 1);
    Value mValue = materialize(rewriter, loc, m);
    // The positions: static in number when n and m are.
    std::optional<int64_t> staticN = getConstantIntValue(n),
                           staticM = getConstantIntValue(m);
    Value iota;
    if (staticN && staticM)
      iota = IotaOp::create(
          rewriter, loc,
          RankedTensorType::get({*staticN * *staticM}, rewriter.getIndexType()),
          Value());
    else
      iota = IotaOp::create(
          rewriter, loc,
          RankedTensorType::get({ShapedType::kDynamic}, rewriter.getIndexType()),
          arith::MulIOp::create(rewriter, loc, n, mValue));
    SmallVector<Type> types;
    for (Value result : map.getResults())
      types.push_back(collapsedType(cast<RankedTensorType>(result.getType())));
    auto flatMap = MapOp::create(rewriter, loc, types, ValueRange{iota});
    flatMap->setDiscardableAttrs(inner->getDiscardableAttrDictionary());
    Block *flatBody = rewriter.createBlock(&flatMap.getBody(), {},
                                           {rewriter.getIndexType()}, {loc});
    ImplicitLocOpBuilder b(loc, rewriter);
    Value i = flatBody->getArgument(0);
    Value p = arith::DivUIOp::create(b, i, mValue);
    Value k = arith::RemUIOp::create(b, i, mValue);
    IRMapping rows;
    // The rows of the map the inner body reads, at p.
    for (BlockArgument arg : body.getArguments())
      if (llvm::any_of(arg.getUsers(), [&](Operation *user) {
            return inner.getBody().isAncestor(user->getParentRegion());
          }))
        rows.map(arg, extractAt(b, map.getInputs()[arg.getArgNumber()], {p}));
    // The inner map's rows, at k of a free tensor or at (p, k) of the map's.
    Block &innerBody = inner.getBody().front();
    for (auto [input, innerArg] :
         llvm::zip(inner.getInputs(), innerBody.getArguments()))
      rows.map(innerArg,
               definedOutside(input, map)
                   ? extractAt(b, input, {k})
                   : extractAt(b,
                               map.getInputs()[cast<BlockArgument>(input)
                                                   .getArgNumber()],
                               {p, k}));
    for (Operation &op : innerBody.without_terminator())
      rewriter.clone(op, rows);
    YieldOp::create(b, llvm::map_to_vector(
                           cast<YieldOp>(innerBody.getTerminator()).getValues(),
                           [&](Value v) { return rows.lookupOrDefault(v); }));

    rewriter.setInsertionPoint(map);
    SmallVector<Value> results;
    for (auto [flat, result] :
         llvm::zip(flatMap.getResults(), map.getResults()))
      results.push_back(expandRows(rewriter, loc, flat,
                                   cast<RankedTensorType>(result.getType()), n,
                                   m));
    rewriter.replaceOp(map, results);
    return success();
  }
};

} // namespace

void populateCollapseMapsPatterns(RewritePatternSet &patterns) {
  patterns.add<CollapseMaps, CollapseMapsByIndex>(patterns.getContext());
}

} // namespace soac::flatten
