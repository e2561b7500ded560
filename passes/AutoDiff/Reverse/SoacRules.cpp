//===- SoacRules.cpp - reverse-mode rules of the SOACs --------------------===//
//
// Attaches the reverse rules of the SOACs (one file per op family, see
// SoacRules.h) and defines what several of them use.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Reverse/SoacRules.h"

#include "passes/AutoDiff/Interfaces/Builders.h"

#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace soac::autodiff {

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

void registerSoacRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, SoacDialect *) {
    attachMapRule(context);
    attachRules<ReduceOp, ScanOp, ScatterOp, ReduceByIndexOp>(context);
  });
}

} // namespace soac::autodiff
