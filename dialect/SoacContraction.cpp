//===- SoacContraction.cpp - soac.matmul ----------------------------------===//
//
// The result type of a product and the verifier's rules (each has a case in
// test/Dialect/Soac/invalid-matmul.mlir).
//
//===----------------------------------------------------------------------===//

#include "dialect/SoacOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac {

namespace {
/// (rows, columns) of `op(x)`.
std::pair<int64_t, int64_t> transposedSizes(RankedTensorType x, bool transpose) {
  int64_t rows = x.getDimSize(0), columns = x.getDimSize(1);
  return transpose ? std::make_pair(columns, rows)
                   : std::make_pair(rows, columns);
}
} // namespace

MatmulOp::Sizes MatmulOp::buildSizes(OpBuilder &b) {
  bool tl = getTransposeLhs(), tr = getTransposeRhs();
  auto dim = [&](Value tensor, int64_t d) -> Value {
    return tensor::DimOp::create(b, getLoc(), tensor, d);
  };
  return {dim(getLhs(), tl ? 1 : 0), dim(getLhs(), tl ? 0 : 1),
          dim(getRhs(), tr ? 1 : 0), dim(getRhs(), tr ? 0 : 1)};
}

RankedTensorType MatmulOp::inferResultType(Type lhs, Type rhs,
                                           bool transposeLhs,
                                           bool transposeRhs) {
  auto l = cast<RankedTensorType>(lhs), r = cast<RankedTensorType>(rhs);
  int64_t m = transposedSizes(l, transposeLhs).first;
  int64_t n = transposedSizes(r, transposeRhs).second;
  return RankedTensorType::get({m, n}, l.getElementType());
}

void MatmulOp::build(OpBuilder &builder, OperationState &state, Value lhs,
                     Value rhs, bool transposeLhs, bool transposeRhs) {
  build(builder, state,
        inferResultType(lhs.getType(), rhs.getType(), transposeLhs,
                        transposeRhs),
        lhs, rhs, transposeLhs, transposeRhs);
}

LogicalResult MatmulOp::verify() {
  auto lhs = getLhs().getType(), rhs = getRhs().getType();
  if (lhs.getRank() != 2 || rhs.getRank() != 2)
    return emitOpError() << "multiplies matrices: operands of rank 2 "
                            "expected, got "
                         << lhs << " and " << rhs;
  Type element = lhs.getElementType();
  if (!element.isIntOrFloat())
    return emitOpError() << "needs integer or float elements, got " << element;
  if (rhs.getElementType() != element ||
      getResult().getType().getElementType() != element)
    return emitOpError() << "needs one element type for operands and "
                            "result, got "
                         << lhs << ", " << rhs << " -> "
                         << getResult().getType();
  int64_t kLhs = transposedSizes(lhs, getTransposeLhs()).second;
  int64_t kRhs = transposedSizes(rhs, getTransposeRhs()).first;
  if (!ShapedType::isDynamic(kLhs) && !ShapedType::isDynamic(kRhs) &&
      kLhs != kRhs)
    return emitOpError() << "contracts " << kLhs << " columns of the "
                         << "left operand with " << kRhs
                         << " rows of the right one";
  RankedTensorType expected = inferResultType(
      lhs, rhs, getTransposeLhs(), getTransposeRhs());
  if (getResult().getType() != expected)
    return emitOpError() << "result type " << getResult().getType()
                         << " differs from " << expected
                         << ", the type of the product of its operands";
  return success();
}

} // namespace soac
