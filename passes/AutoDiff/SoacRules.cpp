//===- SoacRules.cpp - reverse-mode rules of the SOACs --------------------===//
//
// map:    x̄s += map (λ x ȳ. vjp body x ȳ) xs ȳs, the body re-executed inside;
//         free scalars: per-row contributions summed by reduce (+);
//         free tensors read by tensor.extract: (index, value) per read,
//         scattered by reduce_by_index (+); free tensors used whole: per-row
//         tensors summed by a reduce over rows.
// reduce: per component of the operator: + replicates ȳ; * uses the product
//         of the non-zero elements and the count of zeros (exact at zeros);
//         min/max send ȳ to the first arg-extremum.
// scan:   + : x̄ is the reversed suffix sum of ȳ.
// scatter: v̄s gathers ȳ at the indices (0 out of range); dest̄ is ȳ with the
//         written rows zeroed.
// reduce_by_index (+): dest̄ += ȳ, v̄ᵢ += ȳ[isᵢ] (0 out of range).
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Builders.h"
#include "passes/AutoDiff/RuleModel.h"
#include "passes/Rows.h"

#include "dialect/SoacOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/ReshapeOpsUtils.h"

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

} // namespace

LogicalResult reverseOf(MapOp map, AdjointBuilder &a) {
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

/// How component `j` of an operator region (2k arguments, k yields)
/// combines: yield #j must be one recognized op applied to exactly
/// (accumulator j, value j).
Combine componentKind(Region &region, unsigned j) {
  Block &block = region.front();
  unsigned k = block.getNumArguments() / 2;
  Value result = block.getTerminator()->getOperand(j);
  Operation *def = result.getDefiningOp();
  if (!def || def->getBlock() != &block || def->getNumOperands() != 2)
    return Combine::Other;
  Value acc = block.getArgument(j), value = block.getArgument(k + j);
  bool pair = (def->getOperand(0) == acc && def->getOperand(1) == value) ||
              (def->getOperand(0) == value && def->getOperand(1) == acc);
  if (!pair)
    return Combine::Other;
  if (isa<arith::AddFOp>(def))
    return Combine::Add;
  if (isa<arith::MulFOp>(def))
    return Combine::Mul;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(def))
    return Combine::Max;
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(def))
    return Combine::Min;
  return Combine::Other;
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

} // namespace

LogicalResult reverseOf(ReduceOp reduce, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  for (unsigned j = 0; j < reduce.getInits().size(); ++j) {
    Value bar = a.adjoint(reduce.getResult(j));
    Value x = reduce.getInputs()[j], init = reduce.getInits()[j];
    if (!bar || (!a.isActive(x) && !a.isActive(init)))
      continue;
    Combine kind = componentKind(reduce.getBody(), j);
    bool scalarRows = !isa<RankedTensorType>(bar.getType());
    if (kind == Combine::Add) {
      // Every element contributed with weight 1.
      Value replicated =
          buildMap(b, a.primal(x), [&](ImplicitLocOpBuilder &, ValueRange) {
            return SmallVector<Value>{bar};
          })[0];
      a.accumulate(x, replicated);
      a.accumulate(init, bar);
    } else if (kind == Combine::Mul && scalarRows) {
      reverseProduct(a, x, init, bar);
    } else if ((kind == Combine::Max || kind == Combine::Min) && scalarRows) {
      reverseExtremum(a, x, init, reduce.getResult(j), bar);
    } else {
      return reduce.emitOpError()
             << "has an operator whose reverse-mode rule is not implemented "
                "yet (component #"
             << j
             << "): supported are +, and *, max, min on scalars, each "
                "combining its own accumulator and value";
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

LogicalResult reverseOf(ScanOp scan, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  for (unsigned j = 0; j < scan.getInits().size(); ++j) {
    Value bar = a.adjoint(scan.getResult(j));
    Value x = scan.getInputs()[j];
    if (!bar || !a.isActive(x))
      continue;
    if (componentKind(scan.getBody(), j) != Combine::Add ||
        isa<RankedTensorType>(rowType(bar.getType())))
      return scan.emitOpError()
             << "has an operator whose reverse-mode rule is not implemented "
                "yet (component #"
             << j << "): supported is + on scalars";
    // x̄[i] = Σ_{k >= i} ȳ[k]: a scan of ȳ reversed, reversed back.
    Value n = outerSize(b, bar);
    Value last = arith::SubIOp::create(b, n, arith::ConstantIndexOp::create(b, 1));
    auto indexTensor = RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
    Value iota = IotaOp::create(b, indexTensor, n);
    auto reversed = [&](Value tensor) {
      return buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
        Value mirror = arith::SubIOp::create(ib, last, i[0]);
        return SmallVector<Value>{extractRow(ib, tensor, mirror)};
      })[0];
    };
    Value zero = floatConstant(b, rowType(bar.getType()), 0.0);
    auto sums = ScanOp::create(b, TypeRange{bar.getType()}, ValueRange{reversed(bar)},
                               ValueRange{zero});
    Block *block = b.createBlock(&sums.getBody(), {}, {zero.getType(), zero.getType()},
                                 {b.getLoc(), b.getLoc()});
    YieldOp::create(b, ValueRange{arith::AddFOp::create(b, block->getArgument(0),
                                                        block->getArgument(1))});
    b.setInsertionPointAfter(sums);
    a.accumulate(x, reversed(sums.getResult(0)));
    if (a.isActive(scan.getInits()[j]))
      a.accumulate(scan.getInits()[j], buildSumAll(b, bar));
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

LogicalResult reverseOf(ReduceByIndexOp histogram, AdjointBuilder &a) {
  Value indices = a.primal(histogram.getIndices());
  for (unsigned j = 0; j < histogram.getDests().size(); ++j) {
    Value bar = a.adjoint(histogram.getResult(j));
    if (!bar)
      continue;
    if (componentKind(histogram.getBody(), j) != Combine::Add)
      return histogram.emitOpError()
             << "has an operator whose reverse-mode rule is not implemented "
                "yet (component #"
             << j << "): supported is +";
    a.accumulate(histogram.getDests()[j], bar);
    if (a.isActive(histogram.getValues()[j]))
      a.accumulate(histogram.getValues()[j], gatherRows(a, bar, indices));
  }
  return success();
}

void registerSoacRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, SoacDialect *) {
    attachRules<MapOp, ReduceOp, ScanOp, ScatterOp, ReduceByIndexOp>(context);
  });
}

} // namespace soac::autodiff
