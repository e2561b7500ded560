//===- FuncRules.cpp - forward-mode rule of func.call ---------------------===//
#include "passes/AutoDiff/Interfaces/RuleModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace soac::autodiff {

/// A call is differentiated by calling the callee's jvp function (created on
/// demand, recursively) with respect to the operands that carry a tangent.
LogicalResult forwardOf(func::CallOp call, TangentBuilder &t) {
  auto callee = t.symbolTables().lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee)
    return call.emitOpError() << "calls " << call.getCalleeAttr()
                              << ", which is not a func.func with a body";
  SmallVector<int64_t> wrt;
  SmallVector<Value> operands = t.primals(call.getOperands());
  for (auto [i, arg] : llvm::enumerate(call.getOperands()))
    if (t.isActive(arg)) {
      wrt.push_back(i);
      for (unsigned lane : t.laneIndices())
        operands.push_back(t.tangentOrZero(arg, lane));
    }
  FailureOr<func::FuncOp> jvp =
      getOrCreateJvpFunction(callee, wrt, t.width(), t.symbolTables());
  if (failed(jvp))
    return call.emitOpError() << "could not differentiate its callee "
                              << call.getCalleeAttr();
  auto forward = func::CallOp::create(t.builder(), *jvp, operands);
  size_t n = call.getNumResults();
  for (auto [j, result] : llvm::enumerate(call.getResults())) {
    t.mapPrimal(result, forward.getResult(j));
    for (unsigned lane : t.laneIndices())
      t.setTangent(result, lane, forward.getResult(n + j * t.width() + lane));
  }
  return success();
}

void registerFuncForwardRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, func::FuncDialect *) {
    attachForwardRules<func::CallOp>(context);
  });
}

} // namespace soac::autodiff
