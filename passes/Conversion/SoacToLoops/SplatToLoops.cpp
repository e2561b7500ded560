//===- SplatToLoops.cpp - tensor.splat in loops as fills ------------------===//
//
// A splat that runs per iteration of a loop or per row of a SOAC becomes one
// fill chosen like a SOAC's loops; splats that run once are left to
// bufferization.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToLoops/Patterns.h"

#include "passes/Utils/Bodies.h"
#include "passes/Conversion/SoacToLoops/LoweringOrder.h"
#include "passes/Conversion/SoacToLoops/Loops.h"
#include "passes/Conversion/SoacToLoops/Parallelism.h"
#include "passes/Conversion/SoacToLoops/RowReader.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;
using namespace soac;
using namespace soac::loops;

namespace {

/// A tensor.splat in a loop becomes a fill chosen like a SOAC's loops:
/// sequential per row of an enclosing SOAC, else a parallel linalg.fill only
/// when the work and the thread count make it pay (bufferization would make
/// it a parallel region per iteration of the loops around it).
struct SplatToLoops : OpRewritePattern<tensor::SplatOp> {
  SplatToLoops(MLIRContext *context, const ConvertSoacToLoopsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(tensor::SplatOp splat,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(splat.getLoc(), rewriter);
    RankedTensorType type = splat.getType();
    if (type.getRank() == 0)
      return rewriter.notifyMatchFailure(splat, "no rows");
    // A splat that runs once is left to bufferization (one parallel fill):
    // lowering all of them here doubled the bufferization time of HAND's
    // gradient (19 splats) for nothing.
    if (!isNestedInParallelOp(splat) &&
        !splat->getParentOfType<LoopLikeOpInterface>())
      return rewriter.notifyMatchFailure(splat, "runs once");
    SmallVector<OpFoldResult> sizes = getMixedValues(
        type.getShape(), splat.getDynamicSizes(), b.getContext());
    Value n = getValueOrCreateConstantIndexOp(b, b.getLoc(), sizes.front());
    // Both forms fill one tensor, allocated once (before the loops around
    // the splat, where their sizes allow).
    Value empty = tensor::EmptyOp::create(b, sizes, type.getElementType());
    Value result;
    if (isNestedInParallelOp(splat)) {
      result = sequentialFill(b, splat, empty, sizes, n);
    } else {
      Value work = n;
      for (OpFoldResult size : ArrayRef(sizes).drop_front())
        work = arith::MulIOp::create(
            b, work, getValueOrCreateConstantIndexOp(b, b.getLoc(), size));
      result =
          chooseByWork(b, options, work, TypeRange{type},
                       [&](bool parallel) -> SmallVector<Value> {
                         if (!parallel)
                           return {sequentialFill(b, splat, empty, sizes, n)};
                         return {linalg::FillOp::create(
                                     b, ValueRange{splat.getInput()},
                                     ValueRange{empty})
                                     .getResult(0)};
                       })
              .front();
    }
    rewriter.replaceOp(splat, result);
    return success();
  }

private:
  /// `dest` filled with the splat's value row by row in an scf.for (rows of
  /// rank > 1 are splats again, lowered by this pattern as nested).
  static Value sequentialFill(ImplicitLocOpBuilder &b, tensor::SplatOp splat,
                              Value dest, ArrayRef<OpFoldResult> sizes,
                              Value n) {
    RankedTensorType type = splat.getType();
    if (type.getRank() == 1)
      return tabulateInto(b, n, ValueRange{dest}, /*seeded=*/{false},
                          /*parallel=*/false,
                          [&](ImplicitLocOpBuilder &, Value, ArrayRef<Value>) {
                            return SmallVector<Value>{splat.getInput()};
                          })
          .front();
    auto rowType = RankedTensorType::get(type.getShape().drop_front(),
                                         type.getElementType());
    SmallVector<Value> rowDynamic;
    for (auto [d, size] : llvm::enumerate(sizes.drop_front()))
      if (rowType.isDynamicDim(d))
        rowDynamic.push_back(
            getValueOrCreateConstantIndexOp(b, b.getLoc(), size));
    auto loop = markRowLoop(scf::ForOp::create(
        b, indexConstant(b, 0), n, indexConstant(b, 1), ValueRange{dest},
        [&](OpBuilder &nested, Location loc, Value i, ValueRange outs) {
          ImplicitLocOpBuilder ib(loc, nested);
          Value row = tensor::SplatOp::create(ib, rowType, splat.getInput(),
                                              rowDynamic);
          scf::YieldOp::create(ib, insertRow(ib, row, outs.front(), i));
        }));
    return loop.getResult(0);
  }

  ConvertSoacToLoopsOptions options;
};

} // namespace

void soac::loops::addSplatToLoops(RewritePatternSet &patterns,
                                  const ConvertSoacToLoopsOptions &options) {
  patterns.add<SplatToLoops>(patterns.getContext(), options);
}
