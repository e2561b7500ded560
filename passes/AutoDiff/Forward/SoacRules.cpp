//===- SoacRules.cpp - forward-mode rules of the SOACs --------------------===//
//
// Each SOAC computes its primal and its tangent at once: its body or operator
// is lifted to (primal, tangent) pairs.
//
// map:    the tangent rows of the inputs enter as extra inputs; the body
//         yields the tangents of the active results next to the primals.
// reduce, scan, reduce_by_index: the operator ⊙ becomes
//         (a, ȧ) ⊙' (b, ḃ) = (a ⊙ b, ∂₁(a ⊙ b)·ȧ + ∂₂(a ⊙ b)·ḃ), associative
//         when ⊙ is (chain rule), with the neutral element (e, 0): the
//         tangent of a neutral element is zero.
// scatter: linear in dest and values.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Interfaces/RuleModel.h"

#include "dialect/SoacOps.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

/// `inits` followed by zeros for the components at `positions`.
SmallVector<Value> withZeroTangents(TangentBuilder &t, ValueRange inits,
                                    ArrayRef<unsigned> positions) {
  SmallVector<Value> all = t.primals(inits);
  for (unsigned j : positions)
    all.append(t.width(), t.zerosLike(t.primal(inits[j])));
  return all;
}

/// The operator block of reduce, scan and reduce_by_index lifted to pairs:
/// arguments (accumulators, their tangents at `positions`, rows, their
/// tangents), yielding the new accumulators and their tangents.
FailureOr<Block *> liftOperator(TangentBuilder &t, Block &op,
                                TypeRange componentTypes,
                                ArrayRef<unsigned> positions) {
  size_t n = componentTypes.size();
  SmallVector<Type> types =
      withTangentTypes(componentTypes, positions, t.width());
  SmallVector<Type> argTypes(types);
  llvm::append_range(argTypes, types);
  size_t width = types.size();
  bool failedLift = false;
  Block *block = buildBody(
      t.builder(), argTypes,
      [&](ImplicitLocOpBuilder &ib, ValueRange args) -> SmallVector<Value> {
        ValueRange accs = args.take_front(width), rows = args.drop_front(width);
        SmallVector<Value> primals(accs.take_front(n));
        llvm::append_range(primals, rows.take_front(n));
        SmallVector<Value> tangents =
            spreadTangents(accs.drop_front(n), positions, n, t.width());
        llvm::append_range(
            tangents, spreadTangents(rows.drop_front(n), positions, n, t.width()));
        FailureOr<Lifted> lifted = t.lift(ib, op, primals, tangents, positions);
        if (failed(lifted)) {
          failedLift = true;
          return SmallVector<Value>(accs);
        }
        return lifted->all();
      });
  if (failedLift) {
    block->dropAllDefinedValueUses();
    delete block;
    return failure();
  }
  return block;
}

} // namespace

LogicalResult forwardOf(MapOp map, TangentBuilder &t) {
  ImplicitLocOpBuilder &b = t.builder();
  Block &body = map.getBody().front();
  size_t n = map.getInputs().size();
  // The tangent lanes of the inputs that have one enter as extra inputs.
  SmallVector<Value> inputs = t.primals(map.getInputs());
  SmallVector<unsigned> laneSlots; // input j, lane l at j·width + l
  for (auto [j, input] : llvm::enumerate(map.getInputs()))
    for (unsigned lane : t.laneIndices())
      if (Value tangent = t.tangent(input, lane)) {
        inputs.push_back(tangent);
        laneSlots.push_back(j * t.width() + lane);
      }
  SmallVector<unsigned> active = t.activePositions(map.getResults());
  SmallVector<Type> rowTypes = llvm::map_to_vector(
      inputs, [](Value v) { return rowType(v.getType()); });
  bool failedLift = false;
  Block *block = buildBody(
      b, rowTypes,
      [&](ImplicitLocOpBuilder &ib, ValueRange rows) -> SmallVector<Value> {
        SmallVector<Value> argTangents(n * t.width());
        for (auto [row, slot] : llvm::zip(rows.drop_front(n), laneSlots))
          argTangents[slot] = row;
        FailureOr<Lifted> lifted =
            t.lift(ib, body, rows.take_front(n), argTangents, active);
        if (failed(lifted)) {
          failedLift = true;
          return {};
        }
        return lifted->all();
      });
  auto lifted = MapOp::create(
      b, withTangentTypes(map.getResultTypes(), active, t.width()), inputs);
  lifted.getBody().push_back(block);
  if (failedLift)
    return failure();
  t.mapLiftedResults(map, lifted, active);
  return success();
}

namespace {
/// reduce and scan: the operator on pairs, the inputs with their tangents,
/// the inits (neutral) with zero tangents.
template <typename Fold>
LogicalResult forwardOfFold(Fold fold, TangentBuilder &t) {
  SmallVector<unsigned> active = t.activePositions(fold.getResults());
  FailureOr<Block *> op = liftOperator(t, fold.getBody().front(),
                                       fold.getInits().getTypes(), active);
  if (failed(op))
    return failure();
  auto lifted = Fold::create(
      t.builder(), withTangentTypes(fold.getResultTypes(), active, t.width()),
      t.withTangents(fold.getInputs(), active),
      withZeroTangents(t, fold.getInits(), active));
  lifted.getBody().push_back(*op);
  t.mapLiftedResults(fold, lifted, active);
  return success();
}
} // namespace

LogicalResult forwardOf(ReduceOp reduce, TangentBuilder &t) {
  return forwardOfFold(reduce, t);
}

LogicalResult forwardOf(ScanOp scan, TangentBuilder &t) {
  return forwardOfFold(scan, t);
}

/// dest[iᵢ] ⊙= vᵢ with the lifted operator, from the dests' tangents.
LogicalResult forwardOf(ReduceByIndexOp histogram, TangentBuilder &t) {
  SmallVector<unsigned> active = t.activePositions(histogram.getResults());
  FailureOr<Block *> op =
      liftOperator(t, histogram.getBody().front(),
                   histogram.getInits().getTypes(), active);
  if (failed(op))
    return failure();
  auto lifted = ReduceByIndexOp::create(
      t.builder(), withTangentTypes(histogram.getResultTypes(), active, t.width()),
      t.withTangents(histogram.getDests(), active),
      t.primal(histogram.getIndices()),
      t.withTangents(histogram.getValues(), active),
      withZeroTangents(t, histogram.getInits(), active));
  lifted.getBody().push_back(*op);
  t.mapLiftedResults(histogram, lifted, active);
  return success();
}

LogicalResult forwardOf(ScatterOp scatter, TangentBuilder &t) {
  return t.forwardLinear(scatter);
}

void registerSoacForwardRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, SoacDialect *) {
    attachForwardRules<MapOp, ReduceOp, ScanOp, ReduceByIndexOp, ScatterOp>(
        context);
  });
}

} // namespace soac::autodiff
