//===- MatmulToLinalg.cpp - soac.matmul as linalg.matmul ------------------===//
//
// A product stays a contraction: a zero-filled tensor.empty and a
// linalg.matmul reading the operands through its indexing maps (a
// transposed operand is a permuted map, never a copy). After
// bufferization, soac-contractions-to-calls hands the f32/f64 products to
// the runtime's tuned kernel; other element types become loops.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToLoops/Patterns.h"

#include "passes/Conversion/SoacToLoops/LoweringOrder.h"
#include "passes/Conversion/SoacToLoops/Loops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace soac;
using namespace soac::loops;

namespace {

/// (m, n, k) maps of op(lhs), op(rhs) and the result.
ArrayAttr indexingMaps(Builder &b, bool transposeLhs, bool transposeRhs) {
  AffineExpr m, n, k;
  bindDims(b.getContext(), m, n, k);
  auto map = [&](AffineExpr row, AffineExpr column) {
    return AffineMap::get(3, 0, {row, column}, b.getContext());
  };
  return b.getAffineMapArrayAttr({transposeLhs ? map(k, m) : map(m, k),
                                  transposeRhs ? map(n, k) : map(k, n),
                                  map(m, n)});
}

struct MatmulToLinalg : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (failed(readyToLower(op, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value lhs = op.getLhs(), rhs = op.getRhs();
    bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
    auto [m, kLhs, kRhs, n] = op.buildSizes(b);
    // The verifier compared static sizes; a dynamic one is compared here,
    // before anything reads past the shorter operand.
    if (op.getLhs().getType().isDynamicDim(tl ? 0 : 1) ||
        op.getRhs().getType().isDynamicDim(tr ? 1 : 0)) {
      Value same =
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, kLhs, kRhs);
      cf::AssertOp::create(
          b, same,
          checkMessage(op.getLoc(), "'soac.matmul' contracts operands of "
                                    "different inner sizes"));
    }
    auto type = op.getResult().getType();
    SmallVector<Value> dynamicSizes;
    if (type.isDynamicDim(0))
      dynamicSizes.push_back(m);
    if (type.isDynamicDim(1))
      dynamicSizes.push_back(n);
    Value empty = tensor::EmptyOp::create(b, type, dynamicSizes);
    Type element = type.getElementType();
    Value zero = arith::ConstantOp::create(b, element, b.getZeroAttr(element));
    Value zeros = linalg::FillOp::create(b, zero, empty).getResult(0);
    NamedAttribute maps(b.getStringAttr("indexing_maps"),
                        indexingMaps(b, tl, tr));
    auto product = linalg::MatmulOp::create(
        b, TypeRange{type}, ValueRange{lhs, rhs}, ValueRange{zeros},
        ArrayRef<NamedAttribute>{maps});
    rewriter.replaceOp(op, product.getResult(0));
    return success();
  }
};

} // namespace

void soac::loops::addMatmulToLinalg(RewritePatternSet &patterns) {
  patterns.add<MatmulToLinalg>(patterns.getContext());
}
