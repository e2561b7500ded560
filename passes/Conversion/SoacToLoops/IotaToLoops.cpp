//===- IotaToLoops.cpp - soac.iota as loops -------------------------------===//
//
// 0 .. n-1 tabulated like a map with scalar rows.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToLoops/Patterns.h"

#include "passes/Utils/Bodies.h"
#include "passes/Conversion/SoacToLoops/LoweringOrder.h"
#include "passes/Conversion/SoacToLoops/Loops.h"
#include "passes/Conversion/SoacToLoops/Parallelism.h"
#include "passes/Conversion/SoacToLoops/RowReader.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace soac;
using namespace soac::loops;

namespace {

struct IotaToLoops : OpRewritePattern<IotaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(IotaOp iota,
                                PatternRewriter &rewriter) const override {
    if (failed(readyToLower(iota, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(iota.getLoc(), rewriter);
    auto type = cast<RankedTensorType>(iota.getType());
    Value n = iota.getSize() ? iota.getSize()
                             : indexConstant(b, type.getDimSize(0));
    Type element = type.getElementType();
    SmallVector<Value> results = tabulate(
        b, n, TypeRange{type}, !isNestedInParallelOp(iota),
        [&](ImplicitLocOpBuilder &ib, Value i) -> SmallVector<Value> {
          if (element.isIndex())
            return {i};
          return {arith::IndexCastOp::create(ib, element, i)};
        });
    rewriter.replaceOp(iota, results);
    return success();
  }
};

} // namespace

void soac::loops::addIotaToLoops(RewritePatternSet &patterns) {
  patterns.add<IotaToLoops>(patterns.getContext());
}
