//===- SCFRules.cpp - forward-mode rules of scf ops -----------------------===//
//
// Loops carry a tangent next to each active carried value; a branch yields
// the tangents of its active results next to them. One loop, one branch.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Interfaces/RuleModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace soac::autodiff {

LogicalResult forwardOf(scf::ForOp loop, TangentBuilder &t) {
  ImplicitLocOpBuilder &b = t.builder();
  Block &body = *loop.getBody();
  SmallVector<unsigned> active = t.activePositions(loop.getResults());
  size_t n = loop.getNumResults();
  SmallVector<Value> inits = t.withTangents(loop.getInitArgs(), active);
  bool failedLift = false;
  auto lifted = scf::ForOp::create(
      b, t.primal(loop.getLowerBound()), t.primal(loop.getUpperBound()),
      t.primal(loop.getStep()), inits,
      [&](OpBuilder &nested, Location loc, Value iv, ValueRange state) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> args{iv};
        llvm::append_range(args, state.take_front(n));
        SmallVector<Value> argTangents(t.width()); // the induction variable's
        llvm::append_range(argTangents,
                           spreadTangents(state.drop_front(n), active, n, t.width()));
        FailureOr<Lifted> next = t.lift(ib, body, args, argTangents, active);
        if (failed(next)) {
          failedLift = true;
          scf::YieldOp::create(ib, state);
          return;
        }
        scf::YieldOp::create(ib, next->all());
      });
  if (failedLift)
    return failure();
  lifted.setUnsignedCmp(loop.getUnsignedCmp());
  t.mapLiftedResults(loop, lifted, active);
  return success();
}

LogicalResult forwardOf(scf::IfOp op, TangentBuilder &t) {
  ImplicitLocOpBuilder &b = t.builder();
  SmallVector<unsigned> active = t.activePositions(op.getResults());
  SmallVector<Type> types = withTangentTypes(op.getResultTypes(), active, t.width());
  auto lifted = scf::IfOp::create(b, types, t.primal(op.getCondition()),
                                  /*addThenBlock=*/true, /*addElseBlock=*/true);
  for (auto [source, target] : {std::pair{op.thenBlock(), lifted.thenBlock()},
                                std::pair{op.elseBlock(), lifted.elseBlock()}}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(target);
    // A branch without results may lack its else block: nothing to lift.
    if (!source)
      continue;
    FailureOr<Lifted> branch = t.lift(b, *source, {}, {}, active);
    if (failed(branch))
      return failure();
    scf::YieldOp::create(b, branch->all());
  }
  t.mapLiftedResults(op, lifted, active);
  return success();
}

/// The before region tests the carried values and forwards some to the after
/// region (the loop's results); the after region computes the next carried
/// values. Each gets the tangents of the active ones next to them.
LogicalResult forwardOf(scf::WhileOp loop, TangentBuilder &t) {
  ImplicitLocOpBuilder &b = t.builder();
  Block &before = loop.getBefore().front(), &after = loop.getAfter().front();
  SmallVector<unsigned> activeCarried =
      t.activePositions(before.getArguments());
  SmallVector<unsigned> activeForwarded = t.activePositions(loop.getResults());
  size_t numCarried = before.getNumArguments();
  size_t numForwarded = loop.getNumResults();
  SmallVector<Value> inits = t.withTangents(loop.getInits(), activeCarried);
  SmallVector<Type> types =
      withTangentTypes(loop.getResultTypes(), activeForwarded, t.width());
  bool failedLift = false;
  auto lifted = scf::WhileOp::create(
      b, types, inits,
      [&](OpBuilder &nested, Location loc, ValueRange state) {
        ImplicitLocOpBuilder ib(loc, nested);
        // The condition's operands: the test, then the forwarded values.
        SmallVector<unsigned> positions = llvm::map_to_vector(
            activeForwarded, [](unsigned j) { return j + 1; });
        FailureOr<Lifted> test = t.lift(
            ib, before, state.take_front(numCarried),
            spreadTangents(state.drop_front(numCarried), activeCarried, numCarried,
                           t.width()),
            positions);
        if (failed(test)) {
          failedLift = true;
          Value stop = arith::ConstantIntOp::create(ib, 0, 1);
          scf::ConditionOp::create(ib, stop, ValueRange());
          return;
        }
        SmallVector<Value> all = test->all();
        scf::ConditionOp::create(ib, all.front(), ArrayRef(all).drop_front());
      },
      [&](OpBuilder &nested, Location loc, ValueRange forwarded) {
        ImplicitLocOpBuilder ib(loc, nested);
        FailureOr<Lifted> next = t.lift(
            ib, after, forwarded.take_front(numForwarded),
            spreadTangents(forwarded.drop_front(numForwarded), activeForwarded,
                           numForwarded, t.width()),
            activeCarried);
        if (failed(next)) {
          failedLift = true;
          scf::YieldOp::create(ib, ValueRange());
          return;
        }
        scf::YieldOp::create(ib, next->all());
      });
  if (failedLift)
    return failure();
  t.mapLiftedResults(loop, lifted, activeForwarded);
  return success();
}

void registerSCFForwardRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, scf::SCFDialect *) {
    attachForwardRules<scf::ForOp, scf::IfOp, scf::WhileOp>(context);
  });
}

} // namespace soac::autodiff
