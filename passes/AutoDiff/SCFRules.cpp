//===- SCFRules.cpp - reverse-mode rules of scf ops -----------------------===//
#include "passes/AutoDiff/RuleModel.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace soac::autodiff {

/// A branch: the return sweep takes the same branch, re-executes it, sweeps
/// it backwards and yields the adjoints of the values it read from outside.
LogicalResult reverseOf(scf::IfOp op, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  // Values read from outside the branches (yielded ones included).
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  SmallVector<Value> free;
  for (Value value : captured)
    if (a.isActive(value))
      free.push_back(value);
  SmallVector<Type> types = llvm::map_to_vector(
      free, [&](Value v) { return a.primal(v).getType(); });
  auto reverse =
      scf::IfOp::create(b, types, a.primal(op.getCondition()), true, true);
  for (auto [source, target] : {std::pair{op.thenBlock(), reverse.thenBlock()},
                                std::pair{op.elseBlock(), reverse.elseBlock()}}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(target);
    SmallVector<Value> yielded;
    if (source) {
      AdjointBuilder scope(b, a.activity(), *source, &a, a.symbolTables(),
                           /*sparseFreeReads=*/false);
      scope.reexecute(*source);
      for (auto [result, value] :
           llvm::zip(op.getResults(), source->getTerminator()->getOperands()))
        scope.accumulate(value, a.adjoint(result));
      if (failed(scope.sweep(*source)))
        return failure();
      for (Value value : free) {
        Value adjoint = scope.outerAdjoints().lookup(value);
        yielded.push_back(adjoint ? adjoint : a.zerosLike(a.primal(value)));
      }
    } else {
      for (Value value : free)
        yielded.push_back(a.zerosLike(a.primal(value)));
    }
    scf::YieldOp::create(b, yielded);
  }
  for (auto [value, adjoint] : llvm::zip(free, reverse.getResults()))
    a.accumulate(value, adjoint);
  return success();
}

void registerSCFRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, scf::SCFDialect *) {
    attachRules<scf::IfOp>(context);
  });
}

} // namespace soac::autodiff
