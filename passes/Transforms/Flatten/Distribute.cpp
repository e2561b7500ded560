//===- Distribute.cpp - map fission: distribution and isolation -----------===//
//
// Both patterns split a map in two with splitMap, so that in the end every
// map body holds at most one nest, alone:
//
//   map (λrow. a = reduce (+) row; b = scan (*) row; yield a, b)
//     → map (λrow. reduce (+) row), map (λrow. scan (*) row)
//   map (λrow. f (reduce (+) row))
//     → map (λs. f s) (map (λrow. reduce (+) row))
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Flatten/Flatten.h"

using namespace mlir;

namespace soac::flatten {

namespace {

/// A map whose body holds two nests or more: the first nest, with the body
/// statements it depends on, goes into a map of its own; the rest into a
/// second map (split again if it still holds several nests). Every statement
/// runs in exactly one of the maps, so no work is duplicated.
struct DistributeMap : FlattenPattern {
  using FlattenPattern::FlattenPattern;

  LogicalResult flatten(MapOp map, PatternRewriter &rewriter) const override {
    if (!hasPureBody(map))
      return rewriter.notifyMatchFailure(map, "body with side effects");
    SmallVector<Nest> nests = findNests(map);
    if (nests.size() < 2)
      return rewriter.notifyMatchFailure(map, "fewer than two nests");
    return splitMap(rewriter, map, backwardSlice(map, nests.front().ops));
  }
};

/// A map whose body holds one nest (a reduce, scan or map, with the maps
/// feeding it) among scalar statements: the statements the nest reads go
/// into a map before it (for a reduce or scan), those that read the nest
/// into a map after it. The map left holding the nest alone is then a
/// segmented reduce or scan, or a map∘map that CollapseMaps flattens.
struct IsolateNest : FlattenPattern {
  using FlattenPattern::FlattenPattern;

  LogicalResult flatten(MapOp map, PatternRewriter &rewriter) const override {
    if (!hasPureBody(map))
      return rewriter.notifyMatchFailure(map, "body with side effects");
    SmallVector<Nest> nests = findNests(map);
    if (nests.size() != 1)
      return rewriter.notifyMatchFailure(map, "not exactly one nest");
    Nest &nest = nests.front();
    bool reduction = isa<ReduceOp, ScanOp>(nest.top);
    if (!reduction && !isa<MapOp>(nest.top))
      return rewriter.notifyMatchFailure(map, "the nest is not a reduce, scan or map");
    SmallVector<Operation *> slice = backwardSlice(map, nest.ops);
    if (reduction && slice.size() > nest.ops.size()) {
      // The per-row values the reduction reads become rows of its inputs.
      SmallVector<Operation *> before = llvm::filter_to_vector(
          slice, [&](Operation *op) { return !llvm::is_contained(nest.ops, op); });
      return splitMap(rewriter, map, before);
    }
    size_t statements = std::distance(map.getBody().front().begin(),
                                      map.getBody().front().end()) - 1;
    if (slice.size() == statements)
      return rewriter.notifyMatchFailure(map, "nothing after the nest");
    return splitMap(rewriter, map, slice);
  }
};

} // namespace

void populateDistributionPatterns(RewritePatternSet &patterns) {
  patterns.add<DistributeMap>(patterns.getContext());
}

void populateIsolateNestPatterns(RewritePatternSet &patterns) {
  patterns.add<IsolateNest>(patterns.getContext());
}

} // namespace soac::flatten
