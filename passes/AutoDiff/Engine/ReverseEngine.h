//===- ReverseEngine.h - reverse-mode AD by re-execution --------*- C++ -*-===//
//
// The engine walks scopes; the derivative of each op comes from its
// ReverseModeOpInterface rule (one rules file per dialect).
//
// No tape: the return sweep of a scope (a function body, a SOAC body, a
// branch) first re-executes the scope's forward code, then visits its ops in
// reverse order, each rule turning the adjoints of the op's results into
// contributions to the adjoints of its operands.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_ENGINE_REVERSEENGINE_H
#define SOAC_PASSES_AUTODIFF_ENGINE_REVERSEENGINE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include "passes/AutoDiff/Engine/SparseAdjoints.h"
#include "passes/AutoDiff/Interfaces/ReverseModeOpInterface.h"

#include "dialect/DerivativeSignature.h"

namespace soac::autodiff {

/// The values of a function that may carry a derivative: those computed from
/// the differentiated arguments, of a differentiable type. Conservative:
/// every differentiable result of an op that reads an active value (directly
/// or inside its regions) is active, and so are the differentiable block
/// arguments of its regions.
class Activity {
public:
  Activity(mlir::func::FuncOp function, llvm::ArrayRef<int64_t> wrt);
  bool isActive(mlir::Value value) const { return active.contains(value); }

private:
  llvm::DenseSet<mlir::Value> active;
};

/// A value computed in the body of a SOAC (`value`, original) that the SOAC's
/// run in the forward code also yields, one per row (`rows`), so that its
/// reverse rule reads it instead of computing it again.
struct Residual {
  mlir::Value value;
  mlir::Value rows;
};

/// Which free tensors a scope keeps sparse adjoints of (one (index, value)
/// per read, see SparseAdjoints.h) for its owner to stack and pass on.
enum class SparseReads {
  /// Every free tensor: the scope runs once per row (a SOAC body).
  Always,
  /// Those the enclosing scope keeps sparse: the scope runs many times (a
  /// loop body), which pays only where its owner itself runs per row.
  Inherit,
  /// None: the scope runs once (a branch), or its owner adds every read in
  /// place into a dense adjoint it carries.
  Never,
};

/// One scope of the return sweep and the API the rules build with.
class AdjointBuilder {
public:
  /// A scope over `block`, building at `builder`'s insertion point. `parent`
  /// is the enclosing scope (null for a function body). `sparseReads` says
  /// which free tensors read at computed indices get sparse adjoints.
  AdjointBuilder(mlir::ImplicitLocOpBuilder &builder, const Activity &activity,
                 mlir::Block &block, AdjointBuilder *parent,
                 mlir::SymbolTableCollection &symbols,
                 SparseReads sparseReads = SparseReads::Always);

  mlir::ImplicitLocOpBuilder &builder() { return b; }
  mlir::SymbolTableCollection &symbolTables() { return symbols; }
  const Activity &activity() const { return activityInfo; }
  /// Vector mode: the scope of a function body can sweep `width` lanes of
  /// cotangents; its forward code is re-executed once, and the return sweep
  /// runs each op's rule once per lane (nested scopes, built by the rules,
  /// have one lane: the rule's current one). Adjoints are per lane.
  void setWidth(unsigned lanes) { width = lanes; }
  void setLane(unsigned l) { lane = l; }

  /// Whether maps with scalar bodies are differentiated in mixed mode
  /// (soac-autodiff's mixed-mode option); nested scopes inherit it.
  bool mixedMode() const { return parent ? parent->mixedMode() : mixed; }
  void setMixedMode(bool enabled) { mixed = enabled; }

  bool isActive(mlir::Value original) const;
  /// The active values that `op`'s regions read from outside `op`.
  llvm::SmallVector<mlir::Value> activeFreeValues(mlir::Operation *op) const;
  /// Defined outside this scope's block (a free value of the scope).
  bool isOuter(mlir::Value original) const;

  /// The re-executed counterpart of `original`.
  mlir::Value primal(mlir::Value original) const;
  llvm::SmallVector<mlir::Value> primals(mlir::ValueRange originals) const;
  void mapPrimal(mlir::Value original, mlir::Value primal);

  /// The adjoint accumulated for `original` in this scope, or null (zero).
  mlir::Value adjoint(mlir::Value original) const;
  mlir::Value adjointOrZero(mlir::Value original);
  /// Adds `contribution` to the adjoint of `original` (ignored when
  /// inactive). The adjoint of a free value is kept apart, for the owner of
  /// the scope to combine over its iterations.
  void accumulate(mlir::Value original, mlir::Value contribution);
  /// Starts the adjoint of free value `original` from `initial` (a loop's
  /// carried accumulator), so that contributions update it in place.
  void seedOuterAdjoint(mlir::Value original, mlir::Value initial) {
    outer[original] = initial;
  }
  /// Whether reads of `original` (free in this scope) get sparse adjoints.
  bool keepsSparse(mlir::Value original) const;
  /// Adds `value` at `indices` of the adjoint of tensor `original`: sparse
  /// when this scope keeps it so, else written into its adjoint. The
  /// indices address the leading dimensions; with fewer indices than the
  /// tensor's rank, `value` is the sub-tensor there (a row for one index).
  void accumulateAt(mlir::Value original, mlir::ValueRange indices,
                    mlir::Value value);
  /// Adds a batch of reads (a 1-D tensor of `indices` as
  /// SparseAdjoint::index, stacked `values`, of the size `batch` makes) to
  /// the adjoint of tensor `original`: kept sparse for this scope's owner
  /// when this scope keeps it so, else scattered with reduce_by_index (+)
  /// into its adjoint.
  void accumulateSparse(mlir::Value original, mlir::Value indices,
                        mlir::Value values,
                        llvm::SmallVector<BatchFactor> batch);
  /// Replaces the adjoint of `original` by an updated version of it (for
  /// rules that update part of a tensor's adjoint in place).
  void replaceAdjoint(mlir::Value original, mlir::Value updated);

  /// The adjoints of the arguments of `block` (an operator, without active
  /// free values) run on `args`, given `seeds` for its terminator operands:
  /// re-executed and swept in a nested scope, built with `at`.
  mlir::FailureOr<llvm::SmallVector<mlir::Value>>
  pullBack(mlir::ImplicitLocOpBuilder &at, mlir::Block &block,
           mlir::ValueRange args, mlir::ValueRange seeds);
  /// Clones the ops of `block` with `at`, its arguments bound to `args` and
  /// the values it reads from outside to their re-executed counterparts;
  /// returns what its terminator would yield, then the clones of `alsoOf`
  /// (values of `block`).
  llvm::SmallVector<mlir::Value>
  cloneBlock(mlir::ImplicitLocOpBuilder &at, mlir::Block &block,
             mlir::ValueRange args, mlir::ValueRange alsoOf = {});

  /// Re-executes the ops of `block` (not its terminator), each as its rule
  /// says (ReverseModeOpInterface::reexecute; cloned by default). Its
  /// arguments must have been mapped; so may be results of its ops (the
  /// residuals the owner read from its forward run), which are not computed
  /// again.
  void reexecute(mlir::Block &block);
  /// Clones `op` into the forward code, on the re-executed values.
  void cloneForward(mlir::Operation &op);
  /// What the forward run of `original` (an op of this scope's block) keeps
  /// for its reverse rule; none unless its `reexecute` kept some.
  void keepResiduals(mlir::Operation *original,
                     llvm::SmallVector<Residual> residuals) {
    kept[original] = std::move(residuals);
  }
  llvm::ArrayRef<Residual> residuals(mlir::Operation *original) const {
    auto found = kept.find(original);
    return found == kept.end() ? llvm::ArrayRef<Residual>() : found->second;
  }
  /// The return sweep over the ops of `block`, last to first.
  mlir::LogicalResult sweep(mlir::Block &block);

  /// The maps of the function body whose adjoint maps also yield their
  /// results (ResultsFromAdjoint.h): their forward run keeps no residuals.
  void setResultsFromAdjoint(llvm::SmallPtrSet<mlir::Operation *, 4> maps) {
    fromAdjoint = std::move(maps);
  }
  bool resultsFromAdjoint(mlir::Operation *original) const {
    return parent ? parent->resultsFromAdjoint(original)
                  : fromAdjoint.contains(original);
  }
  /// Records that `recomputed`, yielded by an adjoint map, is `forward`, a
  /// result of the forward code (for takeResultsFromAdjoints).
  void recomputedByAdjoint(mlir::Value forward, mlir::Value recomputed) {
    if (parent)
      return parent->recomputedByAdjoint(forward, recomputed);
    recomputedPairs.push_back({forward, recomputed});
  }
  llvm::ArrayRef<std::pair<mlir::Value, mlir::Value>> recomputedResults() const {
    return recomputedPairs;
  }

  /// Adjoints of the free values, accumulated by this scope (in first-use
  /// order), and the sparse ones.
  const llvm::MapVector<mlir::Value, mlir::Value> &outerAdjoints() const {
    return outer;
  }
  llvm::ArrayRef<SparseAdjoint> sparseAdjoints() const { return sparse; }

  // Helpers for the rules.
  mlir::Value zerosLike(mlir::Value primal);
  mlir::Value add(mlir::Value a, mlir::Value b);

private:
  mlir::ImplicitLocOpBuilder &b;
  const Activity &activityInfo;
  mlir::Block &block;
  AdjointBuilder *parent;
  mlir::SymbolTableCollection &symbols;
  SparseReads sparseReads;
  bool mixed = false;
  unsigned width = 1;
  unsigned lane = 0;
  mlir::IRMapping primalMap;
  llvm::DenseMap<std::pair<mlir::Value, unsigned>, mlir::Value> adjoints;
  llvm::MapVector<mlir::Value, mlir::Value> outer;
  llvm::SmallVector<SparseAdjoint> sparse;
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<Residual>> kept;
  llvm::SmallPtrSet<mlir::Operation *, 4> fromAdjoint;
  llvm::SmallVector<std::pair<mlir::Value, mlir::Value>> recomputedPairs;
};

/// A function generated next to `function` for one of its derivatives,
/// named `@<function>__<mode>[_x<width>]_wrt_<positions>`: the existing one
/// (`fresh` false), or a new private one of `type` with an entry block
/// (`fresh` true). Fails when there is none and `function` has no body to
/// differentiate (and no custom rule, `custom`).
struct DerivativeFunction {
  mlir::func::FuncOp op;
  bool fresh;
};
mlir::FailureOr<DerivativeFunction>
getOrCreateDerivativeFunction(mlir::func::FuncOp function, llvm::StringRef mode,
                              unsigned width, llvm::ArrayRef<int64_t> wrt,
                              mlir::FunctionType type, bool custom,
                              mlir::SymbolTableCollection &symbols);

/// Erases a derivative function whose construction failed (no half-built
/// function stays behind); returns failure.
mlir::LogicalResult discardDerivative(mlir::func::FuncOp derivative,
                                      mlir::SymbolTableCollection &symbols);

/// The function `(args..., cotangents...) -> (results..., gradients...)` of
/// the vector-Jacobian product of `function` with respect to the arguments
/// `wrt`, created next to it on first request (`mixedMode`: see
/// AdjointBuilder::mixedMode). With `width` lanes each cotangent and each
/// gradient is `width` values (the lanes of a result or argument together).
mlir::FailureOr<mlir::func::FuncOp>
getOrCreateVjpFunction(mlir::func::FuncOp function, llvm::ArrayRef<int64_t> wrt,
                       mlir::SymbolTableCollection &symbols,
                       bool mixedMode = false, unsigned width = 1);

} // namespace soac::autodiff

#endif // SOAC_PASSES_AUTODIFF_ENGINE_REVERSEENGINE_H
