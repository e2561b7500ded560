//===- ReduceToLoops.cpp - soac.reduce as loops ---------------------------===//
//
// A fold over the rows (scf.for), or, at the top level when the work pays,
// num-chunks chunks folded in parallel from the neutral elements whose
// results are then folded in order.
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

struct ReduceToLoops : OpRewritePattern<ReduceOp> {
  ReduceToLoops(MLIRContext *context, const ConvertSoacToLoopsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(ReduceOp reduce,
                                PatternRewriter &rewriter) const override {
    if (failed(readyToLower(reduce, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(reduce.getLoc(), rewriter);
    RowReader rows(reduce.getInputs(), reduce);
    Value n = rows.size(b);
    Region &op = reduce.getBody();
    auto sequential = [&] {
      return foldRange(b, op, rows, indexConstant(b, 0), n, reduce.getInits());
    };
    auto chunked = [&] {
      // Chunks folded in parallel from the neutral elements, then the chunk
      // results folded in order (associativity makes this equal). Every
      // chunk starts from a copy of tensor neutral elements: then there is
      // at most one chunk per thread.
      bool scalar = allScalar(reduce.getInits().getTypes());
      Value chunks = indexConstant(b, options.numChunks);
      if (!scalar)
        chunks = arith::MinUIOp::create(b, chunks, maxThreads(b));
      Value chunkSize = arith::CeilDivUIOp::create(b, n, chunks);
      auto foldChunk = [&](ImplicitLocOpBuilder &ib, Value c) {
        auto [lo, hi] = chunkBounds(ib, c, chunkSize, n);
        return foldRange(ib, op, rows, lo, hi, reduce.getInits());
      };
      SmallVector<Value> partials =
          scalar
              ? tabulate(b, chunks, vectorTypes(reduce.getInits().getTypes()),
                         /*parallel=*/true, foldChunk)
              : tabulateTensorRows(b, chunks, reduce.getInits(), foldChunk);
      RowReader partialRows(partials, nullptr);
      return foldRange(b, op, partialRows, indexConstant(b, 0), chunks,
                       reduce.getInits());
    };
    SmallVector<Value> results;
    if (isNestedInParallelOp(reduce)) {
      results = sequential();
    } else {
      // Rows shaped like the (first) neutral element, or read from tensor
      // rows.
      Value first = reduce.getInits().front();
      Value work = isa<RankedTensorType>(first.getType())
                       ? timesElements(b, n, first, 0)
                       : rowWork(b, reduce.getInputs(), reduce, n);
      results = chooseByWork(b, options, work, reduce.getResultTypes(),
                             [&](bool enough) {
                               return enough ? chunked() : sequential();
                             });
    }
    replaceAndEraseFused(rewriter, reduce, results, rows);
    return success();
  }

  ConvertSoacToLoopsOptions options;
};

} // namespace

void soac::loops::addReduceToLoops(RewritePatternSet &patterns,
                                   const ConvertSoacToLoopsOptions &options) {
  patterns.add<ReduceToLoops>(patterns.getContext(), options);
}
