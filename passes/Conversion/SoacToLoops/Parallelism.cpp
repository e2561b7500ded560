//===- Parallelism.cpp - parallel loops only when they pay ----------------===//
#include "passes/Conversion/SoacToLoops/Parallelism.h"

#include "passes/Utils/Bodies.h"
#include "passes/Conversion/SoacToLoops/Loops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace soac::loops {

Value maxThreads(ImplicitLocOpBuilder &b) {
  auto call = func::CallOp::create(b, kMaxThreadsFunction, b.getI32Type(),
                                   ValueRange{});
  return arith::IndexCastOp::create(b, b.getIndexType(), call.getResult(0));
}

void declareMaxThreads(ModuleOp module) {
  if (module.lookupSymbol(kMaxThreadsFunction))
    return;
  WalkResult calls = module.walk([](func::CallOp call) {
    return call.getCallee() == kMaxThreadsFunction ? WalkResult::interrupt()
                                                   : WalkResult::advance();
  });
  if (!calls.wasInterrupted())
    return;
  auto b = ImplicitLocOpBuilder::atBlockBegin(module.getLoc(), module.getBody());
  auto declaration = func::FuncOp::create(
      b, kMaxThreadsFunction, b.getFunctionType({}, {b.getI32Type()}));
  declaration.setPrivate();
}

bool tooLittleWork(Value work) {
  std::optional<int64_t> known = getConstantIntValue(work);
  return known && *known < kMinParallelWork;
}

Value parallelPays(ImplicitLocOpBuilder &b, Value work) {
  Value enoughWork = arith::CmpIOp::create(
      b, arith::CmpIPredicate::uge, work, indexConstant(b, kMinParallelWork));
  Value threads = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                        maxThreads(b), indexConstant(b, 1));
  return arith::AndIOp::create(b, enoughWork, threads);
}

SmallVector<Value>
chooseByWork(ImplicitLocOpBuilder &b, const ConvertSoacToLoopsOptions &options,
             Value work, TypeRange types,
             function_ref<SmallVector<Value>(bool parallel)> build) {
  if (!options.openmp || tooLittleWork(work))
    return build(false);
  auto choice =
      scf::IfOp::create(b, types, parallelPays(b, work), true, true);
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
  // Folded, so that static sizes give a constant (tooLittleWork).
  for (int64_t d = fromDim; d < type.getRank(); ++d)
    work = b.createOrFold<arith::MulIOp>(
        work,
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
