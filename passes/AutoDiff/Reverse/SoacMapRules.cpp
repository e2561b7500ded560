//===- SoacMapRules.cpp - the reverse rule of soac.map --------------------===//
//
// x̄s += map (λ x ȳ. vjp body x ȳ) xs ȳs, the body re-executed inside,
// except what the map's forward run yields or keeps for it (math functions,
// nested SOACs that do more than arithmetic); free scalars: per-row
// contributions summed by reduce (+); free tensors read by tensor.extract,
// at any depth of the body: (index, value) per read, stacked over the rows
// and passed on to the enclosing scope (Engine/SparseAdjoints.h), which
// scatters them by reduce_by_index (+); free tensors used whole: per-row
// tensors summed by a reduce over rows. In mixed mode
// (Engine/MixedMode.h) the body's partials come from a forward sweep instead.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Reverse/SoacRules.h"

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Engine/MixedMode.h"
#include "passes/AutoDiff/Engine/SparseAdjoints.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

/// A math function of scalars (exp, tanh, log, ...): dearer than arithmetic.
/// Rounding, sign and fused multiply-add ops are as cheap as arithmetic.
bool isMathFunction(Operation &op) {
  return isa<math::MathDialect>(op.getDialect()) &&
         !isa<math::AbsFOp, math::CopySignOp, math::FmaOp, math::FloorOp,
              math::CeilOp, math::RoundOp, math::RoundEvenOp, math::TruncOp>(
             op);
}

/// Whether the outer size of `value` (read in `body`) is the same in every
/// row of the map owning `body`: static, from outside the body, a row of the
/// map's inputs, or that of the inputs of the map or scan defining it.
bool hasUniformOuterSize(Value value, Block &body) {
  auto type = cast<RankedTensorType>(value.getType());
  if (!type.isDynamicDim(0))
    return true;
  if (!body.getParent()->isAncestor(value.getParentRegion()) ||
      (isa<BlockArgument>(value) && value.getParentBlock() == &body))
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != &body || !isa<MapOp, ScanOp>(def))
    return false;
  ValueRange inputs = isa<MapOp>(def) ? cast<MapOp>(def).getInputs()
                                      : cast<ScanOp>(def).getInputs();
  return llvm::any_of(inputs,
                      [&](Value input) { return hasUniformOuterSize(input, body); });
}

/// Whether the map body's `op` is worth keeping from the forward run for the
/// adjoint map, which would otherwise compute it again per row: a math
/// function, or a SOAC whose body does more than arithmetic (a nested SOAC
/// or loop, a math function), with scalar or vector results of the same
/// size in every row (so that the map's rows can hold them).
bool isWorthKeeping(Operation &op, Block &body) {
  auto keepable = [&](Value result) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    return !type || (type.getRank() == 1 && hasUniformOuterSize(result, body));
  };
  if (isMathFunction(op))
    return op.getNumResults() == 1 &&
           isa<FloatType>(op.getResult(0).getType());
  if (!isa<MapOp, ReduceOp, ScanOp>(op) ||
      !llvm::all_of(op.getResults(), keepable))
    return false;
  bool works = false;
  op.walk([&](Operation *inner) {
    if (inner != &op && (inner->getNumRegions() > 0 || isMathFunction(*inner)))
      works = true;
  });
  return works;
}

/// The forward run of an active map also yields, per row, the values of its
/// body that are worth keeping (`isWorthKeeping`) and that it does not yield
/// anyway, so that its adjoint map reads them (and the values it yields)
/// instead of computing them a second time.
void reexecuteOf(MapOp map, AdjointBuilder &a) {
  Block &body = map.getBody().front();
  Operation *yield = body.getTerminator();
  SmallVector<Value> kept;
  // A map whose adjoint map yields its results keeps nothing: that map
  // computes the body once (Engine/ResultsFromAdjoint.h).
  if (llvm::any_of(map.getResults(), [&](Value r) { return a.isActive(r); }) &&
      !a.resultsFromAdjoint(map))
    for (Operation &op : body.without_terminator())
      if (isWorthKeeping(op, body))
        for (Value result : op.getResults())
          if (!llvm::is_contained(yield->getOperands(), result))
            kept.push_back(result);
  if (kept.empty())
    return a.cloneForward(*map);

  ImplicitLocOpBuilder &b = a.builder();
  int64_t rows = cast<RankedTensorType>(map.getResult(0).getType()).getDimSize(0);
  SmallVector<Type> types(map.getResultTypes());
  for (Value value : kept) {
    SmallVector<int64_t> shape{rows};
    Type element = value.getType();
    if (auto vector = dyn_cast<RankedTensorType>(element)) {
      llvm::append_range(shape, vector.getShape());
      element = vector.getElementType();
    }
    types.push_back(RankedTensorType::get(shape, element));
  }
  auto run = MapOp::create(b, types, a.primals(map.getInputs()));
  run->setDiscardableAttrs(map->getDiscardableAttrDictionary());
  {
    OpBuilder::InsertionGuard guard(b);
    Block *clone = b.createBlock(&run.getBody(), {}, body.getArgumentTypes(),
                                 llvm::map_to_vector(body.getArguments(),
                                                     [](BlockArgument arg) {
                                                       return arg.getLoc();
                                                     }));
    YieldOp::create(b, a.cloneBlock(b, body, clone->getArguments(), kept));
  }
  for (auto [original, result] : llvm::zip(map.getResults(), run.getResults()))
    a.mapPrimal(original, result);
  SmallVector<Residual> residuals;
  for (auto [value, rows] :
       llvm::zip(kept, run.getResults().drop_front(map.getNumResults())))
    residuals.push_back({value, rows});
  a.keepResiduals(map, std::move(residuals));
}

/// The reverse rule of soac.map, and how a map re-executes (keeping
/// residuals).
struct MapRule : ReverseModeOpInterface::ExternalModel<MapRule, MapOp> {
  LogicalResult reverse(Operation *op, AdjointBuilder &a) const;
  void reexecute(Operation *op, AdjointBuilder &a) const {
    reexecuteOf(cast<MapOp>(op), a);
  }
};

} // namespace

LogicalResult reverseOf(MapOp map, AdjointBuilder &a) {
  FailureOr<bool> mixed = usesMixedMode(map, a);
  if (failed(mixed))
    return failure();
  if (*mixed)
    return reverseInMixedMode(map, a);
  ImplicitLocOpBuilder &b = a.builder();
  Block &body = map.getBody().front();
  size_t numInputs = map.getInputs().size();
  // The adjoint map reads every input (to re-execute the body) and the
  // adjoints of the results that have one.
  SmallVector<Value> inputs = a.primals(map.getInputs());
  SmallVector<unsigned> seeded;
  for (auto [i, result] : llvm::enumerate(map.getResults()))
    if (Value bar = a.adjoint(result)) {
      inputs.push_back(bar);
      seeded.push_back(i);
    }
  // And the values of the body that the forward run yielded or kept: read,
  // not computed again (what the sweep does not read is dropped later).
  // Unless the adjoint map yields the results itself, and the forward run
  // is then dropped.
  bool yieldsResults = a.resultsFromAdjoint(map);
  SmallVector<Residual> residuals(a.residuals(map));
  for (auto [result, yielded] :
       llvm::zip(map.getResults(), body.getTerminator()->getOperands()))
    if (Operation *def = yielded.getDefiningOp();
        def && def->getBlock() == &body && !yieldsResults)
      residuals.push_back({yielded, a.primal(result)});
  for (const Residual &residual : residuals)
    inputs.push_back(residual.rows);

  // What the adjoint map yields per row, besides the active inputs' adjoints.
  SmallVector<unsigned> activeInputs;
  SmallVector<Value> freeValues;
  SmallVector<SparseAdjoint> sparseReads; // one row's; batch: lifted factors
  bool failedSweep = false;
  SmallVector<Value> results = buildMap(
      b, inputs, [&](ImplicitLocOpBuilder &ib, ValueRange rows) {
        AdjointBuilder scope(ib, a.activity(), body, &a, a.symbolTables());
        for (auto [arg, row] :
             llvm::zip(body.getArguments(), rows.take_front(numInputs)))
          scope.mapPrimal(arg, row);
        for (auto [residual, row] : llvm::zip(
                 residuals, rows.drop_front(numInputs + seeded.size())))
          scope.mapPrimal(residual.value, row);
        scope.reexecute(body);
        Operation *yield = body.getTerminator();
        for (auto [k, i] : llvm::enumerate(seeded))
          scope.accumulate(yield->getOperand(i), rows[numInputs + k]);
        SmallVector<Value> yielded;
        if (failed(scope.sweep(body))) {
          failedSweep = true;
          return yielded;
        }
        // Reads stack over the rows when their batches have one shape in
        // every row; the others are added into a dense adjoint per row.
        for (const SparseAdjoint &read :
             mergeScalarReads(ib, scope.sparseAdjoints())) {
          std::optional<SmallVector<BatchFactor>> batch =
              liftBatch(read.batch, map, body);
          if (batch)
            sparseReads.push_back({read.tensor, read.index, read.value,
                                   std::move(*batch)});
          else
            scatterIntoAdjoint(scope, read.tensor, read.index, read.value);
        }
        for (auto [i, arg] : llvm::enumerate(body.getArguments()))
          if (a.isActive(map.getInputs()[i])) {
            activeInputs.push_back(i);
            yielded.push_back(scope.adjointOrZero(arg));
          }
        for (auto [value, adjoint] : scope.outerAdjoints()) {
          freeValues.push_back(value);
          yielded.push_back(adjoint);
        }
        for (const SparseAdjoint &read : sparseReads) {
          yielded.push_back(read.index);
          yielded.push_back(read.value);
        }
        if (yieldsResults)
          for (Value result : body.getTerminator()->getOperands())
            yielded.push_back(scope.primal(result));
        return yielded;
      });
  if (failedSweep)
    return failure();

  auto next = results.begin();
  for (unsigned i : activeInputs)
    a.accumulate(map.getInputs()[i], *next++);
  for (Value value : freeValues)
    accumulateRowSum(a, value, *next++);
  // The rows' reads stacked: a batch with the map's rows as a new outer
  // dimension.
  BatchFactor rowsOfMap{{Extent::ofDim(map.getInputs()[0], 0)}};
  for (SparseAdjoint &read : sparseReads) {
    Value indices = *next++;
    Value values = *next++;
    read.batch.insert(read.batch.begin(), rowsOfMap);
    a.accumulateSparse(read.tensor, indices, values, std::move(read.batch));
  }
  if (yieldsResults)
    for (Value result : map.getResults())
      a.recomputedByAdjoint(a.primal(result), *next++);
  return success();
}

LogicalResult MapRule::reverse(Operation *op, AdjointBuilder &a) const {
  return reverseOf(cast<MapOp>(op), a);
}

void attachMapRule(MLIRContext *context) {
  MapOp::attachInterface<MapRule>(*context);
}

} // namespace soac::autodiff
