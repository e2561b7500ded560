//===- StackTemporaries.cpp - a parallel loop's small temporaries on the stack //
//
// Buffer hoisting cannot move a temporary out of a parallel loop (each thread
// needs its own), so one that an iteration allocates and frees costs a
// malloc, a free and, in a checked call, two updates of the call's record of
// live buffers, per iteration. BA's gradient on two threads spent a quarter
// of its time there, on five buffers of at most 11 doubles per observation,
// and ran slower than on one thread (whose sequential loop has them hoisted).
// A small one of static shape, freed in the same iteration, goes on the stack
// here instead, in an alloca scope per iteration.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"

namespace soac {
#define GEN_PASS_DEF_SOACSTACKTEMPORARIES
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

/// The most bytes one temporary may take on the stack, and all those of one
/// loop body together: an OpenMP worker's stack is 4 MiB by default, and
/// nested parallel loops add up their bodies' temporaries.
constexpr int64_t kMaxStackBytes = 4096;
constexpr int64_t kMaxStackBytesPerBody = 64 * 1024;

/// The bytes of a buffer of static shape of scalars, allocated without
/// layout symbols (which a memref.alloca would need too).
std::optional<int64_t> staticBytes(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !alloc.getSymbolOperands().empty() ||
      !type.getElementType().isIntOrIndexOrFloat())
    return std::nullopt;
  // As soac-lower-checks sizes allocations.
  int64_t elementBytes =
      DataLayout::closest(alloc).getTypeSize(type.getElementType());
  return type.getNumElements() * elementBytes;
}

/// The one unconditional dealloc of `alloc` in its own block, when that is
/// its only dealloc: the buffer then lives within the iteration.
memref::DeallocOp deallocInSameBlock(memref::AllocOp alloc) {
  memref::DeallocOp found;
  for (Operation *user : alloc->getUsers()) {
    auto dealloc = dyn_cast<memref::DeallocOp>(user);
    if (!dealloc)
      continue;
    if (found || dealloc->getBlock() != alloc->getBlock())
      return nullptr;
    found = dealloc;
  }
  return found;
}

/// Moves the body of `loop`, but its terminator, into a memref.alloca_scope,
/// so that each iteration gives its stack temporaries back.
void scopeBody(scf::ParallelOp loop) {
  Block *body = loop.getBody();
  OpBuilder b(loop.getContext());
  b.setInsertionPointToStart(body);
  auto scope = memref::AllocaScopeOp::create(b, loop.getLoc(), TypeRange{});
  Block *scoped = b.createBlock(&scope.getBodyRegion());
  scoped->getOperations().splice(scoped->end(), body->getOperations(),
                                 std::next(scope->getIterator()),
                                 std::prev(body->end()));
  b.setInsertionPointToEnd(scoped);
  memref::AllocaScopeReturnOp::create(b, loop.getLoc(), ValueRange{});
}

struct SoacStackTemporaries
    : soac::impl::SoacStackTemporariesBase<SoacStackTemporaries> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation()->walk([&](scf::ParallelOp loop) {
      // A reduction's terminator reads values of the body, which the scope
      // would have to return: such loops are left alone (the SOAC lowering
      // makes none).
      if (loop.getNumReductions() == 0)
        loops.push_back(loop);
    });
    for (scf::ParallelOp loop : loops) {
      int64_t onTheStack = 0;
      for (auto alloc :
           llvm::make_early_inc_range(loop.getBody()->getOps<memref::AllocOp>())) {
        std::optional<int64_t> bytes = staticBytes(alloc);
        if (!bytes || *bytes > kMaxStackBytes ||
            onTheStack + *bytes > kMaxStackBytesPerBody)
          continue;
        memref::DeallocOp dealloc = deallocInSameBlock(alloc);
        if (!dealloc)
          continue;
        onTheStack += *bytes;
        OpBuilder b(alloc);
        auto alloca = memref::AllocaOp::create(
            b, alloc.getLoc(), alloc.getType(), ValueRange{},
            alloc.getAlignmentAttr());
        dealloc.erase();
        alloc.replaceAllUsesWith(alloca.getResult());
        alloc.erase();
      }
      if (onTheStack > 0)
        scopeBody(loop);
    }
  }
};

} // namespace
