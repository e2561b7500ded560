//===- TensorRules.cpp - reverse-mode rules of tensor ops -----------------===//
#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Interfaces/RuleModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/FormatVariadic.h"

#include <functional>

using namespace mlir;

namespace soac::autodiff {
namespace {
/// `indices` (primal values) into the leading dimensions of the primal
/// `tensor`, each checked as soac-check-indices checks `opName`'s reads.
SmallVector<Value> checkedIndices(ImplicitLocOpBuilder &b, Location loc,
                                  Value tensor, ArrayRef<Value> indices,
                                  StringRef opName) {
  return llvm::map_to_vector(llvm::enumerate(indices), [&](auto entry) -> Value {
    auto [dim, index] = entry;
    return CheckIndexOp::create(
        b, loc, index, tensor::DimOp::create(b, loc, tensor, dim),
        llvm::formatv("'{0}' dimension {1}", opName, dim).str());
  });
}
} // namespace

/// A read: its adjoint is added at the same place (sparsely when the tensor
/// is free in a SOAC body: see AdjointBuilder::accumulateAt). The indices
/// are checked there as the read checks them (soac-check-indices), so that a
/// gradient fails where its primal does, even when the primal read itself is
/// dead (a sparse accumulation would drop an index out of range silently).
LogicalResult reverseOf(tensor::ExtractOp op, AdjointBuilder &a) {
  SmallVector<Value> indices =
      checkedIndices(a.builder(), op.getLoc(), a.primal(op.getTensor()),
                     a.primals(op.getIndices()), op->getName().getStringRef());
  a.accumulateAt(op.getTensor(), indices, a.adjoint(op.getResult()));
  return success();
}

/// r = insert v into t[i]: v̄ += r̄[i], t̄ += r̄ with r̄[i] = 0.
LogicalResult reverseOf(tensor::InsertOp op, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(op.getResult());
  SmallVector<Value> indices = a.primals(op.getIndices());
  if (a.isActive(op.getScalar()))
    a.accumulate(op.getScalar(), tensor::ExtractOp::create(b, bar, indices));
  if (a.isActive(op.getDest())) {
    Value zero = floatConstant(b, op.getScalar().getType(), 0.0);
    a.accumulate(op.getDest(), tensor::InsertOp::create(b, zero, bar, indices));
  }
  return success();
}

/// Every element is the scalar: its adjoint is the sum of the elements'.
LogicalResult reverseOf(tensor::SplatOp op, AdjointBuilder &a) {
  if (a.isActive(op.getInput()))
    a.accumulate(op.getInput(),
                 buildSumAll(a.builder(), a.adjoint(op.getResult())));
  return success();
}

LogicalResult reverseOf(tensor::FromElementsOp op, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(op.getResult());
  auto type = cast<RankedTensorType>(op.getType());
  SmallVector<int64_t> strides(type.getRank(), 1);
  for (int64_t d = type.getRank() - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * type.getDimSize(d + 1);
  for (auto [position, element] : llvm::enumerate(op.getElements())) {
    if (!a.isActive(element))
      continue;
    SmallVector<Value> indices;
    int64_t rest = position;
    for (int64_t stride : strides) {
      indices.push_back(arith::ConstantIndexOp::create(b, rest / stride));
      rest %= stride;
    }
    a.accumulate(element, tensor::ExtractOp::create(b, bar, indices));
  }
  return success();
}

namespace {
/// The leading offsets of a slice that is the sub-tensor of its source at
/// them: offsets (i, j, ..., 0, ...), sizes (1, ..., 1, the whole trailing
/// dimensions), unit strides, the unit dimensions dropped (a row at one
/// index; at several, a row of the source with its leading dimensions
/// merged). Not a rank-0 slice of one element: its adjoint is a tensor, not
/// the scalar an element's read adds.
std::optional<SmallVector<OpFoldResult>>
leadingOffsetsOfSlice(tensor::ExtractSliceOp slice) {
  auto source = slice.getSourceType();
  int64_t indexed = source.getRank() - slice.getType().getRank();
  if (indexed < 1 || indexed == source.getRank() || !slice.hasUnitStride() ||
      slice.getType().getShape() != source.getShape().drop_front(indexed))
    return std::nullopt;
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  for (int64_t d = 0; d < indexed; ++d)
    if (getConstantIntValue(sizes[d]) != 1)
      return std::nullopt;
  for (int64_t d = indexed; d < source.getRank(); ++d) {
    if (getConstantIntValue(offsets[d]) != 0)
      return std::nullopt;
    bool whole = source.isDynamicDim(d)
                     ? isa<Value>(sizes[d]) &&
                           [&] {
                             auto dim = cast<Value>(sizes[d]).getDefiningOp<tensor::DimOp>();
                             return dim && dim.getSource() == slice.getSource() &&
                                    getConstantIntValue(dim.getIndex()) == d;
                           }()
                     : getConstantIntValue(sizes[d]) == source.getDimSize(d);
    if (!whole)
      return std::nullopt;
  }
  offsets.truncate(indexed);
  return offsets;
}

SmallVector<OpFoldResult> primalMixed(AdjointBuilder &a, ArrayRef<OpFoldResult> values) {
  return llvm::map_to_vector(values, [&](OpFoldResult value) -> OpFoldResult {
    if (auto v = dyn_cast<Value>(value))
      return a.primal(v);
    return value;
  });
}
} // namespace

/// A read of the sub-tensor at leading indices (a row) is an indexed read
/// like an element's (sparse in SOAC bodies, its indices checked); any other
/// slice adds the adjoint into the same slice of the source's adjoint.
LogicalResult reverseOf(tensor::ExtractSliceOp op, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(op.getResult());
  if (!a.isActive(op.getSource()))
    return success();
  if (std::optional<SmallVector<OpFoldResult>> at = leadingOffsetsOfSlice(op)) {
    SmallVector<Value> offsets = llvm::map_to_vector(*at, [&](OpFoldResult offset) {
      return isa<Value>(offset) ? a.primal(cast<Value>(offset))
                                : Value(arith::ConstantIndexOp::create(
                                      b, *getConstantIntValue(offset)));
    });
    a.accumulateAt(op.getSource(),
                   checkedIndices(b, op.getLoc(), a.primal(op.getSource()),
                                  offsets, op->getName().getStringRef()),
                   bar);
    return success();
  }
  SmallVector<OpFoldResult> offsets = primalMixed(a, op.getMixedOffsets());
  SmallVector<OpFoldResult> sizes = primalMixed(a, op.getMixedSizes());
  SmallVector<OpFoldResult> strides = primalMixed(a, op.getMixedStrides());
  Value current = a.adjointOrZero(op.getSource());
  Value old = tensor::ExtractSliceOp::create(b, op.getType(), current, offsets,
                                             sizes, strides);
  Value sum = a.add(old, bar);
  a.replaceAdjoint(op.getSource(), tensor::InsertSliceOp::create(
                                       b, sum, current, offsets, sizes, strides));
  return success();
}

/// r = insert_slice s into d: s̄ += the slice of r̄, d̄ += r̄ with the slice zeroed.
LogicalResult reverseOf(tensor::InsertSliceOp op, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(op.getResult());
  SmallVector<OpFoldResult> offsets = primalMixed(a, op.getMixedOffsets());
  SmallVector<OpFoldResult> sizes = primalMixed(a, op.getMixedSizes());
  SmallVector<OpFoldResult> strides = primalMixed(a, op.getMixedStrides());
  if (a.isActive(op.getSource()))
    a.accumulate(op.getSource(),
                 tensor::ExtractSliceOp::create(b, op.getSourceType(), bar,
                                                offsets, sizes, strides));
  if (a.isActive(op.getDest())) {
    Value zeros = a.zerosLike(a.primal(op.getSource()));
    a.accumulate(op.getDest(), tensor::InsertSliceOp::create(
                                   b, zeros, bar, offsets, sizes, strides));
  }
  return success();
}

/// Each element is the body run on its indices: the return sweep runs the
/// body again for every element (nested loops), seeded with the element's
/// adjoint, carrying the adjoints of the values the body reads from outside.
LogicalResult reverseOf(tensor::GenerateOp op, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(op.getResult());
  Block &body = op.getBody().front();
  SmallVector<Value> free = a.activeFreeValues(op);
  if (free.empty())
    return success();
  SmallVector<Value> adjoints = llvm::map_to_vector(
      free, [&](Value v) { return a.zerosLike(a.primal(v)); });
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  auto type = cast<RankedTensorType>(op.getType());
  bool failedSweep = false;
  // Loops over every dimension, innermost running the body's return sweep.
  std::function<SmallVector<Value>(ImplicitLocOpBuilder &, SmallVector<Value>,
                                   ValueRange)>
      loops = [&](ImplicitLocOpBuilder &lb, SmallVector<Value> indices,
                  ValueRange state) -> SmallVector<Value> {
    if (indices.size() == static_cast<size_t>(type.getRank())) {
      AdjointBuilder scope(lb, a.activity(), body, &a, a.symbolTables(),
                           SparseReads::Never);
      for (auto [arg, index] : llvm::zip(body.getArguments(), indices))
        scope.mapPrimal(arg, index);
      scope.reexecute(body);
      scope.accumulate(body.getTerminator()->getOperand(0),
                       tensor::ExtractOp::create(lb, bar, indices));
      for (auto [value, adjoint] : llvm::zip(free, state))
        scope.seedOuterAdjoint(value, adjoint);
      if (failed(scope.sweep(body)))
        failedSweep = true;
      return llvm::map_to_vector(
          free, [&](Value v) { return scope.outerAdjoints().lookup(v); });
    }
    Value extent = tensor::DimOp::create(lb, bar, indices.size());
    auto loop = scf::ForOp::create(
        lb, zero, extent, one, state,
        [&](OpBuilder &nested, Location loc, Value i, ValueRange carried) {
          ImplicitLocOpBuilder ib(loc, nested);
          SmallVector<Value> inner(indices);
          inner.push_back(i);
          scf::YieldOp::create(ib, loops(ib, inner, carried));
        });
    return llvm::to_vector_of<Value>(loop.getResults());
  };
  SmallVector<Value> totals = loops(b, {}, adjoints);
  if (failedSweep)
    return failure();
  for (auto [value, total] : llvm::zip(free, totals))
    a.accumulate(value, total);
  return success();
}

LogicalResult reverseOf(tensor::CastOp op, AdjointBuilder &a) {
  a.accumulate(op.getSource(),
               tensor::CastOp::create(a.builder(), op.getSource().getType(),
                                      a.adjoint(op.getResult())));
  return success();
}

/// A reshape moves elements without changing them: the source's adjoint is
/// the result's adjoint reshaped back.
LogicalResult reverseOf(tensor::CollapseShapeOp op, AdjointBuilder &a) {
  if (!a.isActive(op.getSrc()))
    return success();
  ImplicitLocOpBuilder &b = a.builder();
  Value source = a.primal(op.getSrc());
  a.accumulate(op.getSrc(),
               tensor::ExpandShapeOp::create(
                   b, op.getSrcType(), a.adjoint(op.getResult()),
                   op.getReassociationIndices(),
                   tensor::getMixedSizes(b, b.getLoc(), source)));
  return success();
}

LogicalResult reverseOf(tensor::ExpandShapeOp op, AdjointBuilder &a) {
  if (!a.isActive(op.getSrc()))
    return success();
  a.accumulate(op.getSrc(), tensor::CollapseShapeOp::create(
                                a.builder(), op.getSrcType(),
                                a.adjoint(op.getResult()),
                                op.getReassociationIndices()));
  return success();
}

void registerTensorRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    attachRules<tensor::ExtractOp, tensor::InsertOp, tensor::SplatOp,
                tensor::FromElementsOp, tensor::CastOp, tensor::ExtractSliceOp,
                tensor::InsertSliceOp, tensor::GenerateOp,
                tensor::CollapseShapeOp, tensor::ExpandShapeOp>(context);
  });
}

} // namespace soac::autodiff
