//===- HoistBranchBuffers.cpp - allocations out of branches in loops ------===//
//
// buffer-loop-hoisting takes an allocation out of a loop only from the
// loop's body. This moves allocations from scf.if branches inside a loop to
// the loop's body first (see Passes.td for when it may).
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace soac {
#define GEN_PASS_DEF_SOACHOISTBRANCHBUFFERS
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

/// Whether `size` is one a buffer may always be allocated with, whether or
/// not the branch that used it is taken: a constant, the size of a buffer,
/// or a choice, minimum or maximum of such sizes. (A size computed from
/// data may be what the branch's condition guards against: a huge or
/// negative one.)
bool alwaysAllocatable(Value size) {
  Operation *op = size.getDefiningOp();
  if (!op)
    return false;
  if (isa<arith::ConstantOp, memref::DimOp, tensor::DimOp>(op))
    return true;
  if (auto select = dyn_cast<arith::SelectOp>(op))
    return alwaysAllocatable(select.getTrueValue()) &&
           alwaysAllocatable(select.getFalseValue());
  if (isa<arith::MinUIOp, arith::MaxUIOp, arith::MinSIOp, arith::MaxSIOp>(op))
    return alwaysAllocatable(op->getOperand(0)) &&
           alwaysAllocatable(op->getOperand(1));
  return false;
}

/// Whether a view of `buffer` leaves the code that uses it: yielded,
/// returned, passed to a call, or stored.
bool escapes(Value buffer) {
  SmallVector<Value> views{buffer};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      if (auto viewLike = dyn_cast<ViewLikeOpInterface>(user)) {
        if (viewLike.getViewSource() == view)
          for (Value result : user->getResults())
            views.push_back(result);
        continue;
      }
      if (user->hasTrait<OpTrait::IsTerminator>() ||
          isa<CallOpInterface>(user))
        return true;
      if (auto store = dyn_cast<memref::StoreOp>(user);
          store && store.getValueToStore() == view)
        return true;
    }
  }
  return false;
}

/// The outermost of the scf.ifs around `alloc` whose parent is a loop's
/// body, or null.
scf::IfOp branchInLoop(memref::AllocOp alloc) {
  scf::IfOp outermost;
  Operation *parent = alloc->getParentOp();
  while (auto branch = dyn_cast<scf::IfOp>(parent)) {
    outermost = branch;
    parent = branch->getParentOp();
  }
  return outermost && isa<LoopLikeOpInterface>(parent) ? outermost : nullptr;
}

struct SoacHoistBranchBuffersPass
    : soac::impl::SoacHoistBranchBuffersBase<SoacHoistBranchBuffersPass> {
  void runOnOperation() override {
    DominanceInfo dominance(getOperation());
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    for (memref::AllocOp alloc : allocs) {
      scf::IfOp branch = branchInLoop(alloc);
      if (!branch || escapes(alloc) ||
          !llvm::all_of(alloc.getDynamicSizes(), [&](Value size) {
            return alwaysAllocatable(size) &&
                   dominance.properlyDominates(size, branch);
          }))
        continue;
      alloc->moveBefore(branch);
    }
  }
};

} // namespace
