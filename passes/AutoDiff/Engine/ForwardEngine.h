//===- ForwardEngine.h - forward-mode AD with dual numbers ------*- C++ -*-===//
//
// Forward mode walks a scope once, first op to last: inactive ops are cloned,
// active ones ask their ForwardModeOpInterface rule to build their primal
// results and the tangents of their active results. Ops with regions (SOACs,
// loops, branches) lift their bodies to (primal, tangent) pairs with
// `lift`, so that one loop or one SOAC computes both.
//
// Vector mode: a scope has `width` tangent lanes, k directional derivatives
// computed in one pass over the primal. Lists of tangents hold the lanes of
// each value together: value j, lane l at j·width + l.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_ENGINE_FORWARDENGINE_H
#define SOAC_PASSES_AUTODIFF_ENGINE_FORWARDENGINE_H

#include "passes/AutoDiff/Engine/ReverseEngine.h"

#include "passes/AutoDiff/Interfaces/ForwardModeOpInterface.h"

namespace soac::autodiff {

/// What a lifted block yields: its primal values, then the tangents of those
/// that `lift` was asked for.
struct Lifted {
  llvm::SmallVector<mlir::Value> primals;
  llvm::SmallVector<mlir::Value> tangents;

  /// What the lifted op's terminator yields: primals, then tangents.
  llvm::SmallVector<mlir::Value> all() const {
    llvm::SmallVector<mlir::Value> values(primals);
    llvm::append_range(values, tangents);
    return values;
  }
};

/// The tangent lanes of `count` values, null (zero) except `packed`: the
/// `width` lanes of each value at `positions`.
llvm::SmallVector<mlir::Value> spreadTangents(mlir::ValueRange packed,
                                              llvm::ArrayRef<unsigned> positions,
                                              size_t count, unsigned width);

/// `types` followed, for each of `positions`, by `width` copies of its type
/// (the types of its tangent lanes).
llvm::SmallVector<mlir::Type> withTangentTypes(mlir::TypeRange types,
                                               llvm::ArrayRef<unsigned> positions,
                                               unsigned width);

/// One scope of the forward sweep and the API the rules build with.
class TangentBuilder {
public:
  /// A scope building at `builder`'s insertion point; `parent` is the
  /// enclosing scope (null for a function body), whose values the scope reads
  /// when they are defined outside its block.
  TangentBuilder(mlir::ImplicitLocOpBuilder &builder, const Activity &activity,
                 TangentBuilder *parent, mlir::SymbolTableCollection &symbols,
                 unsigned width = 1);

  mlir::ImplicitLocOpBuilder &builder() { return b; }
  mlir::SymbolTableCollection &symbolTables() { return symbols; }
  const Activity &activity() const { return activityInfo; }
  bool isActive(mlir::Value original) const {
    return activityInfo.isActive(original);
  }
  /// The number of tangent lanes, and their indices for loops.
  unsigned width() const { return lanes; }
  auto laneIndices() const { return llvm::seq<unsigned>(0, lanes); }

  /// The counterpart of `original` in the code being built.
  mlir::Value primal(mlir::Value original) const;
  llvm::SmallVector<mlir::Value> primals(mlir::ValueRange originals) const;
  void mapPrimal(mlir::Value original, mlir::Value primal);
  /// Lane `lane` of the tangent of `original`, or null when it is zero.
  mlir::Value tangent(mlir::Value original, unsigned lane) const;
  mlir::Value tangentOrZero(mlir::Value original, unsigned lane);
  void setTangent(mlir::Value original, unsigned lane, mlir::Value tangent);

  /// The positions of the active values among `originals`.
  llvm::SmallVector<unsigned> activePositions(mlir::ValueRange originals) const;
  /// The primals of `originals` followed by the tangent lanes of those at
  /// `positions` (zeros where they have none).
  llvm::SmallVector<mlir::Value> withTangents(mlir::ValueRange originals,
                                              llvm::ArrayRef<unsigned> positions);
  /// Maps the results of `original` to the first results of `lifted`, the
  /// op built by its rule, and sets the tangent lanes of those at
  /// `positions` from the results after them.
  void mapLiftedResults(mlir::Operation *original, mlir::Operation *lifted,
                        llvm::ArrayRef<unsigned> positions);

  /// Clones `op` with its operands mapped to their primals and maps its
  /// results: the primal half of every rule whose op has no region.
  mlir::Operation *clonePrimal(mlir::Operation *op);

  /// The rule of an op that is linear in its differentiable operands (reads,
  /// writes, reshapes, scatters): clones it for the primal, and again on the
  /// tangents of those operands (zeros where they have none) for the tangent.
  mlir::LogicalResult forwardLinear(mlir::Operation *op);

  /// The forward sweep over the ops of `block` (not its terminator); its
  /// arguments must have been mapped.
  mlir::LogicalResult run(mlir::Block &block);

  /// Builds `block` with `at` in a nested scope: its arguments bound to
  /// `args` with tangent lanes `argTangents` (null: zero), the values it
  /// reads from outside to this scope's. Returns the primals of its
  /// terminator's operands and the tangent lanes of those at
  /// `tangentPositions` (zeros where they have none).
  mlir::FailureOr<Lifted> lift(mlir::ImplicitLocOpBuilder &at,
                               mlir::Block &block, mlir::ValueRange args,
                               mlir::ValueRange argTangents,
                               llvm::ArrayRef<unsigned> tangentPositions);

  // Helpers for the rules; null stands for a zero tangent.
  mlir::Value zerosLike(mlir::Value primal);
  mlir::Value add(mlir::Value x, mlir::Value y);
  mlir::Value sub(mlir::Value x, mlir::Value y);
  mlir::Value mul(mlir::Value x, mlir::Value y);
  mlir::Value neg(mlir::Value x);

private:
  mlir::ImplicitLocOpBuilder &b;
  const Activity &activityInfo;
  TangentBuilder *parent;
  mlir::SymbolTableCollection &symbols;
  unsigned lanes;
  mlir::IRMapping primalMap;
  llvm::DenseMap<std::pair<mlir::Value, unsigned>, mlir::Value> tangents;
};

/// The function `(args..., tangents of the wrt args...) -> (results...,
/// tangents of the results...)` of the Jacobian-vector product of `function`,
/// created next to it on first request; with `width` lanes, each tangent is
/// `width` values (the lanes of an argument or result together).
mlir::FailureOr<mlir::func::FuncOp>
getOrCreateJvpFunction(mlir::func::FuncOp function, llvm::ArrayRef<int64_t> wrt,
                       unsigned width, mlir::SymbolTableCollection &symbols);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_ENGINE_FORWARDENGINE_H
