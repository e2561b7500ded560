//===- Interchange.cpp - map∘for → for∘map --------------------------------===//
//
//   map (λx. for i < k: acc = f(acc, x, i)) xs
//     → for i < k: accs = map (λacc x. f(acc, x, i)) accs xs
//
// Each row's loop runs the same iterations (the bounds do not depend on the
// row), so running iteration i for all rows before iteration i+1 computes the
// same values: f sees the same arguments in the same order per row.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Flatten/Flatten.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace soac::flatten {

namespace {

Value castTo(OpBuilder &b, Location loc, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return tensor::CastOp::create(b, loc, type, value);
}

struct InterchangeMapFor : FlattenPattern {
  using FlattenPattern::FlattenPattern;

  LogicalResult flatten(MapOp map, PatternRewriter &rewriter) const override {
    Block &body = map.getBody().front();
    auto loop = dyn_cast<scf::ForOp>(body.front());
    if (!loop || loop->getNextNode() != body.getTerminator())
      return rewriter.notifyMatchFailure(map, "the body is not one scf.for");
    Region &mapBody = map.getBody();
    auto outside = [&](Value v) { return !mapBody.isAncestor(v.getParentRegion()); };
    if (!outside(loop.getLowerBound()) || !outside(loop.getUpperBound()) ||
        !outside(loop.getStep()))
      return rewriter.notifyMatchFailure(map, "the trip count depends on the row");
    if (!llvm::all_of(loop.getResultTypes(),
                      [](Type t) { return t.isIntOrIndexOrFloat(); }))
      return rewriter.notifyMatchFailure(map, "a carried value is not a scalar");
    for (Value init : loop.getInitArgs())
      if (!outside(init) && !isa<BlockArgument>(init))
        return rewriter.notifyMatchFailure(map, "an initial value is computed in the row");
    if (!isMemoryEffectFree(loop))
      return rewriter.notifyMatchFailure(map, "loop with side effects");
    if (loop.getBody()
            ->walk([](Operation *op) {
              return isa<MapOp, ReduceOp, ScanOp, ScatterOp, ReduceByIndexOp>(op)
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted())
      return rewriter.notifyMatchFailure(map, "the loop body is not scalar code");
    auto yield = cast<YieldOp>(body.getTerminator());
    for (Value v : yield.getValues())
      if (v.getDefiningOp() != loop)
        return rewriter.notifyMatchFailure(map, "yields a value that is not the loop's");

    Location loc = map.getLoc();
    rewriter.setInsertionPoint(map);
    int64_t outer = staticOuterSize(map);
    Value n = outerSizeValue(rewriter, map);
    // One tensor per carried scalar: the rows' initial values.
    SmallVector<Type> accTypes;
    SmallVector<Value> inits;
    for (Value init : loop.getInitArgs()) {
      auto type = RankedTensorType::get({outer}, init.getType());
      accTypes.push_back(type);
      if (auto arg = dyn_cast<BlockArgument>(init); arg && !outside(arg))
        inits.push_back(
            castTo(rewriter, loc, map.getInputs()[arg.getArgNumber()], type));
      else
        inits.push_back(tensor::SplatOp::create(
            rewriter, loc, init, type,
            type.isDynamicDim(0) ? ValueRange{n} : ValueRange{}));
    }
    // The rows the loop body reads.
    SetVector<BlockArgument> rows;
    loop.getBody()->walk([&](Operation *op) {
      for (Value operand : op->getOperands())
        if (auto arg = dyn_cast<BlockArgument>(operand); arg && arg.getOwner() == &body)
          rows.insert(arg);
    });

    auto newLoop = scf::ForOp::create(
        rewriter, loc, loop.getLowerBound(), loop.getUpperBound(),
        loop.getStep(), inits,
        [&](OpBuilder &b, Location loc, Value iv, ValueRange accs) {
          SmallVector<Value> inputs(accs);
          SmallVector<Type> argTypes(loop.getResultTypes());
          for (BlockArgument row : rows) {
            inputs.push_back(map.getInputs()[row.getArgNumber()]);
            argTypes.push_back(row.getType());
          }
          auto step = MapOp::create(b, loc, accTypes, inputs);
          Block *block = b.createBlock(&step.getBody(), {}, argTypes,
                                       SmallVector<Location>(argTypes.size(), loc));
          IRMapping mapping;
          mapping.map(loop.getInductionVar(), iv);
          mapping.map(loop.getRegionIterArgs(),
                      block->getArguments().take_front(accs.size()));
          mapping.map(rows.getArrayRef(),
                      block->getArguments().drop_front(accs.size()));
          for (Operation &op : loop.getBody()->without_terminator())
            b.clone(op, mapping);
          YieldOp::create(
              b, loc,
              llvm::map_to_vector(loop.getYieldedValues(), [&](Value v) {
                return mapping.lookupOrDefault(v);
              }));
          b.setInsertionPointAfter(step);
          scf::YieldOp::create(b, loc, step.getResults());
        },
        loop.getUnsignedCmp());

    SmallVector<Value> results;
    for (auto [v, result] : llvm::zip(yield.getValues(), map.getResults()))
      results.push_back(castTo(rewriter, loc,
                               newLoop.getResult(cast<OpResult>(v).getResultNumber()),
                               result.getType()));
    rewriter.replaceOp(map, results);
    return success();
  }
};

} // namespace

void populateInterchangePatterns(RewritePatternSet &patterns) {
  patterns.add<InterchangeMapFor>(patterns.getContext());
}

} // namespace soac::flatten
