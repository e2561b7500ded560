//===- Parallelism.cpp - parallel loops only when they pay ----------------===//
#include "passes/Conversion/SoacToLoops/Parallelism.h"

#include "passes/Utils/Bodies.h"
#include "passes/Conversion/SoacToLoops/Loops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::loops {

Value maxThreads(ImplicitLocOpBuilder &b) {
  auto call = func::CallOp::create(b, kMaxThreadsFunction, b.getI32Type(),
                                   ValueRange{});
  return arith::IndexCastOp::create(b, b.getIndexType(), call.getResult(0));
}

namespace {

/// Declares the private function `name` of type `type` where the module
/// calls it and has no such symbol.
void declareIfCalled(ModuleOp module, StringRef name, FunctionType type) {
  if (module.lookupSymbol(name))
    return;
  WalkResult calls = module.walk([&](func::CallOp call) {
    return call.getCallee() == name ? WalkResult::interrupt()
                                    : WalkResult::advance();
  });
  if (!calls.wasInterrupted())
    return;
  auto b = ImplicitLocOpBuilder::atBlockBegin(module.getLoc(), module.getBody());
  func::FuncOp::create(b, name, type).setPrivate();
}

} // namespace

void declareParallelismFunctions(ModuleOp module) {
  Builder b(module.getContext());
  declareIfCalled(module, kMaxThreadsFunction,
                  b.getFunctionType({}, {b.getI32Type()}));
  declareIfCalled(module, kParallelPaysFunction,
                  b.getFunctionType({b.getIndexType()}, {b.getI1Type()}));
}

Value enoughWork(ImplicitLocOpBuilder &b, Value work) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::uge, work,
                               indexConstant(b, kMinParallelWork));
}

Value parallelPays(ImplicitLocOpBuilder &b, Value work) {
  Value enough = enoughWork(b, work);
  Value threads = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                        maxThreads(b), indexConstant(b, 1));
  return arith::AndIOp::create(b, enough, threads);
}

SmallVector<Value>
chooseByWork(ImplicitLocOpBuilder &b, const ConvertSoacToLoopsOptions &options,
             Value work, TypeRange types, SmallWork small,
             function_ref<SmallVector<Value>(bool parallel)> build) {
  if (!options.openmp)
    return build(false);
  auto pays = func::CallOp::create(b, kParallelPaysFunction, b.getI1Type(),
                                   ValueRange{work});
  if (small == SmallWork::Serialized)
    pays->setAttr(kSerializableAttr, b.getUnitAttr());
  auto choice = scf::IfOp::create(b, types, pays.getResult(0), true, true);
  for (auto [block, parallel] :
       {std::pair{choice.thenBlock(), true}, {choice.elseBlock(), false}}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(block);
    scf::YieldOp::create(b, build(parallel));
  }
  return llvm::to_vector_of<Value>(choice.getResults());
}

Value timesElements(ImplicitLocOpBuilder &b, Value n, Value tensor,
                    int64_t fromDim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value work = n;
  for (int64_t d = fromDim; d < type.getRank(); ++d)
    work = arith::MulIOp::create(
        b, work,
        type.isDynamicDim(d) ? Value(tensor::DimOp::create(b, tensor, d))
                             : indexConstant(b, type.getDimSize(d)));
  return work;
}

namespace {

/// The first tensor with tensor rows among those `consumer` reads, looking
/// through the maps fused into it (whose inputs it reads instead: their
/// results' sizes would keep them alive); null when all rows are scalars.
Value firstTensorWithTensorRows(ValueRange tensors, Operation *consumer) {
  for (Value tensor : tensors) {
    if (MapOp map = fusableProducer(tensor, consumer)) {
      if (Value found = firstTensorWithTensorRows(map.getInputs(), map))
        return found;
      continue;
    }
    if (cast<RankedTensorType>(tensor.getType()).getRank() > 1)
      return tensor;
  }
  return Value();
}

} // namespace

Value rowWork(ImplicitLocOpBuilder &b, ValueRange tensors, Operation *consumer,
              Value n) {
  Value rowsOf = firstTensorWithTensorRows(tensors, consumer);
  return rowsOf ? timesElements(b, n, rowsOf, 1) : n;
}

std::pair<Value, Value> chunkBounds(ImplicitLocOpBuilder &b, Value c,
                                    Value chunkSize, Value n) {
  Value lo = arith::MinUIOp::create(b, arith::MulIOp::create(b, c, chunkSize), n);
  Value hi = arith::MinUIOp::create(b, arith::AddIOp::create(b, lo, chunkSize), n);
  return {lo, hi};
}

} // namespace soac::loops
