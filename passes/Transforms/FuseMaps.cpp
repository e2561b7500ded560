//===- FuseMaps.cpp - soac-fuse-maps --------------------------------------===//
#include "passes/Transforms/FuseMaps.h"

#include "passes/Utils/Bodies.h"
#include "passes/Transforms/Passes.h"
#include "dialect/SoacOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace soac {
#define GEN_PASS_DEF_SOACFUSEMAPS
#include "passes/Transforms/Passes.h.inc"
} // namespace soac

using namespace mlir;
using namespace soac;

namespace {

template <typename OpT>
SmallVector<Operation *> operationsOf(ArrayRef<OpT> ops) {
  return llvm::map_to_vector(ops, [](OpT op) -> Operation * { return op; });
}

/// The ops reading the results of `producer`, in block order, when all of
/// its uses are row-wise reads by ops in its block; empty otherwise.
SmallVector<Operation *> rowReadersOf(MapOp producer) {
  SmallVector<Operation *> readers;
  for (Value result : producer.getResults())
    for (OpOperand &use : result.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != producer->getBlock() || !readsRowsOf(user, use))
        return {};
      if (!llvm::is_contained(readers, user))
        readers.push_back(user);
    }
  llvm::sort(readers, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return readers;
}

/// The ops of kind OpT that read the results of `producer`, in block order,
/// when all of its uses are row-wise reads by such ops in its block and
/// there are several of them; empty otherwise.
template <typename OpT>
SmallVector<OpT> readersOf(MapOp producer) {
  SmallVector<Operation *> readers = rowReadersOf(producer);
  if (readers.size() < 2 ||
      !llvm::all_of(readers, [](Operation *op) { return isa<OpT>(op); }))
    return {};
  return llvm::map_to_vector(readers, [](Operation *op) { return cast<OpT>(op); });
}

/// The ops between the first and the last sibling that use a sibling's
/// result, directly or through one another, in block order: they move after
/// the merged op. Failure when a sibling uses one (the siblings then cannot
/// run as one op) or when one of them has side effects (it cannot move).
FailureOr<SmallVector<Operation *>>
dependentsBetween(ArrayRef<Operation *> siblings) {
  Block *block = siblings.front()->getBlock();
  DenseSet<Operation *> tainted(siblings.begin(), siblings.end());
  SmallVector<Operation *> dependents;
  for (Operation *op = siblings.front()->getNextNode();
       op != siblings.back()->getNextNode(); op = op->getNextNode()) {
    bool usesTainted = false;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        Operation *def = operand.getDefiningOp();
        Operation *ancestor = def ? block->findAncestorOpInBlock(*def) : nullptr;
        if (ancestor && ancestor != op && tainted.contains(ancestor))
          usesTainted = true;
      }
    });
    if (!usesTainted)
      continue;
    if (tainted.contains(op) || !isMemoryEffectFree(op))
      return failure();
    tainted.insert(op);
    dependents.push_back(op);
  }
  return dependents;
}

/// The siblings reading `producer` that can be merged, in block order, and
/// the ops to move after the merged op; failure when there are none.
template <typename OpT>
FailureOr<std::pair<SmallVector<OpT>, SmallVector<Operation *>>>
mergeableReaders(MapOp producer) {
  SmallVector<OpT> siblings = readersOf<OpT>(producer);
  if (siblings.empty())
    return failure();
  // A sibling map that will itself fuse into its consumers first: merging it
  // now would hide those consumers (its results would then also leave the
  // merged op), so the merge waits until it has (the merged op is then a
  // sibling in its place).
  if constexpr (std::is_same_v<OpT, MapOp>)
    if (llvm::any_of(siblings, [](MapOp map) { return waitsForMapFusion(map); }))
      return failure();
  FailureOr<SmallVector<Operation *>> dependents =
      dependentsBetween(operationsOf<OpT>(siblings));
  if (failed(dependents))
    return failure();
  return std::make_pair(siblings, *dependents);
}

/// Arithmetic ops per element up to which a map is recomputed by each of its
/// readers rather than materialized: a few flops cost less than writing its
/// rows and reading them back. (The forward sweep of the Rosenbrock HVP's
/// gradient, 11 ops for two results, is worth recomputing: the HVP of 1.6
/// million elements took 6.7 ms materialized, 4.5-4.9 ms recomputed.)
constexpr int64_t kMaxRecomputedOps = 16;

} // namespace

bool soac::cheapToRecompute(MapOp map) {
  int64_t arithmetic = 0;
  WalkResult walk = map.getBody().walk([&](Operation *op) {
    if (isa<MapOp, YieldOp, tensor::DimOp, tensor::SplatOp, tensor::ExtractOp,
            CheckIndexOp>(op))
      return WalkResult::advance();
    if (isa<arith::ArithDialect>(op->getDialect()) &&
        ++arithmetic <= kMaxRecomputedOps)
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !walk.wasInterrupted();
}

namespace {

/// The readers of `producer` that each get their own copy of it, in block
/// order: SOACs reading a cheap map without side effects, of different
/// kinds or of one kind but one reading another's result (readers of one
/// kind are merged otherwise). Each copy then fuses into its reader, so no
/// row of `producer` is stored. Empty when that does not apply. Gradients
/// make the second case: the adjoint of x[1:] and x[:-1] adds one reader's
/// rows into a tensor that the other then reads. With `evenWhenMergeable`,
/// a map of scalars is copied per reader whatever its readers (the GPU
/// lowering, which does not merge SOACs, fuses each copy into its reader's
/// kernel).
SmallVector<Operation *> recomputingReaders(MapOp producer,
                                            bool evenWhenMergeable = false) {
  SmallVector<Operation *> readers = rowReadersOf(producer);
  if (readers.size() < 2 || !isMemoryEffectFree(producer) ||
      !cheapToRecompute(producer))
    return {};
  if (evenWhenMergeable)
    return hasScalarRows(producer) ? readers : SmallVector<Operation *>{};
  auto oneKind = [&](auto isKind) { return llvm::all_of(readers, isKind); };
  bool mergeable =
      (oneKind([](Operation *op) { return isa<MapOp>(op); }) ||
       oneKind([](Operation *op) { return isa<ReduceOp>(op); })) &&
      succeeded(dependentsBetween(readers));
  if (mergeable)
    return {};
  return readers;
}

/// Appends to `body` one argument per argument of `old` in [from, to), mapped.
void addArguments(Block &body, Block &old, unsigned from, unsigned to,
                  IRMapping &mapping) {
  for (BlockArgument arg : old.getArguments().slice(from, to - from))
    mapping.map(arg, body.addArgument(arg.getType(), arg.getLoc()));
}

/// Clones the bodies of `olds` into `body` (whose arguments are mapped) and
/// yields what they yield, in order.
void cloneBodies(PatternRewriter &rewriter, Location loc, Block &body,
                 ArrayRef<Block *> olds, IRMapping &mapping) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToEnd(&body);
  SmallVector<Value> yielded;
  for (Block *old : olds) {
    for (Operation &op : old->without_terminator())
      rewriter.clone(op, mapping);
    for (Value value : old->getTerminator()->getOperands())
      yielded.push_back(mapping.lookupOrDefault(value));
  }
  YieldOp::create(rewriter, loc, yielded);
}

SmallVector<Block *> bodiesOf(ArrayRef<Operation *> ops) {
  return llvm::map_to_vector(
      ops, [](Operation *op) { return &op->getRegion(0).front(); });
}

/// One map over the inputs of all `siblings`, yielding all their rows.
Operation *merge(PatternRewriter &rewriter, ArrayRef<MapOp> siblings) {
  SmallVector<Value> inputs;
  SmallVector<Type> types;
  for (MapOp map : siblings) {
    llvm::append_range(inputs, map.getInputs());
    llvm::append_range(types, map.getResultTypes());
  }
  SmallVector<Operation *> ops = operationsOf(siblings);
  Location loc = ops.front()->getLoc();
  auto merged = MapOp::create(rewriter, loc, types, inputs);
  Block &body = merged.getBody().emplaceBlock();
  IRMapping mapping;
  for (Block *old : bodiesOf(ops))
    addArguments(body, *old, 0, old->getNumArguments(), mapping);
  cloneBodies(rewriter, loc, body, bodiesOf(ops), mapping);
  return merged;
}

/// One reduce of the inputs of all `siblings` from all their neutral
/// elements, whose operator combines each sibling's operands with that
/// sibling's operator (so it stays associative).
Operation *merge(PatternRewriter &rewriter, ArrayRef<ReduceOp> siblings) {
  SmallVector<Value> inputs, inits;
  for (ReduceOp reduce : siblings) {
    llvm::append_range(inputs, reduce.getInputs());
    llvm::append_range(inits, reduce.getInits());
  }
  SmallVector<Operation *> ops = operationsOf(siblings);
  Location loc = ops.front()->getLoc();
  auto merged = ReduceOp::create(rewriter, loc, TypeRange(ValueRange(inits)),
                                 inputs, inits);
  Block &body = merged.getBody().emplaceBlock();
  IRMapping mapping;
  // The operator's arguments: every accumulator, then every row.
  for (Block *old : bodiesOf(ops))
    addArguments(body, *old, 0, old->getNumArguments() / 2, mapping);
  for (Block *old : bodiesOf(ops))
    addArguments(body, *old, old->getNumArguments() / 2,
                 old->getNumArguments(), mapping);
  cloneBodies(rewriter, loc, body, bodiesOf(ops), mapping);
  return merged;
}

/// The map reading `producer` when it is the only op reading it, row by
/// row (the producer fuses into it); null otherwise.
MapOp consumerMapOf(MapOp producer) {
  if (producer->use_empty())
    return nullptr;
  auto consumer = dyn_cast<MapOp>(*producer->getUsers().begin());
  return consumer && fusableProducer(producer.getResult(0), consumer) == producer
             ? consumer
             : nullptr;
}

/// A map read only by one map becomes part of it: its inputs become the
/// consumer's, its body runs first in the consumer's body.
struct FuseIntoMap : OpRewritePattern<MapOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MapOp consumer,
                                PatternRewriter &rewriter) const override {
    for (Value input : consumer.getInputs()) {
      MapOp producer = fusableProducer(input, consumer);
      if (!producer)
        continue;
      SmallVector<Value> inputs;
      for (Value other : consumer.getInputs())
        if (other.getDefiningOp() != producer.getOperation())
          inputs.push_back(other);
      llvm::append_range(inputs, producer.getInputs());
      auto fused = MapOp::create(rewriter, consumer.getLoc(),
                                 consumer.getResultTypes(), inputs);
      Block &body = fused.getBody().emplaceBlock();
      Block &consumerBody = consumer.getBody().front();
      Block &producerBody = producer.getBody().front();
      IRMapping mapping;
      for (auto [other, arg] :
           llvm::zip(consumer.getInputs(), consumerBody.getArguments()))
        if (other.getDefiningOp() != producer.getOperation())
          mapping.map(arg, body.addArgument(arg.getType(), arg.getLoc()));
      addArguments(body, producerBody, 0, producerBody.getNumArguments(),
                   mapping);
      {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToEnd(&body);
        for (Operation &op : producerBody.without_terminator())
          rewriter.clone(op, mapping);
        // The consumer's rows of the producer's results are what the
        // producer's body yields.
        for (auto [other, arg] :
             llvm::zip(consumer.getInputs(), consumerBody.getArguments()))
          if (other.getDefiningOp() == producer.getOperation())
            mapping.map(arg, mapping.lookupOrDefault(
                                 producerBody.getTerminator()->getOperand(
                                     cast<OpResult>(other).getResultNumber())));
      }
      cloneBodies(rewriter, consumer.getLoc(), body, {&consumerBody}, mapping);
      rewriter.replaceOp(consumer, fused.getResults());
      rewriter.eraseOp(producer);
      return success();
    }
    return rewriter.notifyMatchFailure(consumer, "no map to fuse");
  }
};

/// A cheap map read by SOACs of different kinds is copied once per reader
/// (each copy computing the results that reader reads), so that every copy
/// fuses into its reader. Rooted at the readers, so that this happens before
/// any of them is lowered.
template <typename OpT>
struct RecomputeForReaders : OpRewritePattern<OpT> {
  RecomputeForReaders(MLIRContext *context, PatternBenefit benefit,
                      bool evenWhenMergeable)
      : OpRewritePattern<OpT>(context, benefit),
        evenWhenMergeable(evenWhenMergeable) {}

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    for (Value operand : op->getOperands()) {
      auto producer = operand.template getDefiningOp<MapOp>();
      if (!producer)
        continue;
      SmallVector<Operation *> readers =
          recomputingReaders(producer, evenWhenMergeable);
      if (readers.empty())
        continue;
      rewriter.setInsertionPoint(producer);
      for (Operation *reader : readers) {
        SmallVector<bool> read = llvm::map_to_vector(
            producer.getResults(),
            [&](Value r) { return llvm::is_contained(r.getUsers(), reader); });
        SmallVector<bool> allInputs(producer.getInputs().size(), true);
        MapOp copy = copyMap(rewriter, producer, allInputs, read);
        auto next = copy.getResults().begin();
        for (auto [result, kept] : llvm::zip(producer.getResults(), read))
          if (kept)
            rewriter.replaceUsesWithIf(result, *next++, [&](OpOperand &use) {
              return use.getOwner() == reader;
            });
      }
      rewriter.eraseOp(producer);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "reads no map to recompute");
  }

  bool evenWhenMergeable;
};

template <typename OpT>
struct MergeSiblings : OpRewritePattern<OpT> {
  using OpRewritePattern<OpT>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpT op,
                                PatternRewriter &rewriter) const override {
    for (Value input : op.getInputs()) {
      auto producer = input.template getDefiningOp<MapOp>();
      if (!producer)
        continue;
      auto mergeable = mergeableReaders<OpT>(producer);
      if (failed(mergeable))
        continue;
      auto &[siblings, dependents] = *mergeable;
      SmallVector<Operation *> ops = operationsOf<OpT>(siblings);
      // The merged op takes the last sibling's place: every operand is
      // defined by then, and what read the earlier siblings' results moves
      // after it.
      Operation *last = ops.back();
      rewriter.setInsertionPoint(last);
      Operation *merged = merge(rewriter, siblings);
      Operation *after = last;
      for (Operation *dependent : dependents) {
        rewriter.moveOpAfter(dependent, after);
        after = dependent;
      }
      unsigned next = 0;
      for (Operation *sibling : ops) {
        unsigned count = sibling->getNumResults();
        rewriter.replaceOp(sibling, merged->getResults().slice(next, count));
        next += count;
      }
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no siblings to merge with");
  }
};

struct SoacFuseMapsPass : soac::impl::SoacFuseMapsBase<SoacFuseMapsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMapFusionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

bool soac::waitsForMapFusion(MapOp producer) {
  return consumerMapOf(producer) ||
         succeeded(mergeableReaders<MapOp>(producer)) ||
         succeeded(mergeableReaders<ReduceOp>(producer)) ||
         !recomputingReaders(producer).empty();
}

void soac::populateRecomputePerReaderPatterns(RewritePatternSet &patterns,
                                              PatternBenefit benefit,
                                              bool evenWhenMergeable) {
  patterns.add<RecomputeForReaders<MapOp>, RecomputeForReaders<ReduceOp>,
               RecomputeForReaders<ScanOp>, RecomputeForReaders<ScatterOp>,
               RecomputeForReaders<ReduceByIndexOp>>(
      patterns.getContext(), benefit, evenWhenMergeable);
}

void soac::populateMapFusionPatterns(RewritePatternSet &patterns,
                                     PatternBenefit benefit) {
  patterns.add<MergeSiblings<MapOp>, MergeSiblings<ReduceOp>, FuseIntoMap>(
      patterns.getContext(), benefit);
  populateRecomputePerReaderPatterns(patterns, benefit,
                                     /*evenWhenMergeable=*/false);
}
