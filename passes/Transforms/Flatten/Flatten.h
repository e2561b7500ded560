//===- Flatten.h - soac-flatten patterns and their analyses ------*- C++ -*-===//
//
// soac-flatten rewrites nested parallelism (SOACs in the body of a soac.map)
// into perfect nests. The patterns share what this header declares: which
// statements of a map body hold parallelism ("nests"), which body statements a
// nest depends on, and the split of a map into two maps (map fission).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_TRANSFORMS_FLATTEN_FLATTEN_H
#define SOAC_PASSES_TRANSFORMS_FLATTEN_FLATTEN_H

#include "dialect/SoacOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace soac {

/// The unit attribute marking a soac.map whose body is exactly one segmented
/// reduction or scan (see markSegmentedMaps).
constexpr llvm::StringLiteral kSegmentedAttr = "soac.segmented";

/// Patterns of soac-flatten: distribution, map∘map collapsing, isolation of a
/// nested reduce or scan, and loop interchange.
void populateSoacFlattenPatterns(mlir::RewritePatternSet &patterns);

/// Sets `soac.segmented` on every soac.map under `root` whose body is exactly
/// one reduce or scan over (maps of) its rows, and removes it from the others.
void markSegmentedMaps(mlir::Operation *root);

/// Moves the constants in soac.map bodies in front of the outermost map
/// around them (a constant is the same in every row).
void hoistConstantsFromMaps(mlir::Operation *root);

namespace flatten {

/// Distribution (map fission): a map whose body holds several nests becomes
/// one map per nest.
void populateDistributionPatterns(mlir::RewritePatternSet &patterns);
/// map∘map → one map over the inputs with their two outer dimensions merged.
void populateCollapseMapsPatterns(mlir::RewritePatternSet &patterns);
/// map∘reduce, map∘scan: the reduce (scan) alone in its map.
void populateIsolateNestPatterns(mlir::RewritePatternSet &patterns);
/// map∘for → for∘map for loops with scalar carried values.
void populateInterchangePatterns(mlir::RewritePatternSet &patterns);

/// True when `map` lies in the operator of a reduce, scan or reduce_by_index:
/// there it combines two rows, which is no parallelism of the program's, and
/// the lowerings combine vector rows element by element themselves (a
/// flattened operator is one they cannot read). The patterns leave it alone.
bool inCombiningOperator(MapOp map);

/// The base of the soac-flatten patterns, all on maps: a map in the operator
/// of a reduce, scan or reduce_by_index is left alone (inCombiningOperator),
/// and `flatten` rewrites the others.
struct FlattenPattern : mlir::OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult
  matchAndRewrite(MapOp map, mlir::PatternRewriter &rewriter) const final {
    if (inCombiningOperator(map))
      return rewriter.notifyMatchFailure(map, "in a combining operator");
    return flatten(map, rewriter);
  }

  virtual mlir::LogicalResult flatten(MapOp map,
                                      mlir::PatternRewriter &rewriter) const = 0;
};

/// A nest: the statements of a map body that form one parallel construct, in
/// body order. `top` is a SOAC (or an op with SOACs in its regions); the other
/// ops are soac.map statements whose results only the nest reads (a map
/// feeding a reduce stays with it, as the two are one pass over the row).
struct Nest {
  mlir::Operation *top;
  llvm::SmallVector<mlir::Operation *> ops;
};

/// The nests of a map's body, in the order of their top statements.
llvm::SmallVector<Nest> findNests(MapOp map);

/// True when the body of `map` (nested regions included) has no side effects,
/// so its statements may run in another order across rows.
bool hasPureBody(MapOp map);

/// The statements of `map`'s body that `ops` depend on (through operands or
/// values read in nested regions), `ops` included, in body order.
llvm::SmallVector<mlir::Operation *>
backwardSlice(MapOp map, llvm::ArrayRef<mlir::Operation *> ops);

/// Splits `map` in two maps run one after the other: the first runs the body
/// statements `first` (closed under in-body dependences), the second the
/// rest. Values of the first part the second reads become extra results of
/// the first map and extra inputs of the second. Fails, changing nothing, when
/// such a value cannot be a row (its shape may differ between rows) or a part
/// would be empty.
mlir::LogicalResult splitMap(mlir::PatternRewriter &rewriter, MapOp map,
                             llvm::ArrayRef<mlir::Operation *> first);

/// True when `value` is defined outside `map` (the same in every row).
bool definedOutside(mlir::Value value, MapOp map);

/// The outer size of the rows of `map` as a static size, or kDynamic.
int64_t staticOuterSize(MapOp map);

/// The outer size of the rows of `map` as a value (built before `map`).
mlir::Value outerSizeValue(mlir::OpBuilder &b, MapOp map);

} // namespace flatten
} // namespace soac

#endif // SOAC_PASSES_TRANSFORMS_FLATTEN_FLATTEN_H
