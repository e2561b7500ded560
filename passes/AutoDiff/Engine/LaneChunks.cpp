//===- LaneChunks.cpp - wide derivatives as calls of narrow ones ----------===//
#include "passes/AutoDiff/Engine/LaneChunks.h"

#include "mlir/IR/Builders.h"

using namespace mlir;

namespace soac::autodiff {

void buildFromLaneChunks(func::FuncOp wide, func::FuncOp narrow,
                         unsigned numArgs, unsigned numResults,
                         unsigned width) {
  Block *entry = &wide.getBody().front();
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  ValueRange args = entry->getArguments();
  unsigned inputGroups = (args.size() - numArgs) / width;
  unsigned outputGroups = (wide.getNumResults() - numResults) / width;
  SmallVector<Value> results(numResults);
  SmallVector<SmallVector<Value>> lanes(outputGroups);
  for (unsigned first = 0; first < width; first += kLanesPerBody) {
    SmallVector<Value> operands(args.take_front(numArgs));
    for (unsigned g = 0; g < inputGroups; ++g)
      for (unsigned l = first; l < first + kLanesPerBody; ++l)
        operands.push_back(args[numArgs + g * width + std::min(l, width - 1)]);
    auto call = func::CallOp::create(b, wide.getLoc(), narrow, operands);
    // One body for every chunk: inlined, the calls would copy it again.
    call.setNoInline(true);
    if (first == 0)
      llvm::copy(call.getResults().take_front(numResults), results.begin());
    for (unsigned g = 0; g < outputGroups; ++g)
      for (unsigned l = first; l < std::min(first + kLanesPerBody, width); ++l)
        lanes[g].push_back(
            call.getResult(numResults + g * kLanesPerBody + (l - first)));
  }
  for (SmallVector<Value> &group : lanes)
    llvm::append_range(results, group);
  func::ReturnOp::create(b, wide.getLoc(), results);
}

} // namespace soac::autodiff
