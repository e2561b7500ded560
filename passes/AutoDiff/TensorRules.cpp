//===- TensorRules.cpp - reverse-mode rules of tensor ops -----------------===//
#include "passes/AutoDiff/Builders.h"
#include "passes/AutoDiff/RuleModel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::autodiff {
namespace {
SmallVector<Value> primals(AdjointBuilder &a, ValueRange values) {
  return llvm::map_to_vector(values, [&](Value v) { return a.primal(v); });
}
} // namespace

/// A read: its adjoint is added at the same place (sparsely when the tensor
/// is free in a SOAC body: see AdjointBuilder::accumulateAt).
LogicalResult reverseOf(tensor::ExtractOp op, AdjointBuilder &a) {
  a.accumulateAt(op.getTensor(), primals(a, op.getIndices()),
                 a.adjoint(op.getResult()));
  return success();
}

/// r = insert v into t[i]: v̄ += r̄[i], t̄ += r̄ with r̄[i] = 0.
LogicalResult reverseOf(tensor::InsertOp op, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Value bar = a.adjoint(op.getResult());
  SmallVector<Value> indices = primals(a, op.getIndices());
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

LogicalResult reverseOf(tensor::CastOp op, AdjointBuilder &a) {
  a.accumulate(op.getSource(),
               tensor::CastOp::create(a.builder(), op.getSource().getType(),
                                      a.adjoint(op.getResult())));
  return success();
}

void registerTensorRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    attachRules<tensor::ExtractOp, tensor::InsertOp, tensor::SplatOp,
                tensor::FromElementsOp, tensor::CastOp>(context);
  });
}

} // namespace soac::autodiff
