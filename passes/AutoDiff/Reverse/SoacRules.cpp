//===- SoacRules.cpp - reverse-mode rules of the SOACs --------------------===//
//
// map:    x̄s += map (λ x ȳ. vjp body x ȳ) xs ȳs, the body re-executed inside,
//         except what the map's forward run yields or keeps for it (math
//         functions, nested SOACs that do more than arithmetic);
//         free scalars: per-row contributions summed by reduce (+);
//         free tensors read by tensor.extract: (index, value) per read,
//         scattered by reduce_by_index (+); free tensors used whole: per-row
//         tensors summed by a reduce over rows.
// reduce: per component of the operator: + replicates ȳ; * uses the product
//         of the non-zero elements and the count of zeros (exact at zeros);
//         min/max send ȳ to the first arg-extremum; any other associative
//         operator: exclusive scans from both sides, then the pull-back of
//         l ⊙ x ⊙ r per element.
// scan:   + : x̄ is the reversed suffix sum of ȳ.
// scatter: v̄s gathers ȳ at the indices (0 out of range); dest̄ is ȳ with the
//         written rows zeroed.
// reduce_by_index (+): dest̄ += ȳ, v̄ᵢ += ȳ[isᵢ] (0 out of range).
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Engine/MixedMode.h"
#include "passes/AutoDiff/Interfaces/RuleModel.h"
#include "passes/Rows.h"

#include "dialect/SoacOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

SmallVector<Value> primals(AdjointBuilder &a, ValueRange values) {
  return llvm::map_to_vector(values, [&](Value v) { return a.primal(v); });
}

/// Adds to `original`'s adjoint the sum over rows of `perRow`.
void accumulateRowSum(AdjointBuilder &a, Value original, Value perRow) {
  ImplicitLocOpBuilder &b = a.builder();
  Value zero = a.zerosLike(a.primal(original));
  Value total = buildReduce(b, perRow, zero,
                            [](ImplicitLocOpBuilder &ib, ValueRange args)
                                -> SmallVector<Value> {
                              return {buildAdd(ib, args[0], args[1])};
                            })[0];
  a.accumulate(original, total);
}

/// Adds `values` at `indices` to the adjoint of tensor `original`:
/// reduce_by_index (+) of elements or rows (one index tensor), or of elements
/// of the flattened tensor (one index tensor per dimension).
void accumulateScatter(AdjointBuilder &a, Value original,
                       ArrayRef<Value> indices, Value values) {
  ImplicitLocOpBuilder &b = a.builder();
  Value zeros = a.zerosLike(a.primal(original));
  auto type = cast<RankedTensorType>(zeros.getType());
  if (indices.size() == 1) { // elements of a vector, or rows
    a.accumulate(original, buildScatterAdd(b, zeros, indices[0], values));
    return;
  }
  // Row-major linear index of each read.
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    sizes.push_back(tensor::DimOp::create(b, zeros, d));
  Value linear =
      buildMap(b, indices, [&](ImplicitLocOpBuilder &ib, ValueRange at) {
        Value offset = at[0];
        for (int64_t d = 1; d < type.getRank(); ++d)
          offset = arith::AddIOp::create(
              ib, arith::MulIOp::create(ib, offset, sizes[d]), at[d]);
        return SmallVector<Value>{offset};
      })[0];
  SmallVector<ReassociationIndices> all{
      llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()))};
  Value flat = tensor::CollapseShapeOp::create(b, zeros, all);
  Value scattered = buildScatterAdd(b, flat, linear, values);
  SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, b.getLoc(), zeros);
  a.accumulate(original, tensor::ExpandShapeOp::create(b, type, scattered,
                                                        all, shape));
}

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
  if (llvm::any_of(map.getResults(), [&](Value r) { return a.isActive(r); }))
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
  auto run = MapOp::create(b, types, primals(a, map.getInputs()));
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
  SmallVector<Value> inputs = primals(a, map.getInputs());
  SmallVector<unsigned> seeded;
  for (auto [i, result] : llvm::enumerate(map.getResults()))
    if (Value bar = a.adjoint(result)) {
      inputs.push_back(bar);
      seeded.push_back(i);
    }
  // And the values of the body that the forward run yielded or kept: read,
  // not computed again (what the sweep does not read is dropped later).
  SmallVector<Residual> residuals(a.residuals(map));
  for (auto [result, yielded] :
       llvm::zip(map.getResults(), body.getTerminator()->getOperands()))
    if (Operation *def = yielded.getDefiningOp();
        def && def->getBlock() == &body)
      residuals.push_back({yielded, a.primal(result)});
  for (const Residual &residual : residuals)
    inputs.push_back(residual.rows);

  // What the adjoint map yields per row, besides the active inputs' adjoints.
  SmallVector<unsigned> activeInputs;
  SmallVector<Value> freeValues;
  SmallVector<std::pair<Value, unsigned>> sparseReads; // tensor, #indices
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
        for (auto [i, arg] : llvm::enumerate(body.getArguments()))
          if (a.isActive(map.getInputs()[i])) {
            activeInputs.push_back(i);
            yielded.push_back(scope.adjointOrZero(arg));
          }
        for (auto [value, adjoint] : scope.outerAdjoints()) {
          freeValues.push_back(value);
          yielded.push_back(adjoint);
        }
        for (const SparseAdjoint &read : scope.sparseAdjoints()) {
          sparseReads.push_back({read.tensor, read.indices.size()});
          llvm::append_range(yielded, read.indices);
          yielded.push_back(read.value);
        }
        return yielded;
      });
  if (failedSweep)
    return failure();

  auto next = results.begin();
  for (unsigned i : activeInputs)
    a.accumulate(map.getInputs()[i], *next++);
  for (Value value : freeValues)
    accumulateRowSum(a, value, *next++);
  for (auto [tensor, numIndices] : sparseReads) {
    SmallVector<Value> indices(next, next + numIndices);
    next += numIndices;
    accumulateScatter(a, tensor, indices, *next++);
  }
  return success();
}

namespace {

enum class Combine { Add, Mul, Max, Min, Other };

/// A soac.map adding its two inputs elementwise (rows added by nested maps).
Combine scalarKind(Operation *op) {
  if (isa<arith::AddFOp>(op))
    return Combine::Add;
  if (isa<arith::MulFOp>(op))
    return Combine::Mul;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
    return Combine::Max;
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(op))
    return Combine::Min;
  return Combine::Other;
}

/// How `op`, applied to (x, y), combines them: a scalar op, or a soac.map
/// over the rows of x and y applying one (elementwise, at any depth).
Combine combineKind(Operation *op, Value x, Value y) {
  if (!op || op->getNumOperands() != 2)
    return Combine::Other;
  bool pair = (op->getOperand(0) == x && op->getOperand(1) == y) ||
              (op->getOperand(0) == y && op->getOperand(1) == x);
  if (!pair)
    return Combine::Other;
  auto map = dyn_cast<MapOp>(op);
  if (!map)
    return scalarKind(op);
  if (map.getNumResults() != 1)
    return Combine::Other;
  Block &body = map.getBody().front();
  // The map's own inputs are (x, y) in some order; its body combines the rows.
  bool swapped = map.getInputs()[0] == y;
  Value rowX = body.getArgument(swapped ? 1 : 0);
  Value rowY = body.getArgument(swapped ? 0 : 1);
  return combineKind(body.getTerminator()->getOperand(0).getDefiningOp(), rowX,
                     rowY);
}

/// How component `j` of an operator region (2k arguments, k yields)
/// combines: yield #j must be one recognized op applied to exactly
/// (accumulator j, value j).
Combine componentKind(Region &region, unsigned j) {
  Block &block = region.front();
  unsigned k = block.getNumArguments() / 2;
  Value result = block.getTerminator()->getOperand(j);
  Operation *def = result.getDefiningOp();
  if (!def || def->getBlock() != &block)
    return Combine::Other;
  return combineKind(def, block.getArgument(j), block.getArgument(k + j));
}

/// ȳ · ∂y/∂x for y = init · Π x, exact when some x are zero: with p the
/// product of the non-zero elements and z the number of zeros,
/// ∂y/∂x_i = init · p / x_i if z = 0, init · p if z = 1 and x_i = 0, else 0.
void reverseProduct(AdjointBuilder &a, Value x, Value init, Value bar) {
  ImplicitLocOpBuilder &b = a.builder();
  Value xs = a.primal(x), start = a.primal(init);
  Type type = bar.getType();
  Value zero = floatConstant(b, type, 0), one = floatConstant(b, type, 1);
  Value noZeros = arith::ConstantIndexOp::create(b, 0);
  Value oneZero = arith::ConstantIndexOp::create(b, 1);
  SmallVector<Value> counted =
      buildMap(b, xs, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        Value isZero = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[0], zero);
        return SmallVector<Value>{
            arith::SelectOp::create(ib, isZero, one, v[0]),
            arith::SelectOp::create(ib, isZero, oneZero, noZeros)};
      });
  SmallVector<Value> pz = buildReduce(
      b, counted, {one, noZeros},
      [](ImplicitLocOpBuilder &ib, ValueRange args) -> SmallVector<Value> {
        return {arith::MulFOp::create(ib, args[0], args[2]),
                arith::AddIOp::create(ib, args[1], args[3])};
      });
  Value scale = arith::MulFOp::create(b, bar, arith::MulFOp::create(b, start, pz[0]));
  Value none = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, pz[1], noZeros);
  Value single = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, pz[1], oneZero);
  Value perElement =
      buildMap(b, xs, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        Value isZero = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[0], zero);
        Value ifZero = arith::SelectOp::create(ib, single, scale, zero);
        Value ifNonZero = arith::SelectOp::create(
            ib, none, arith::DivFOp::create(ib, scale, v[0]), zero);
        return SmallVector<Value>{
            arith::SelectOp::create(ib, isZero, ifZero, ifNonZero)};
      })[0];
  a.accumulate(x, perElement);
  if (a.isActive(init)) {
    Value product = arith::SelectOp::create(b, none, pz[0], zero);
    a.accumulate(init, arith::MulFOp::create(b, bar, product));
  }
}

/// y = max (or min) of init and x: ȳ goes to the first i with x_i = y, or to
/// init when no element reaches y.
void reverseExtremum(AdjointBuilder &a, Value x, Value init, Value result,
                     Value bar) {
  ImplicitLocOpBuilder &b = a.builder();
  Value xs = a.primal(x), y = a.primal(result);
  Value n = outerSize(b, xs);
  auto indexTensor = RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, n);
  SmallVector<Value> positions =
      buildMap(b, {xs, iota}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        Value hit = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[0], y);
        return SmallVector<Value>{arith::SelectOp::create(ib, hit, v[1], n)};
      });
  Value first = buildReduce(b, positions[0], n,
                            [](ImplicitLocOpBuilder &ib, ValueRange args)
                                -> SmallVector<Value> {
                              return {arith::MinUIOp::create(ib, args[0], args[1])};
                            })[0];
  Value zero = floatConstant(b, bar.getType(), 0);
  Value perElement =
      buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
        Value chosen = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, i[0], first);
        return SmallVector<Value>{arith::SelectOp::create(ib, chosen, bar, zero)};
      })[0];
  a.accumulate(x, perElement);
  if (a.isActive(init)) {
    Value none = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, first, n);
    a.accumulate(init, arith::SelectOp::create(b, none, bar, zero));
  }
}

/// The same per column, for rows that are vectors (an elementwise max or
/// min of rows): ȳ[c] goes to the first row whose element c is the extremum.
void reverseColumnExtremum(AdjointBuilder &a, Value x, Value init,
                           Value result, Value bar) {
  ImplicitLocOpBuilder &b = a.builder();
  Value xs = a.primal(x), y = a.primal(result);
  Value n = outerSize(b, xs);
  auto indexTensor =
      RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, n);
  // Per element: its row where it equals the extremum of its column, else n.
  Value positions =
      buildMap(b, {xs, iota}, [&](ImplicitLocOpBuilder &ib, ValueRange row) {
        return buildMap(ib, {row[0], y},
                        [&](ImplicitLocOpBuilder &eb, ValueRange v) {
                          Value hit = arith::CmpFOp::create(
                              eb, arith::CmpFPredicate::OEQ, v[0], v[1]);
                          return SmallVector<Value>{
                              arith::SelectOp::create(eb, hit, row[1], n)};
                        });
      })[0];
  Value none = buildMap(b, y, [&](ImplicitLocOpBuilder &, ValueRange) {
                 return SmallVector<Value>{n};
               })[0];
  Value first = buildReduce(
      b, positions, none,
      [](ImplicitLocOpBuilder &ib, ValueRange args) -> SmallVector<Value> {
        return buildMap(ib, {args[0], args[1]},
                        [](ImplicitLocOpBuilder &eb, ValueRange v) {
                          return SmallVector<Value>{
                              arith::MinUIOp::create(eb, v[0], v[1])};
                        });
      })[0];
  Value zero = floatConstant(b, getElementTypeOrSelf(bar.getType()), 0);
  Value perElement =
      buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
        return buildMap(ib, {first, bar},
                        [&](ImplicitLocOpBuilder &eb, ValueRange v) {
                          Value chosen = arith::CmpIOp::create(
                              eb, arith::CmpIPredicate::eq, i[0], v[0]);
                          return SmallVector<Value>{
                              arith::SelectOp::create(eb, chosen, v[1], zero)};
                        });
      })[0];
  a.accumulate(x, perElement);
  if (a.isActive(init)) {
    Value toInit =
        buildMap(b, {first, bar}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
          Value untouched = arith::CmpIOp::create(
              ib, arith::CmpIPredicate::eq, v[0], n);
          return SmallVector<Value>{
              arith::SelectOp::create(ib, untouched, v[1], zero)};
        })[0];
    a.accumulate(init, toInit);
  }
}

} // namespace

namespace {

/// A copy of operator region `source` into `target`, with its two argument
/// groups swapped when `flipped` (b ⊙' a = a ⊙ b).
void cloneOperator(ImplicitLocOpBuilder &b, Region &source, Region &target,
                   bool flipped) {
  Block &block = source.front();
  unsigned k = block.getNumArguments() / 2;
  SmallVector<Type> types(block.getArgumentTypes());
  OpBuilder::InsertionGuard guard(b);
  Block *copy = b.createBlock(&target, {}, types,
                              SmallVector<Location>(types.size(), b.getLoc()));
  IRMapping mapping;
  for (unsigned i = 0; i < 2 * k; ++i)
    mapping.map(block.getArgument(i),
                copy->getArgument(flipped ? (i + k) % (2 * k) : i));
  for (Operation &op : block)
    b.clone(op, mapping);
}

/// Any associative operator ⊙: with l the exclusive prefix and r the
/// exclusive suffix of each element, y = l ⊙ x ⊙ r, so x̄ is the pull-back
/// of ȳ through a ↦ (l ⊙ a) ⊙ r, computed per element in a map.
LogicalResult reverseGeneralReduce(ReduceOp reduce, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Block &op = reduce.getBody().front();
  unsigned k = reduce.getInits().size();
  if (!a.activeFreeValues(reduce).empty() ||
      llvm::any_of(reduce.getInits().getTypes(), llvm::IsaPred<RankedTensorType>))
    return reduce.emitOpError()
           << "has a general operator on tensor rows or reading differentiated "
              "values from outside: its reverse-mode rule is not implemented yet";
  SmallVector<Value> xs = primals(a, reduce.getInputs());
  SmallVector<Value> inits = primals(a, reduce.getInits());
  SmallVector<Value> seeds;
  for (auto [result, init] : llvm::zip(reduce.getResults(), inits))
    seeds.push_back(a.adjoint(result) ? a.adjoint(result) : a.zerosLike(init));
  Value n = outerSize(b, xs.front());
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value last = arith::SubIOp::create(b, n, one);
  auto indexTensor = RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, n);
  // Inclusive prefixes, and inclusive suffixes (a flipped scan of the
  // reversed input: sufRev[j] = x[n-1-j] ⊙ ... ⊙ x[n-1]).
  auto prefix = ScanOp::create(b, ValueRange(xs).getTypes(), xs, inits);
  cloneOperator(b, reduce.getBody(), prefix.getBody(), /*flipped=*/false);
  SmallVector<Value> reversed = buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
    Value mirror = arith::SubIOp::create(ib, last, i[0]);
    return llvm::map_to_vector(xs, [&](Value x) { return extractRow(ib, x, mirror); });
  });
  auto suffix = ScanOp::create(b, ValueRange(xs).getTypes(), reversed, inits);
  cloneOperator(b, reduce.getBody(), suffix.getBody(), /*flipped=*/true);

  bool failedSweep = false;
  SmallVector<Value> mapInputs{iota};
  llvm::append_range(mapInputs, xs);
  SmallVector<Value> adjoints = buildMap(
      b, mapInputs, [&](ImplicitLocOpBuilder &ib, ValueRange row) {
        Value i = row[0];
        Value zero = arith::ConstantIndexOp::create(ib, 0);
        Value first = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, i, zero);
        Value lastRow = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, i, last);
        // clamped positions, then the neutral element at the ends
        Value before = arith::SelectOp::create(ib, first, zero,
                                               arith::SubIOp::create(ib, i, one));
        Value after = arith::SelectOp::create(
            ib, lastRow, zero,
            arith::SubIOp::create(ib, arith::SubIOp::create(ib, last, i), one));
        SmallVector<Value> left, right;
        for (unsigned j = 0; j < k; ++j) {
          left.push_back(arith::SelectOp::create(
              ib, first, inits[j], extractRow(ib, prefix.getResult(j), before)));
          right.push_back(arith::SelectOp::create(
              ib, lastRow, inits[j], extractRow(ib, suffix.getResult(j), after)));
        }
        SmallVector<Value> values(row.drop_front());
        // t = l ⊙ x, z = t ⊙ r
        SmallVector<Value> lx(left);
        llvm::append_range(lx, values);
        SmallVector<Value> tr = a.cloneBlock(ib, op, lx);
        llvm::append_range(tr, right);
        FailureOr<SmallVector<Value>> throughRight = a.pullBack(ib, op, tr, seeds);
        if (failed(throughRight)) {
          failedSweep = true;
          return SmallVector<Value>(values);
        }
        SmallVector<Value> tBar(ArrayRef<Value>(*throughRight).take_front(k));
        FailureOr<SmallVector<Value>> throughLeft = a.pullBack(ib, op, lx, tBar);
        if (failed(throughLeft)) {
          failedSweep = true;
          return SmallVector<Value>(values);
        }
        return SmallVector<Value>(ArrayRef<Value>(*throughLeft).drop_front(k));
      });
  if (failedSweep)
    return failure();
  for (auto [x, adjoint] : llvm::zip(reduce.getInputs(), adjoints))
    a.accumulate(x, adjoint);
  return success();
}

} // namespace

LogicalResult reverseOf(ReduceOp reduce, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  // Recognized operators, component by component; anything else as a whole.
  for (unsigned j = 0; j < reduce.getInits().size(); ++j) {
    Combine kind = componentKind(reduce.getBody(), j);
    auto rows = dyn_cast<RankedTensorType>(reduce.getInits()[j].getType());
    bool extremumOfVectors =
        (kind == Combine::Max || kind == Combine::Min) && rows &&
        rows.getRank() == 1;
    if (kind == Combine::Other ||
        (rows && kind != Combine::Add && !extremumOfVectors))
      return reverseGeneralReduce(reduce, a);
  }
  for (unsigned j = 0; j < reduce.getInits().size(); ++j) {
    Value bar = a.adjoint(reduce.getResult(j));
    Value x = reduce.getInputs()[j], init = reduce.getInits()[j];
    if (!bar || (!a.isActive(x) && !a.isActive(init)))
      continue;
    Combine kind = componentKind(reduce.getBody(), j);
    if (kind == Combine::Add) {
      // Every element contributed with weight 1.
      Value replicated =
          buildMap(b, a.primal(x), [&](ImplicitLocOpBuilder &, ValueRange) {
            return SmallVector<Value>{bar};
          })[0];
      a.accumulate(x, replicated);
      a.accumulate(init, bar);
    } else if (kind == Combine::Mul) {
      reverseProduct(a, x, init, bar);
    } else if (isa<RankedTensorType>(init.getType())) {
      reverseColumnExtremum(a, x, init, reduce.getResult(j), bar);
    } else {
      reverseExtremum(a, x, init, reduce.getResult(j), bar);
    }
  }
  return success();
}

namespace {

/// Rows of `tensor` gathered at `indices` (index, i32 or i64), zero rows for
/// indices out of range.
Value gatherRows(AdjointBuilder &a, Value tensor, Value indices) {
  ImplicitLocOpBuilder &b = a.builder();
  Value size = outerSize(b, tensor);
  return buildMap(b, indices, [&](ImplicitLocOpBuilder &ib, ValueRange at) {
    Value index = at[0];
    if (!index.getType().isIndex())
      index = arith::IndexCastOp::create(ib, ib.getIndexType(), index);
    Value inRange = arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, index, size);
    Type row = rowType(tensor.getType());
    auto read = scf::IfOp::create(ib, row, inRange, true, true);
    {
      OpBuilder::InsertionGuard guard(ib);
      ib.setInsertionPointToStart(read.thenBlock());
      scf::YieldOp::create(ib, extractRow(ib, tensor, index));
      ib.setInsertionPointToStart(read.elseBlock());
      Value zeros = isa<RankedTensorType>(row)
                        ? a.zerosLike(extractRow(ib, tensor, arith::ConstantIndexOp::create(ib, 0)))
                        : floatConstant(ib, row, 0.0);
      scf::YieldOp::create(ib, zeros);
    }
    return SmallVector<Value>{read.getResult(0)};
  })[0];
}

} // namespace

namespace {

/// The rows of `tensor` in reverse order (a map gathering row n-1-i).
Value reverseRows(ImplicitLocOpBuilder &b, Value tensor, Value iota, Value last) {
  return buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
    Value mirror = arith::SubIOp::create(ib, last, i[0]);
    return SmallVector<Value>{extractRow(ib, tensor, mirror)};
  })[0];
}

/// Any associative operator on k scalars: y_i = y_{i-1} ⊙ x_i. With the
/// Jacobians C_i = ∂y_i/∂y_{i-1} and G_i = ∂y_i/∂x_i (pull-backs of the
/// operator at each row, one per component), the adjoint of y_i is
/// λ_i = ȳ_i + C_{i+1}ᵀ λ_{i+1}: a linear recurrence, solved by a scan of
/// composed affine maps (k·k + k scalars) over the reversed rows; then
/// x̄_i = G_iᵀ λ_i and the init's adjoint is C_0ᵀ λ_0.
LogicalResult reverseGeneralScan(ScanOp scan, AdjointBuilder &a, Value iota,
                                 Value n, Value last) {
  ImplicitLocOpBuilder &b = a.builder();
  Block &op = scan.getBody().front();
  unsigned k = scan.getInits().size();
  if (llvm::any_of(scan.getInits().getTypes(), llvm::IsaPred<RankedTensorType>) ||
      !a.activeFreeValues(scan).empty())
    return scan.emitOpError()
           << "has an operator whose reverse-mode rule is not implemented yet: "
              "supported are + (any rows, per component) and any associative "
              "operator on scalars";
  SmallVector<Value> xs = primals(a, scan.getInputs());
  SmallVector<Value> ys = llvm::map_to_vector(
      scan.getResults(), [&](Value r) { return a.primal(r); });
  SmallVector<Value> inits = primals(a, scan.getInits());
  SmallVector<Value> bars;
  for (auto [result, init] : llvm::zip(scan.getResults(), inits))
    bars.push_back(a.adjoint(result) ? a.adjoint(result)
                                     : buildMap(b, iota, [&](ImplicitLocOpBuilder &,
                                                             ValueRange) {
                                         return SmallVector<Value>{a.zerosLike(init)};
                                       })[0]);
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  auto constant = [&](ImplicitLocOpBuilder &ib, unsigned component, double value) {
    return floatConstant(ib, inits[component].getType(), value);
  };

  // Per row: C (k·k, row-major: C[m·k + l] = ∂y_m/∂y_prev_l), then G (k·k).
  bool failedSweep = false;
  SmallVector<Value> inputs{iota};
  llvm::append_range(inputs, xs);
  SmallVector<Value> jacobians = buildMap(
      b, inputs, [&](ImplicitLocOpBuilder &ib, ValueRange row) {
        Value first = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, row[0], zero);
        Value before = arith::SelectOp::create(ib, first, zero,
                                               arith::SubIOp::create(ib, row[0], one));
        SmallVector<Value> args;
        for (unsigned l = 0; l < k; ++l)
          args.push_back(arith::SelectOp::create(ib, first, inits[l],
                                                 extractRow(ib, ys[l], before)));
        llvm::append_range(args, row.drop_front());
        SmallVector<Value> c(k * k), g(k * k);
        for (unsigned m = 0; m < k; ++m) {
          SmallVector<Value> seeds;
          for (unsigned l = 0; l < k; ++l)
            seeds.push_back(constant(ib, l, l == m ? 1.0 : 0.0));
          FailureOr<SmallVector<Value>> pulled = a.pullBack(ib, op, args, seeds);
          if (failed(pulled)) {
            failedSweep = true;
            return SmallVector<Value>(2 * k * k, args.front());
          }
          for (unsigned l = 0; l < k; ++l) {
            c[m * k + l] = (*pulled)[l];
            g[m * k + l] = (*pulled)[k + l];
          }
        }
        llvm::append_range(c, g);
        return c;
      });
  if (failedSweep)
    return failure();
  ArrayRef<Value> C = ArrayRef<Value>(jacobians).take_front(k * k);
  ArrayRef<Value> G = ArrayRef<Value>(jacobians).drop_front(k * k);

  // u_j = λ_{n-1-j} = A_j u_{j-1} + b_j with A_j = C_{n-j}ᵀ (identity at j = 0)
  // and b_j = ȳ_{n-1-j}, as k·k + k scalars per row.
  SmallVector<Value> affine = buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange j) {
    Value start = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, j[0], zero);
    Value from = arith::SelectOp::create(ib, start, zero, arith::SubIOp::create(ib, n, j[0]));
    Value mirror = arith::SubIOp::create(ib, last, j[0]);
    SmallVector<Value> values;
    for (unsigned m = 0; m < k; ++m)
      for (unsigned l = 0; l < k; ++l) // A[m][l] = C[l][m]
        values.push_back(arith::SelectOp::create(
            ib, start, constant(ib, m, m == l ? 1.0 : 0.0), extractRow(ib, C[l * k + m], from)));
    for (unsigned m = 0; m < k; ++m)
      values.push_back(extractRow(ib, bars[m], mirror));
    return values;
  });
  SmallVector<Value> identity;
  for (unsigned m = 0; m < k; ++m)
    for (unsigned l = 0; l < k; ++l)
      identity.push_back(constant(b, m, m == l ? 1.0 : 0.0));
  for (unsigned m = 0; m < k; ++m)
    identity.push_back(constant(b, m, 0.0));
  SmallVector<Value> composed = buildScan(
      b, affine, identity, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        // (A1, b1) then (A2, b2): u -> A2 (A1 u + b1) + b2
        unsigned size = k * k + k;
        auto A1 = [&](unsigned m, unsigned l) { return v[m * k + l]; };
        auto A2 = [&](unsigned m, unsigned l) { return v[size + m * k + l]; };
        auto B1 = [&](unsigned m) { return v[k * k + m]; };
        auto B2 = [&](unsigned m) { return v[size + k * k + m]; };
        SmallVector<Value> out;
        for (unsigned m = 0; m < k; ++m)
          for (unsigned l = 0; l < k; ++l) {
            Value sum = arith::MulFOp::create(ib, A2(m, 0), A1(0, l));
            for (unsigned p = 1; p < k; ++p)
              sum = arith::AddFOp::create(ib, sum, arith::MulFOp::create(ib, A2(m, p), A1(p, l)));
            out.push_back(sum);
          }
        for (unsigned m = 0; m < k; ++m) {
          Value sum = B2(m);
          for (unsigned p = 0; p < k; ++p)
            sum = arith::AddFOp::create(ib, sum, arith::MulFOp::create(ib, A2(m, p), B1(p)));
          out.push_back(sum);
        }
        return out;
      });
  SmallVector<Value> lambdas = llvm::map_to_vector(
      ArrayRef<Value>(composed).drop_front(k * k),
      [&](Value u) { return reverseRows(b, u, iota, last); });

  // x̄_i,l = Σ_m G_i[m][l] λ_i,m
  SmallVector<Value> perRowInputs(lambdas);
  llvm::append_range(perRowInputs, G);
  SmallVector<Value> xBars = buildMap(b, perRowInputs, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
    SmallVector<Value> out;
    for (unsigned l = 0; l < k; ++l) {
      Value sum = arith::MulFOp::create(ib, v[k + l], v[0]);
      for (unsigned m = 1; m < k; ++m)
        sum = arith::AddFOp::create(ib, sum, arith::MulFOp::create(ib, v[k + m * k + l], v[m]));
      out.push_back(sum);
    }
    return out;
  });
  for (auto [x, xBar] : llvm::zip(scan.getInputs(), xBars))
    a.accumulate(x, xBar);

  // init̄_l = Σ_m C_0[m][l] λ_0,m (nothing for an empty scan)
  if (llvm::any_of(scan.getInits(), [&](Value init) { return a.isActive(init); })) {
    Value nonEmpty = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, zero);
    SmallVector<Type> types(ValueRange(inits).getTypes());
    auto initAdjoint = scf::IfOp::create(b, types, nonEmpty, true, true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(initAdjoint.thenBlock());
    SmallVector<Value> out;
    for (unsigned l = 0; l < k; ++l) {
      Value sum = arith::MulFOp::create(b, extractRow(b, C[l], zero), extractRow(b, lambdas[0], zero));
      for (unsigned m = 1; m < k; ++m)
        sum = arith::AddFOp::create(b, sum, arith::MulFOp::create(b, extractRow(b, C[m * k + l], zero),
                                                                  extractRow(b, lambdas[m], zero)));
      out.push_back(sum);
    }
    scf::YieldOp::create(b, out);
    b.setInsertionPointToStart(initAdjoint.elseBlock());
    scf::YieldOp::create(b, llvm::map_to_vector(inits, [&](Value init) { return a.zerosLike(init); }));
    b.setInsertionPointAfter(initAdjoint);
    for (auto [init, adjoint] : llvm::zip(scan.getInits(), initAdjoint.getResults()))
      a.accumulate(init, adjoint);
  }
  return success();
}

} // namespace

LogicalResult reverseOf(ScanOp scan, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value some = nullptr;
  for (Value result : scan.getResults())
    if (a.adjoint(result))
      some = result;
  Value n = outerSize(b, a.primal(some ? some : scan.getResult(0)));
  Value last = arith::SubIOp::create(b, n, arith::ConstantIndexOp::create(b, 1));
  auto indexTensor = RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, n);
  bool allAdd = true;
  for (unsigned j = 0; j < scan.getInits().size(); ++j)
    allAdd &= componentKind(scan.getBody(), j) == Combine::Add;
  for (unsigned j = 0; j < scan.getInits().size(); ++j) {
    Value bar = a.adjoint(scan.getResult(j));
    Value x = scan.getInputs()[j];
    if (!bar || (!a.isActive(x) && !a.isActive(scan.getInits()[j])))
      continue;
    if (!allAdd)
      return reverseGeneralScan(scan, a, iota, n, last);
    // x̄[i] = Σ_{k >= i} ȳ[k]: a scan of ȳ reversed, reversed back; the
    // init took part in every row.
    Value zero = a.zerosLike(a.primal(scan.getInits()[j]));
    Value sums = buildScan(b, reverseRows(b, bar, iota, last), zero,
                           [](ImplicitLocOpBuilder &ib, ValueRange v) -> SmallVector<Value> {
                             return {buildAdd(ib, v[0], v[1])};
                           })[0];
    a.accumulate(x, reverseRows(b, sums, iota, last));
    accumulateRowSum(a, scan.getInits()[j], bar);
  }
  return success();
}

LogicalResult reverseOf(ScatterOp scatter, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(scatter.getResult());
  Value indices = a.primal(scatter.getIndices());
  if (a.isActive(scatter.getValues()))
    a.accumulate(scatter.getValues(), gatherRows(a, bar, indices));
  if (a.isActive(scatter.getDest())) {
    Value zeros = a.zerosLike(a.primal(scatter.getValues()));
    a.accumulate(scatter.getDest(),
                 ScatterOp::create(b, bar.getType(), bar, indices, zeros));
  }
  return success();
}

namespace {

/// Per value row: its bin (as an index) and whether it is in range.
struct Binned {
  Value bin, inRange;
};

Binned binOf(ImplicitLocOpBuilder &ib, Value index, Value bins) {
  if (!index.getType().isIndex())
    index = arith::IndexCastOp::create(ib, ib.getIndexType(), index);
  Value inRange = arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, index, bins);
  // a safe position to read when out of range (the result is discarded)
  Value zero = arith::ConstantIndexOp::create(ib, 0);
  return {arith::SelectOp::create(ib, inRange, index, zero), inRange};
}

/// h = max (or min) of dest and the values of each bin: h̄ goes to dest when
/// dest reached h (it comes first), else to the first value that did.
void reverseBinExtremum(AdjointBuilder &a, ReduceByIndexOp histogram, unsigned j,
                        Value bar) {
  ImplicitLocOpBuilder &b = a.builder();
  Value indices = a.primal(histogram.getIndices());
  Value dest = a.primal(histogram.getDests()[j]), values = a.primal(histogram.getValues()[j]);
  Value h = a.primal(histogram.getResult(j));
  Value bins = outerSize(b, dest), n = outerSize(b, values);
  Type type = cast<RankedTensorType>(bar.getType()).getElementType();
  Value zero = floatConstant(b, type, 0.0);
  auto indexTensor = RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, n);
  // the position of each winning value, n for the others
  Value winners = buildMap(b, {iota, indices, values}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
    Binned at = binOf(ib, v[1], bins);
    Value best = extractRow(ib, h, at.bin);
    Value reached = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[2], best);
    Value destWon = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ,
                                          extractRow(ib, dest, at.bin), best);
    Value wins = arith::AndIOp::create(
        ib, at.inRange, arith::AndIOp::create(ib, reached, arith::XOrIOp::create(
            ib, destWon, arith::ConstantIntOp::create(ib, ib.getI1Type(), 1))));
    return SmallVector<Value>{arith::SelectOp::create(ib, wins, v[0], n)};
  })[0];
  Value firsts = buildMap(b, dest, [&](ImplicitLocOpBuilder &, ValueRange) {
    return SmallVector<Value>{n};
  })[0];
  Value first = buildHistogram(b, firsts, indices, winners, n,
                               [](ImplicitLocOpBuilder &ib, ValueRange v) -> SmallVector<Value> {
                                 return {arith::MinUIOp::create(ib, v[0], v[1])};
                               })[0];
  if (a.isActive(histogram.getValues()[j]))
    a.accumulate(histogram.getValues()[j],
                 buildMap(b, {iota, indices}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
                   Binned at = binOf(ib, v[1], bins);
                   Value chosen = arith::AndIOp::create(
                       ib, at.inRange,
                       arith::CmpIOp::create(ib, arith::CmpIPredicate::eq,
                                             extractRow(ib, first, at.bin), v[0]));
                   return SmallVector<Value>{
                       arith::SelectOp::create(ib, chosen, extractRow(ib, bar, at.bin), zero)};
                 })[0]);
  if (a.isActive(histogram.getDests()[j]))
    a.accumulate(histogram.getDests()[j],
                 buildMap(b, {dest, h, bar}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
                   Value kept = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[0], v[1]);
                   return SmallVector<Value>{arith::SelectOp::create(ib, kept, v[2], zero)};
                 })[0]);
}

/// h = dest · Π values of the bin, exact with zeros: per bin the product p of
/// the non-zero values and their count of zeros z.
void reverseBinProduct(AdjointBuilder &a, ReduceByIndexOp histogram, unsigned j,
                       Value bar) {
  ImplicitLocOpBuilder &b = a.builder();
  Value indices = a.primal(histogram.getIndices());
  Value dest = a.primal(histogram.getDests()[j]), values = a.primal(histogram.getValues()[j]);
  Value bins = outerSize(b, dest);
  Type type = cast<RankedTensorType>(bar.getType()).getElementType();
  Value zero = floatConstant(b, type, 0.0), one = floatConstant(b, type, 1.0);
  Value noZeros = arith::ConstantIndexOp::create(b, 0), aZero = arith::ConstantIndexOp::create(b, 1);
  SmallVector<Value> counted = buildMap(b, values, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
    Value isZero = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[0], zero);
    return SmallVector<Value>{arith::SelectOp::create(ib, isZero, one, v[0]),
                              arith::SelectOp::create(ib, isZero, aZero, noZeros)};
  });
  SmallVector<Value> start = buildMap(b, dest, [&](ImplicitLocOpBuilder &, ValueRange) {
    return SmallVector<Value>{one, noZeros};
  });
  SmallVector<Value> pz = buildHistogram(
      b, start, indices, counted, {one, noZeros},
      [](ImplicitLocOpBuilder &ib, ValueRange v) -> SmallVector<Value> {
        return {arith::MulFOp::create(ib, v[0], v[2]), arith::AddIOp::create(ib, v[1], v[3])};
      });
  if (a.isActive(histogram.getValues()[j]))
    a.accumulate(histogram.getValues()[j],
                 buildMap(b, {indices, values}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
                   Binned at = binOf(ib, v[0], bins);
                   Value isZero = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, v[1], zero);
                   Value d = extractRow(ib, dest, at.bin);
                   Value destZero = arith::CmpFOp::create(ib, arith::CmpFPredicate::OEQ, d, zero);
                   // zeros among the other factors (dest included)
                   Value others = arith::SubIOp::create(
                       ib, extractRow(ib, pz[1], at.bin),
                       arith::SelectOp::create(ib, isZero, aZero, noZeros));
                   others = arith::AddIOp::create(
                       ib, others, arith::SelectOp::create(ib, destZero, aZero, noZeros));
                   Value p = extractRow(ib, pz[0], at.bin);
                   Value rest = arith::SelectOp::create(ib, isZero, p, arith::DivFOp::create(ib, p, v[1]));
                   Value partial = arith::MulFOp::create(ib, d, rest);
                   Value nonzero = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, others, noZeros);
                   Value keep = arith::AndIOp::create(ib, at.inRange, nonzero);
                   Value scaled = arith::MulFOp::create(ib, extractRow(ib, bar, at.bin), partial);
                   return SmallVector<Value>{arith::SelectOp::create(ib, keep, scaled, zero)};
                 })[0]);
  if (a.isActive(histogram.getDests()[j]))
    a.accumulate(histogram.getDests()[j],
                 buildMap(b, {bar, pz[0], pz[1]}, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
                   Value none = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, v[2], noZeros);
                   Value product = arith::SelectOp::create(ib, none, v[1], zero);
                   return SmallVector<Value>{arith::MulFOp::create(ib, v[0], product)};
                 })[0]);
}

} // namespace

LogicalResult reverseOf(ReduceByIndexOp histogram, AdjointBuilder &a) {
  Value indices = a.primal(histogram.getIndices());
  for (unsigned j = 0; j < histogram.getDests().size(); ++j) {
    Value bar = a.adjoint(histogram.getResult(j));
    if (!bar)
      continue;
    Combine kind = componentKind(histogram.getBody(), j);
    bool scalarRows = cast<RankedTensorType>(bar.getType()).getRank() == 1;
    if (kind == Combine::Add) {
      a.accumulate(histogram.getDests()[j], bar);
      if (a.isActive(histogram.getValues()[j]))
        a.accumulate(histogram.getValues()[j], gatherRows(a, bar, indices));
    } else if (kind == Combine::Mul && scalarRows) {
      reverseBinProduct(a, histogram, j, bar);
    } else if ((kind == Combine::Max || kind == Combine::Min) && scalarRows) {
      reverseBinExtremum(a, histogram, j, bar);
    } else {
      return histogram.emitOpError()
             << "has an operator whose reverse-mode rule is not implemented "
                "(component #"
             << j
             << "): supported are +, and *, min, max on scalars, each "
                "combining its own bin and value";
    }
  }
  return success();
}

LogicalResult MapRule::reverse(Operation *op, AdjointBuilder &a) const {
  return reverseOf(cast<MapOp>(op), a);
}

void registerSoacRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, SoacDialect *) {
    MapOp::attachInterface<MapRule>(*context);
    attachRules<ReduceOp, ScanOp, ScatterOp, ReduceByIndexOp>(context);
  });
}

} // namespace soac::autodiff
