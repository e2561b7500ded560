//===- ScanToLoops.cpp - soac.scan as loops -------------------------------===//
//
// A running fold writing each row (scf.for), or, at the top level with
// scalar rows when the work pays: chunk totals in parallel, their exclusive
// scan in order, then every chunk rescanned from its offset in parallel.
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
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace soac;
using namespace soac::loops;

namespace {

struct ScanToLoops : OpRewritePattern<ScanOp> {
  ScanToLoops(MLIRContext *context, const ConvertSoacToLoopsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(ScanOp scan,
                                PatternRewriter &rewriter) const override {
    if (failed(readyToLower(scan, rewriter)))
      return failure();
    ImplicitLocOpBuilder b(scan.getLoc(), rewriter);
    RowReader rows(scan.getInputs(), scan);
    Value n = rows.size(b);
    // Rows have the shape of the neutral elements.
    SmallVector<Value> outputs;
    for (auto [type, init] :
         llvm::zip(scan.getResultTypes(), scan.getInits())) {
      SmallVector<Value> inner;
      for (auto [d, size] : llvm::enumerate(
               cast<RankedTensorType>(type).getShape().drop_front()))
        if (ShapedType::isDynamic(size))
          inner.push_back(tensor::DimOp::create(b, init, d));
      outputs.push_back(
          emptyTensor(b, cast<RankedTensorType>(type), n, inner));
    }
    auto sequential = [&] {
      return scanRange(b, scan, rows, indexConstant(b, 0), n,
                       indexConstant(b, 0), scan.getInits(), outputs);
    };
    SmallVector<Value> results =
        isNestedInParallelOp(scan) || !allScalar(scan.getInits().getTypes())
            ? sequential()
            : chooseByWork(b, options, rowWork(b, scan.getInputs(), scan, n),
                           scan.getResultTypes(), [&](bool enough) {
                return enough ? parallelScan(b, scan, rows, n, outputs)
                              : sequential();
              });
    replaceAndEraseFused(rewriter, scan, results, rows);
    return success();
  }

private:
  /// Scans rows [lo, hi) starting from `accumulators`, writing the running
  /// values into `outputs` at row (i - shift).
  static SmallVector<Value> scanRange(ImplicitLocOpBuilder &b, ScanOp scan,
                                      const RowReader &rows, Value lo, Value hi,
                                      Value shift, ValueRange accumulators,
                                      ValueRange outputs) {
    size_t k = accumulators.size();
    SmallVector<Value> carried(accumulators);
    llvm::append_range(carried, outputs);
    auto loop = markRowLoop(scf::ForOp::create(
        b, lo, hi, indexConstant(b, 1), carried,
        [&](OpBuilder &nested, Location loc, Value i, ValueRange state) {
          ImplicitLocOpBuilder ib(loc, nested);
          SmallVector<Value> args(state.take_front(k));
          llvm::append_range(args, rows.rowsAt(ib, i));
          SmallVector<Value> next = inlineBody(ib, scan.getBody(), args);
          Value at = arith::SubIOp::create(ib, i, shift);
          SmallVector<Value> yielded(next);
          for (auto [value, out] : llvm::zip(next, state.drop_front(k))) {
            assertRowFits(ib, value, out);
            yielded.push_back(insertRow(ib, value, out, at));
          }
          scf::YieldOp::create(ib, yielded);
        }));
    return llvm::to_vector_of<Value>(loop.getResults().drop_front(k));
  }

  /// Chunk totals in parallel, their exclusive scan in order, then every chunk
  /// rescanned from its offset in parallel into its slice of the outputs.
  SmallVector<Value> parallelScan(ImplicitLocOpBuilder &b, ScanOp scan,
                                  const RowReader &rows, Value n,
                                  ValueRange outputs) const {
    TypeRange elementTypes = scan.getInits().getTypes();
    Value chunks = indexConstant(b, options.numChunks);
    Value chunkSize = arith::CeilDivUIOp::create(b, n, chunks);
    SmallVector<Value> totals = tabulate(
        b, chunks, vectorTypes(elementTypes), /*parallel=*/true,
        [&](ImplicitLocOpBuilder &ib, Value c) {
          auto [lo, hi] = chunkBounds(ib, c, chunkSize, n);
          return foldRange(ib, scan.getBody(), rows, lo, hi, scan.getInits());
        });
    // offsets[c] = inits op totals[0] op ... op totals[c-1]
    RowReader totalRows(totals, nullptr);
    SmallVector<Value> offsetOutputs = llvm::map_to_vector(
        vectorTypes(elementTypes), [&](Type t) {
          return emptyTensor(b, cast<RankedTensorType>(t), chunks);
        });
    size_t k = elementTypes.size();
    SmallVector<Value> carried(scan.getInits());
    llvm::append_range(carried, offsetOutputs);
    auto offsetLoop = markRowLoop(scf::ForOp::create(
        b, indexConstant(b, 0), chunks, indexConstant(b, 1), carried,
        [&](OpBuilder &nested, Location loc, Value c, ValueRange state) {
          ImplicitLocOpBuilder ib(loc, nested);
          SmallVector<Value> yielded;
          SmallVector<Value> args(state.take_front(k));
          llvm::append_range(args, totalRows.rowsAt(ib, c));
          yielded = inlineBody(ib, scan.getBody(), args);
          for (auto [acc, out] :
               llvm::zip(state.take_front(k), state.drop_front(k)))
            yielded.push_back(tensor::InsertOp::create(ib, acc, out, c));
          scf::YieldOp::create(ib, yielded);
        }));
    SmallVector<Value> offsets =
        llvm::to_vector_of<Value>(offsetLoop.getResults().drop_front(k));

    auto forall = scf::ForallOp::create(
        b, ArrayRef<OpFoldResult>{chunks}, outputs, std::nullopt,
        [&](OpBuilder &nested, Location loc, ValueRange args) {
          // args: the chunk number, then the shared outputs
          ImplicitLocOpBuilder ib(loc, nested);
          Value c = args[0];
          ValueRange shared = args.drop_front();
          auto [lo, hi] = chunkBounds(ib, c, chunkSize, n);
          Value length = arith::SubIOp::create(ib, hi, lo);
          SmallVector<Value> start = llvm::map_to_vector(
              offsets, [&](Value o) -> Value {
                return tensor::ExtractOp::create(ib, o, ValueRange{c});
              });
          SmallVector<Value> slices = llvm::map_to_vector(
              shared, [&](Value out) -> Value {
                return tensor::ExtractSliceOp::create(
                    ib, out, ArrayRef<OpFoldResult>{lo},
                    ArrayRef<OpFoldResult>{length},
                    ArrayRef<OpFoldResult>{ib.getIndexAttr(1)});
              });
          SmallVector<Value> scanned =
              scanRange(ib, scan, rows, lo, hi, lo, start, slices);
          auto inParallel = scf::InParallelOp::create(ib);
          ib.setInsertionPointToStart(inParallel.getBody());
          for (auto [slice, out] : llvm::zip(scanned, shared))
            tensor::ParallelInsertSliceOp::create(
                ib, slice, out, ArrayRef<OpFoldResult>{lo},
                ArrayRef<OpFoldResult>{length},
                ArrayRef<OpFoldResult>{ib.getIndexAttr(1)});
        });
    return llvm::to_vector_of<Value>(forall.getResults());
  }

  ConvertSoacToLoopsOptions options;
};

} // namespace

void soac::loops::addScanToLoops(RewritePatternSet &patterns,
                                 const ConvertSoacToLoopsOptions &options) {
  patterns.add<ScanToLoops>(patterns.getContext(), options);
}
