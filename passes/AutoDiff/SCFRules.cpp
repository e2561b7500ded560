//===- SCFRules.cpp - reverse-mode rules of scf ops -----------------------===//
#include "passes/AutoDiff/RuleModel.h"
#include "passes/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace soac::autodiff {

/// A branch: the return sweep takes the same branch, re-executes it, sweeps
/// it backwards and yields the adjoints of the values it read from outside.
LogicalResult reverseOf(scf::IfOp op, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  // Values read from outside the branches (yielded ones included).
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  SmallVector<Value> free;
  for (Value value : captured)
    if (a.isActive(value))
      free.push_back(value);
  SmallVector<Type> types = llvm::map_to_vector(
      free, [&](Value v) { return a.primal(v).getType(); });
  auto reverse =
      scf::IfOp::create(b, types, a.primal(op.getCondition()), true, true);
  for (auto [source, target] : {std::pair{op.thenBlock(), reverse.thenBlock()},
                                std::pair{op.elseBlock(), reverse.elseBlock()}}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(target);
    SmallVector<Value> yielded;
    if (source) {
      AdjointBuilder scope(b, a.activity(), *source, &a, a.symbolTables(),
                           /*sparseFreeReads=*/false);
      scope.reexecute(*source);
      for (auto [result, value] :
           llvm::zip(op.getResults(), source->getTerminator()->getOperands()))
        scope.accumulate(value, a.adjoint(result));
      if (failed(scope.sweep(*source)))
        return failure();
      for (Value value : free) {
        Value adjoint = scope.outerAdjoints().lookup(value);
        yielded.push_back(adjoint ? adjoint : a.zerosLike(a.primal(value)));
      }
    } else {
      for (Value value : free)
        yielded.push_back(a.zerosLike(a.primal(value)));
    }
    scf::YieldOp::create(b, yielded);
  }
  for (auto [value, adjoint] : llvm::zip(free, reverse.getResults()))
    a.accumulate(value, adjoint);
  return success();
}

namespace {

/// max(0, ceil((ub - lb) / step)) for a loop with a positive step.
Value tripCount(ImplicitLocOpBuilder &b, Value lb, Value ub, Value step) {
  Value zero = arith::ConstantOp::create(b, lb.getType(),
                                         b.getZeroAttr(lb.getType()));
  Value span = arith::MaxSIOp::create(b, arith::SubIOp::create(b, ub, lb), zero);
  return arith::CeilDivSIOp::create(b, span, step);
}

/// `value` (index or integer) as a value of integer-like type `type`.
Value castInteger(ImplicitLocOpBuilder &b, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return arith::IndexCastOp::create(b, type, value);
}

/// The induction variable of iteration `k`: lb + k · step.
Value inductionValue(ImplicitLocOpBuilder &b, Value lb, Value step, Value k) {
  return arith::AddIOp::create(
      b, lb, arith::MulIOp::create(b, castInteger(b, k, lb.getType()), step));
}

} // namespace

/// A loop keeps one checkpoint per iteration: the loop-carried values at the
/// start of the iteration (the only tape soac keeps). The return sweep runs
/// the iterations backwards; each restores its checkpoint, re-executes the
/// body forward, then sweeps it backwards, carrying the adjoints of the
/// loop-carried values and of the values the body reads from outside.
LogicalResult reverseOf(scf::ForOp loop, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Block &body = *loop.getBody();
  Value lb = a.primal(loop.getLowerBound()), ub = a.primal(loop.getUpperBound());
  Value step = a.primal(loop.getStep());
  Value trips = castInteger(b, tripCount(b, lb, ub, step), b.getIndexType());
  SmallVector<Value> inits = llvm::map_to_vector(
      loop.getInitArgs(), [&](Value v) { return a.primal(v); });

  // Forward again, saving the carried values of every iteration.
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  SmallVector<Value> carried(inits);
  for (Value init : inits)
    carried.push_back(emptyRows(b, trips, init));
  size_t n = inits.size();
  auto record = scf::ForOp::create(
      b, zero, trips, one, carried,
      [&](OpBuilder &nested, Location loc, Value k, ValueRange state) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> saved;
        for (auto [value, store] : llvm::zip(state.take_front(n), state.drop_front(n)))
          saved.push_back(insertRow(ib, value, store, k));
        Value iv = inductionValue(ib, lb, step, k);
        IRMapping mapping;
        mapping.map(loop.getInductionVar(), iv);
        mapping.map(loop.getRegionIterArgs(), state.take_front(n));
        for (Value captured : [&] {
               llvm::SetVector<Value> values;
               getUsedValuesDefinedAbove(loop.getRegion(), values);
               return values;
             }())
          mapping.map(captured, a.primal(captured));
        for (Operation &op : body.without_terminator())
          ib.clone(op, mapping);
        SmallVector<Value> next = llvm::map_to_vector(
            body.getTerminator()->getOperands(),
            [&](Value v) { return mapping.lookupOrDefault(v); });
        llvm::append_range(next, saved);
        scf::YieldOp::create(ib, next);
      });
  SmallVector<Value> checkpoints =
      llvm::to_vector_of<Value>(record.getResults().drop_front(n));

  // Backwards: the adjoints of the active carried values, then of the free
  // values the body reads.
  SmallVector<unsigned> activeCarried;
  for (auto [j, arg] : llvm::enumerate(loop.getRegionIterArgs()))
    if (a.isActive(arg))
      activeCarried.push_back(j);
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(loop.getRegion(), captured);
  SmallVector<Value> free;
  for (Value value : captured)
    if (a.isActive(value))
      free.push_back(value);
  SmallVector<Value> adjoints;
  for (unsigned j : activeCarried)
    adjoints.push_back(a.adjointOrZero(loop.getResult(j)));
  for (Value value : free)
    adjoints.push_back(a.zerosLike(a.primal(value)));

  bool failedSweep = false;
  auto reverse = scf::ForOp::create(
      b, zero, trips, one, adjoints,
      [&](OpBuilder &nested, Location loc, Value step_, ValueRange state) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value last = arith::SubIOp::create(ib, trips, one);
        Value k = arith::SubIOp::create(ib, last, step_);
        Value iv = inductionValue(ib, lb, step, k);
        AdjointBuilder scope(ib, a.activity(), body, &a, a.symbolTables(),
                             /*sparseFreeReads=*/false);
        scope.mapPrimal(loop.getInductionVar(), iv);
        for (auto [arg, store] : llvm::zip(loop.getRegionIterArgs(), checkpoints))
          scope.mapPrimal(arg, extractRow(ib, store, k));
        scope.reexecute(body);
        Operation *yield = body.getTerminator();
        for (auto [position, j] : llvm::enumerate(activeCarried))
          scope.accumulate(yield->getOperand(j), state[position]);
        // Free values accumulate into their carried adjoints, in place.
        for (auto [position, value] : llvm::enumerate(free))
          scope.seedOuterAdjoint(value, state[activeCarried.size() + position]);
        SmallVector<Value> next;
        if (failed(scope.sweep(body))) {
          failedSweep = true;
          next.assign(state.begin(), state.end());
        } else {
          for (unsigned j : activeCarried)
            next.push_back(scope.adjointOrZero(loop.getRegionIterArgs()[j]));
          for (Value value : free)
            next.push_back(scope.outerAdjoints().lookup(value));
        }
        scf::YieldOp::create(ib, next);
      });
  if (failedSweep)
    return failure();
  for (auto [position, j] : llvm::enumerate(activeCarried))
    a.accumulate(loop.getInitArgs()[j], reverse.getResult(position));
  for (auto [position, value] : llvm::enumerate(free))
    a.accumulate(value, reverse.getResult(activeCarried.size() + position));
  return success();
}

void registerSCFRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, scf::SCFDialect *) {
    attachRules<scf::IfOp, scf::ForOp>(context);
  });
}

} // namespace soac::autodiff
