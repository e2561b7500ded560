//===- ResultsFromAdjoint.cpp - a map's results from its adjoint map ------===//
#include "passes/AutoDiff/Engine/ResultsFromAdjoint.h"

#include "dialect/SoacOps.h"
#include "passes/AutoDiff/Engine/ReverseEngine.h"
#include "passes/AutoDiff/Interfaces/Operators.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

/// A reduce of scalars by `+`: its reverse rule replicates its seed,
/// whatever it summed.
bool isScalarSum(ReduceOp reduce) {
  return reduce.getInputs().size() == 1 &&
         isa<FloatType>(reduce.getInits()[0].getType()) &&
         componentKind(reduce.getBody(), 0) == Combine::Add;
}

/// Whether the adjoint of `value`, an operand of `user` (in the function
/// body), does not read `value`, nor does `user`'s rule read it for another
/// operand: a sum, an addition, a subtraction, a negation, a product with
/// or a division by an inactive value (a mean's 1/n, a loss's ½).
bool adjointIgnoresOperand(Operation *user, Value value,
                           const Activity &activity) {
  if (auto reduce = dyn_cast<ReduceOp>(user))
    return isScalarSum(reduce);
  if (auto product = dyn_cast<arith::MulFOp>(user)) {
    Value other =
        product.getLhs() == value ? product.getRhs() : product.getLhs();
    return other != value && !activity.isActive(other);
  }
  if (auto quotient = dyn_cast<arith::DivFOp>(user))
    return quotient.getLhs() == value && quotient.getRhs() != value &&
           !activity.isActive(quotient.getRhs());
  return isa<arith::AddFOp, arith::SubFOp, arith::NegFOp>(user);
}

/// Where a map reads `forward` (a result of map `producer`) only for its
/// outer size (a sum's replicated seed), it reads the producer's first input
/// instead, which has that size, so that it no longer waits for `forward`.
void readSizeFromProducer(Value forward) {
  auto producer = forward.getDefiningOp<MapOp>();
  if (!producer)
    return;
  Value input = producer.getInputs()[0];
  for (OpOperand &use : llvm::make_early_inc_range(forward.getUses())) {
    auto map = dyn_cast<MapOp>(use.getOwner());
    if (!map || map->getBlock() != producer->getBlock())
      continue;
    BlockArgument row =
        map.getBody().front().getArgument(use.getOperandNumber());
    if (!row.use_empty())
      continue;
    use.set(input);
    auto type = cast<RankedTensorType>(input.getType());
    row.setType(type.getRank() == 1
                    ? type.getElementType()
                    : RankedTensorType::get(type.getShape().drop_front(),
                                            type.getElementType()));
  }
}

/// Whether `map`'s body reads an active tensor of its scope at computed
/// indices. Its adjoint map then yields the reads' (index, value) batches,
/// which its lowering scatters row by row only while the map yields nothing
/// else: a result more would store the batches (rows × reads of memory).
bool readsActiveTensorsAtIndices(MapOp map, const Activity &activity) {
  return map.getBody()
      .walk([&](Operation *op) {
        if (!isa<tensor::ExtractOp, tensor::ExtractSliceOp>(op))
          return WalkResult::advance();
        Value source = op->getOperand(0);
        bool outer = !map->isAncestor(source.getParentRegion()->getParentOp());
        return outer && activity.isActive(source) ? WalkResult::interrupt()
                                                  : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The ops of `body` that use `values`, and those that use theirs, up to
/// `body`'s terminator, in the order of the block; failure as soon as one
/// of them is not in `body` itself or `admits(user, value used)` is false.
FailureOr<SmallVector<Operation *>>
usersUpToTerminator(ValueRange values, Block &body,
                    llvm::function_ref<bool(Operation *, Value)> admits) {
  llvm::SetVector<Operation *> users;
  SmallVector<Value> worklist(values);
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == body.getTerminator())
        continue;
      if (user->getBlock() != &body || !admits(user, value))
        return failure();
      if (users.insert(user))
        llvm::append_range(worklist, user->getResults());
    }
  }
  SmallVector<Operation *> inOrder(users.begin(), users.end());
  llvm::sort(inOrder, [](Operation *x, Operation *y) {
    return x->isBeforeInBlock(y);
  });
  return inOrder;
}

} // namespace

llvm::SmallPtrSet<Operation *, 4>
mapsWithValueFreeAdjoints(func::FuncOp function, const Activity &activity) {
  Block &body = function.getBody().front();
  llvm::SmallPtrSet<Operation *, 4> maps;
  for (auto map : body.getOps<MapOp>()) {
    if (llvm::none_of(map.getResults(),
                      [&](Value r) { return activity.isActive(r); }) ||
        readsActiveTensorsAtIndices(map, activity))
      continue;
    auto valueFree = [&](Operation *user, Value value) {
      return adjointIgnoresOperand(user, value, activity);
    };
    if (succeeded(usersUpToTerminator(map.getResults(), body, valueFree)))
      maps.insert(map);
  }
  return maps;
}

void takeResultsFromAdjoints(Block &body,
                             ArrayRef<std::pair<Value, Value>> pairs) {
  Operation *terminator = body.getTerminator();
  for (auto [forward, fromAdjoint] : pairs) {
    readSizeFromProducer(forward);
    // What uses the forward value, up to the return: pure ops of the body,
    // read by nothing else.
    FailureOr<SmallVector<Operation *>> users = usersUpToTerminator(
        forward, body,
        [](Operation *user, Value) { return isMemoryEffectFree(user); });
    if (failed(users) ||
        llvm::is_contained(*users, fromAdjoint.getDefiningOp()))
      continue;
    for (Operation *user : *users)
      user->moveBefore(terminator);
    forward.replaceAllUsesWith(fromAdjoint);
  }
}

} // namespace soac::autodiff
