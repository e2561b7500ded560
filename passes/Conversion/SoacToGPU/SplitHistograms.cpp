//===- SplitHistograms.cpp - one reduce_by_index per destination ----------===//

#include "passes/Conversion/SoacToGPU/SplitHistograms.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace soac::kernels {

namespace {

/// The operations of `body` (its top level) that result `k` of its
/// terminator depends on, in block order; nullopt when they read an argument
/// of `body` other than `k` and `k + n` (the accumulated and the new value
/// of destination `k` of `n`). Values from outside the body are free.
std::optional<SmallVector<Operation *>> component(Block &body, unsigned k,
                                                  unsigned n) {
  llvm::SetVector<Operation *> needed;
  SmallVector<Value> work{body.getTerminator()->getOperand(k)};
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      unsigned number = argument.getArgNumber();
      if (argument.getOwner() == &body && number != k && number != k + n)
        return std::nullopt;
      continue;
    }
    Operation *producer = value.getDefiningOp();
    // Defined outside the body, or inside one of its ops' regions (reached
    // through that op's walk).
    if (producer->getBlock() != &body)
      continue;
    if (!needed.insert(producer))
      continue;
    producer->walk([&](Operation *inner) {
      llvm::append_range(work, inner->getOperands());
    });
  }
  SmallVector<Operation *> ordered = needed.takeVector();
  llvm::sort(ordered, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return ordered;
}

} // namespace

std::optional<SmallVector<Operation *>>
splitByDestination(ReduceByIndexOp histogram) {
  Block &body = histogram.getBody().front();
  unsigned n = histogram.getDests().size();
  SmallVector<SmallVector<Operation *>> parts;
  for (unsigned k = 0; k < n; ++k) {
    std::optional<SmallVector<Operation *>> part = component(body, k, n);
    if (!part)
      return std::nullopt;
    parts.push_back(std::move(*part));
  }
  OpBuilder b(histogram);
  SmallVector<Operation *> split;
  for (unsigned k = 0; k < n; ++k) {
    auto one = ReduceByIndexOp::create(
        b, histogram.getLoc(), TypeRange{histogram.getResult(k).getType()},
        ValueRange{histogram.getDests()[k]}, histogram.getIndices(),
        ValueRange{histogram.getValues()[k]},
        ValueRange{histogram.getInits()[k]});
    BlockArgument accumulated = body.getArgument(k);
    BlockArgument added = body.getArgument(k + n);
    Block *block = new Block();
    one.getBody().push_back(block);
    IRMapping mapping;
    mapping.map(accumulated, block->addArgument(accumulated.getType(),
                                                accumulated.getLoc()));
    mapping.map(added, block->addArgument(added.getType(), added.getLoc()));
    OpBuilder inside = OpBuilder::atBlockEnd(block);
    for (Operation *op : parts[k])
      inside.clone(*op, mapping);
    Operation *yield = body.getTerminator();
    YieldOp::create(inside, yield->getLoc(),
                    ValueRange{mapping.lookupOrDefault(yield->getOperand(k))});
    histogram.getResult(k).replaceAllUsesWith(one.getResult(0));
    split.push_back(one);
  }
  histogram->erase();
  return split;
}

} // namespace soac::kernels
