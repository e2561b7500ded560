//===- SCFRules.cpp - reverse-mode rules of scf ops -----------------------===//
#include "passes/AutoDiff/Engine/Loops.h"
#include "passes/AutoDiff/Engine/SparseAdjoints.h"
#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Interfaces/RuleModel.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace soac::autodiff {

namespace {

/// Reads kept sparse in a branch of `reverse` (the backward scf.if built by
/// its rule) for the enclosing scope, one list per branch.
struct BranchReads {
  SmallVector<SparseAdjoint> then, otherwise;
};

/// `reverse` with more results: each branch's reads, yielded by both
/// branches, the one that did not make them yielding zeros of their shape
/// (that add nothing wherever they are scattered). Returns the new scf.if.
scf::IfOp yieldBranchReads(scf::IfOp reverse, const BranchReads &reads,
                           AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  SmallVector<Type> types(reverse.getResultTypes());
  for (ArrayRef<SparseAdjoint> list : {ArrayRef(reads.then),
                                       ArrayRef(reads.otherwise)})
    for (const SparseAdjoint &read : list)
      llvm::append_range(types, TypeRange{read.index.getType(),
                                          read.value.getType()});
  auto grown = scf::IfOp::create(b, types, reverse.getCondition(),
                                 /*addThenBlock=*/false,
                                 /*addElseBlock=*/false);
  grown.getThenRegion().takeBody(reverse.getThenRegion());
  grown.getElseRegion().takeBody(reverse.getElseRegion());
  for (auto [block, own] : {std::pair{grown.thenBlock(), true},
                            std::pair{grown.elseBlock(), false}}) {
    Operation *yield = block->getTerminator();
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(yield);
    SmallVector<Value> yielded(yield->getOperands());
    for (auto [list, mine] : {std::pair{ArrayRef(reads.then), own},
                              std::pair{ArrayRef(reads.otherwise), !own}})
      for (const SparseAdjoint &read : list) {
        if (mine) {
          yielded.append({read.index, read.value});
          continue;
        }
        // Of the very type of the branch's (static sizes it knows).
        SmallVector<Value> sizes = materializeBatchSizes(a, read.batch);
        for (Value part : {read.index, read.value})
          yielded.push_back(castToType(
              b, buildRecord(a, sizes, read, part, /*zeros=*/true),
              part.getType()));
      }
    yield->setOperands(yielded);
  }
  for (auto [old, result] : llvm::zip(reverse.getResults(), grown.getResults()))
    old.replaceAllUsesWith(result);
  reverse->erase();
  return grown;
}

} // namespace

/// A branch: the return sweep takes the same branch, re-executes it, sweeps
/// it backwards and yields the adjoints of the values it read from outside.
/// In a scope that keeps the reads of a free tensor sparse (a branch in a
/// map), the reads of either branch are yielded instead (the other branch
/// yielding zeros of their shape), for that scope.
LogicalResult reverseOf(scf::IfOp op, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  // Values read from outside the branches (yielded ones included).
  SmallVector<Value> free = a.activeFreeValues(op);
  SmallVector<Type> types = llvm::map_to_vector(
      free, [&](Value v) { return a.primal(v).getType(); });
  auto reverse =
      scf::IfOp::create(b, types, a.primal(op.getCondition()), true, true);
  BranchReads reads;
  SmallVector<bool> denselyRead(free.size(), false);
  for (auto [source, target, kept] :
       {std::tuple{op.thenBlock(), reverse.thenBlock(), &reads.then},
        std::tuple{op.elseBlock(), reverse.elseBlock(), &reads.otherwise}}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(target);
    SmallVector<Value> yielded;
    if (source) {
      AdjointBuilder scope(b, a.activity(), *source, &a, a.symbolTables(),
                           SparseReads::Inherit);
      scope.reexecute(*source);
      for (auto [result, value] :
           llvm::zip(op.getResults(), source->getTerminator()->getOperands()))
        scope.accumulate(value, a.adjoint(result));
      if (failed(scope.sweep(*source)))
        return failure();
      // Batches whose shape is made in the branch are added in place.
      for (const SparseAdjoint &read :
           mergeScalarReads(b, scope.sparseAdjoints())) {
        if (std::optional<SmallVector<BatchFactor>> batch =
                liftBatch(read.batch, op, *source))
          kept->push_back(
              {read.tensor, read.index, read.value, std::move(*batch)});
        else
          scatterIntoAdjoint(scope, read.tensor, read.index, read.value);
      }
      for (auto [position, value] : llvm::enumerate(free)) {
        Value adjoint = scope.outerAdjoints().lookup(value);
        denselyRead[position] = denselyRead[position] || adjoint;
        yielded.push_back(adjoint ? adjoint : a.zerosLike(a.primal(value)));
      }
    } else {
      for (Value value : free)
        yielded.push_back(a.zerosLike(a.primal(value)));
    }
    scf::YieldOp::create(b, yielded);
  }
  if (!reads.then.empty() || !reads.otherwise.empty())
    reverse = yieldBranchReads(reverse, reads, a);
  // A free value only read sparsely keeps its zeros: nothing to add.
  for (auto [position, value] : llvm::enumerate(free))
    if (denselyRead[position])
      a.accumulate(value, reverse.getResult(position));
  auto kept = reverse.getResults().drop_front(free.size()).begin();
  for (ArrayRef<SparseAdjoint> list : {ArrayRef(reads.then),
                                       ArrayRef(reads.otherwise)})
    for (const SparseAdjoint &read : list) {
      Value index = *kept++;
      Value value = *kept++;
      a.accumulateSparse(read.tensor, index, value, read.batch);
    }
  return success();
}

namespace {

/// The run of `loop` in the scope's re-executed forward code, when its
/// results are visible at the builder's insertion point (the return sweep of
/// the same scope); null otherwise.
scf::ForOp forwardRun(scf::ForOp loop, AdjointBuilder &a) {
  if (loop.getNumResults() == 0)
    return nullptr;
  auto forward = a.primal(loop.getResult(0)).getDefiningOp<scf::ForOp>();
  if (!forward || forward == loop ||
      forward.getNumResults() != loop.getNumResults())
    return nullptr;
  for (auto [original, result] :
       llvm::zip(loop.getResults(), forward.getResults()))
    if (a.primal(original) != result)
      return nullptr;
  ImplicitLocOpBuilder &b = a.builder();
  Block *insertion = b.getInsertionBlock();
  if (insertion == forward->getBlock())
    return b.getInsertionPoint() == insertion->end() ||
                   forward->isBeforeInBlock(&*b.getInsertionPoint())
               ? forward
               : nullptr;
  Operation *ancestor =
      forward->getBlock()->findAncestorOpInBlock(*insertion->getParentOp());
  return ancestor && forward->isBeforeInBlock(ancestor) ? forward : nullptr;
}

/// Whether `use` is the destination of a tensor.insert or insert_slice.
bool isWriteDestination(OpOperand &use) {
  if (auto insert = dyn_cast<tensor::InsertOp>(use.getOwner()))
    return &use == &insert.getDestMutable();
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(use.getOwner()))
    return &use == &insert.getDestMutable();
  return false;
}

/// Whether the loop only writes into its carried value `j`: the iteration
/// argument is read by nothing but tensor.dim and one insert (or
/// insert_slice) in the body as its destination, whose result is yielded as
/// value `j` and used by nothing else. The value at the start of an
/// iteration is then never observed, only its shape, which every iteration
/// keeps: the loop's stacked outputs (soac.lax.scan), whose checkpoints
/// would copy the whole stack per iteration.
bool isOnlyWritten(scf::ForOp loop, unsigned j) {
  BlockArgument arg = loop.getRegionIterArgs()[j];
  Operation *write = nullptr;
  for (OpOperand &use : arg.getUses()) {
    if (isa<tensor::DimOp>(use.getOwner()))
      continue;
    if (write || !isWriteDestination(use) ||
        use.getOwner()->getBlock() != loop.getBody())
      return false;
    write = use.getOwner();
  }
  if (!write || !write->getResult(0).hasOneUse())
    return false;
  OpOperand &yielded = *write->getResult(0).use_begin();
  return yielded.getOwner() == loop.getBody()->getTerminator() &&
         yielded.getOperandNumber() == j;
}

/// Reads of one iteration of a backward loop that the enclosing scope keeps
/// sparse: recorded per iteration (`iteration`: its index inside the
/// loop), stacked after the loop.
struct IterationRead {
  SparseAdjoint read; // its batch lifted out of the loop body
  Value iteration;
};

/// Carries records of `reads` through the backward loop `reverse`, written
/// at each iteration's index, and passes them to `a` as batches with the
/// `trips` iterations as a new outer dimension. Returns the loop that
/// replaces `reverse` (with more results).
FailureOr<scf::ForOp> stackIterationReads(scf::ForOp loop, scf::ForOp reverse,
                                          ArrayRef<IterationRead> reads,
                                          Value trips, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  SmallVector<Value> records;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(reverse);
    for (const IterationRead &r : reads) {
      SmallVector<Value> leading{trips};
      llvm::append_range(leading, materializeBatchSizes(a, r.read.batch));
      records.push_back(
          buildRecord(a, leading, r.read, r.read.index, /*zeros=*/false));
      records.push_back(
          buildRecord(a, leading, r.read, r.read.value, /*zeros=*/false));
    }
  }
  IRRewriter rewriter(b);
  unsigned carried = reverse.getNumResults();
  FailureOr<LoopLikeOpInterface> grown = reverse.replaceWithAdditionalYields(
      rewriter, records, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &nested, Location loc, ArrayRef<BlockArgument> stores) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> next;
        auto store = stores.begin();
        for (const IterationRead &r : reads) {
          next.push_back(insertRow(ib, r.read.index, *store++, r.iteration));
          next.push_back(insertRow(ib, r.read.value, *store++, r.iteration));
        }
        return next;
      });
  if (failed(grown))
    return loop.emitOpError()
           << "could not record the sparse adjoints of its iterations";
  auto stacks = (*grown)->getResults().drop_front(carried).begin();
  BatchFactor iterations{{Extent::ofValue(loop.getLowerBound()),
                          Extent::ofValue(loop.getUpperBound()),
                          Extent::ofValue(loop.getStep())}};
  for (const IterationRead &r : reads) {
    Value indices = *stacks++;
    Value values = *stacks++;
    SmallVector<BatchFactor> batch{iterations};
    llvm::append_range(batch, r.read.batch);
    a.accumulateSparse(r.read.tensor, indices, values, std::move(batch));
  }
  return cast<scf::ForOp>(grown->getOperation());
}

} // namespace

/// A loop keeps one checkpoint per iteration: the loop-carried values at the
/// start of the iteration (the only tape soac keeps), less those the loop
/// only writes into (isOnlyWritten), whose restored value would go unread. They are recorded by
/// the loop's run in the forward code when its results are visible here
/// (that run is replaced by the recording one), else by a second forward
/// run. The return sweep runs the iterations backwards; each restores its
/// checkpoint, re-executes the body forward, then sweeps it backwards,
/// carrying the adjoints of the loop-carried values and of the values the
/// body reads from outside. In a scope that keeps the reads of a free tensor
/// sparse (a loop in a map), the iterations' reads are recorded instead and
/// stacked into one batch for that scope.
LogicalResult reverseOf(scf::ForOp loop, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Block &body = *loop.getBody();
  scf::ForOp forward = forwardRun(loop, a);
  OpBuilder::InsertPoint sweepPoint = b.saveInsertionPoint();
  if (forward)
    b.setInsertionPoint(forward);
  Value lb = a.primal(loop.getLowerBound()), ub = a.primal(loop.getUpperBound());
  Value step = a.primal(loop.getStep());
  Value trips = tripCount(b, lb, ub, step);
  SmallVector<Value> inits = llvm::map_to_vector(
      loop.getInitArgs(), [&](Value v) { return a.primal(v); });

  // Forward again, saving the carried values of every iteration.
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  size_t n = inits.size();
  SmallVector<unsigned> saved;
  for (unsigned j = 0; j < n; ++j)
    if (!isOnlyWritten(loop, j))
      saved.push_back(j);
  SmallVector<Value> carried(inits);
  for (unsigned j : saved)
    carried.push_back(emptyRows(b, trips, inits[j]));
  auto record = scf::ForOp::create(
      b, zero, trips, one, carried,
      [&](OpBuilder &nested, Location loc, Value k, ValueRange state) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> stored;
        for (auto [j, store] : llvm::zip(saved, state.drop_front(n)))
          stored.push_back(insertRow(ib, state[j], store, k));
        SmallVector<Value> args{inductionValue(ib, lb, step, k)};
        llvm::append_range(args, state.take_front(n));
        SmallVector<Value> next = a.cloneBlock(ib, body, args);
        llvm::append_range(next, stored);
        scf::YieldOp::create(ib, next);
      });
  SmallVector<Value> checkpoints =
      llvm::to_vector_of<Value>(record.getResults().drop_front(n));
  if (forward) {
    for (auto [original, recorded] :
         llvm::zip(loop.getResults(), record.getResults().take_front(n)))
      a.mapPrimal(original, recorded);
    forward->replaceAllUsesWith(record.getResults().take_front(n));
    forward->erase();
    b.restoreInsertionPoint(sweepPoint);
  }

  // Backwards: the adjoints of the active carried values, then of the free
  // values the body reads.
  SmallVector<unsigned> activeCarried;
  for (auto [j, arg] : llvm::enumerate(loop.getRegionIterArgs()))
    if (a.isActive(arg))
      activeCarried.push_back(j);
  SmallVector<Value> free = a.activeFreeValues(loop);
  SmallVector<Value> adjoints;
  for (unsigned j : activeCarried)
    adjoints.push_back(a.adjointOrZero(loop.getResult(j)));
  for (Value value : free)
    adjoints.push_back(a.zerosLike(a.primal(value)));

  bool failedSweep = false;
  SmallVector<IterationRead> sparseReads;
  SmallVector<bool> denselyRead(free.size(), false);
  auto reverse = scf::ForOp::create(
      b, zero, trips, one, adjoints,
      [&](OpBuilder &nested, Location loc, Value step_, ValueRange state) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value last = arith::SubIOp::create(ib, trips, one);
        Value k = arith::SubIOp::create(ib, last, step_);
        Value iv = inductionValue(ib, lb, step, k);
        AdjointBuilder scope(ib, a.activity(), body, &a, a.symbolTables(),
                             SparseReads::Inherit);
        scope.mapPrimal(loop.getInductionVar(), iv);
        // A value only written into gets its initial value, of the same
        // shape: re-executed, the write into it is dead.
        for (auto [j, arg] : llvm::enumerate(loop.getRegionIterArgs()))
          scope.mapPrimal(arg, inits[j]);
        for (auto [j, store] : llvm::zip(saved, checkpoints))
          scope.mapPrimal(loop.getRegionIterArgs()[j], extractRow(ib, store, k));
        scope.reexecute(body);
        Operation *yield = body.getTerminator();
        for (auto [position, j] : llvm::enumerate(activeCarried))
          scope.accumulate(yield->getOperand(j), state[position]);
        // Free values accumulate into their carried adjoints, in place.
        for (auto [position, value] : llvm::enumerate(free))
          scope.seedOuterAdjoint(value, state[activeCarried.size() + position]);
        SmallVector<Value> next;
        if (failed(scope.sweep(body))) {
          failedSweep = true;
          next.assign(state.begin(), state.end());
        } else {
          // Batches of a shape that varies between iterations are added in
          // place into the carried adjoint.
          for (const SparseAdjoint &read :
               mergeScalarReads(ib, scope.sparseAdjoints())) {
            std::optional<SmallVector<BatchFactor>> batch =
                liftBatch(read.batch, loop, body);
            if (batch)
              sparseReads.push_back(
                  {{read.tensor, read.index, read.value, std::move(*batch)},
                   k});
            else
              scatterIntoAdjoint(scope, read.tensor, read.index, read.value);
          }
          for (unsigned j : activeCarried)
            next.push_back(scope.adjointOrZero(loop.getRegionIterArgs()[j]));
          for (auto [position, value] : llvm::enumerate(free)) {
            next.push_back(scope.outerAdjoints().lookup(value));
            denselyRead[position] =
                next.back() != state[activeCarried.size() + position];
          }
        }
        scf::YieldOp::create(ib, next);
      });
  if (failedSweep)
    return failure();
  if (!sparseReads.empty()) {
    FailureOr<scf::ForOp> grown =
        stackIterationReads(loop, reverse, sparseReads, trips, a);
    if (failed(grown))
      return failure();
    reverse = *grown;
  }
  for (auto [position, j] : llvm::enumerate(activeCarried))
    a.accumulate(loop.getInitArgs()[j], reverse.getResult(position));
  // A free value only read sparsely keeps its zeros: nothing to add.
  for (auto [position, value] : llvm::enumerate(free))
    if (denselyRead[position])
      a.accumulate(value, reverse.getResult(activeCarried.size() + position));
  return success();
}

/// A while loop: count its iterations, then run it again as a for loop that
/// saves the carried values before each test (one checkpoint per iteration,
/// and one for the final test), and sweep it backwards: the final test, then
/// each iteration's body and test, restored and re-executed.
LogicalResult reverseOf(scf::WhileOp loop, AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Block &before = loop.getBefore().front(), &after = loop.getAfter().front();
  auto condition = cast<scf::ConditionOp>(before.getTerminator());
  SmallVector<Value> inits = llvm::map_to_vector(
      loop.getInits(), [&](Value v) { return a.primal(v); });
  size_t n = inits.size();
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);

  // How many times the body runs.
  SmallVector<Value> counted(inits);
  counted.push_back(zero);
  SmallVector<Type> countedTypes(ValueRange(counted).getTypes());
  auto count = scf::WhileOp::create(b, countedTypes, counted);
  {
    OpBuilder::InsertionGuard guard(b);
    Block *test = b.createBlock(&count.getBefore(), {}, countedTypes,
                                SmallVector<Location>(n + 1, b.getLoc()));
    SmallVector<Value> tested =
        a.cloneBlock(b, before, test->getArguments().take_front(n));
    SmallVector<Value> forwarded(ArrayRef<Value>(tested).drop_front());
    forwarded.push_back(test->getArgument(n));
    scf::ConditionOp::create(b, tested[0], forwarded);
    SmallVector<Type> forwardedTypes(ValueRange(forwarded).getTypes());
    Block *step = b.createBlock(&count.getAfter(), {}, forwardedTypes,
                                SmallVector<Location>(forwardedTypes.size(), b.getLoc()));
    SmallVector<Value> next = a.cloneBlock(
        b, after, step->getArguments().drop_back());
    next.push_back(arith::AddIOp::create(b, step->getArguments().back(), one));
    scf::YieldOp::create(b, next);
  }
  Value trips = count.getResults().back();
  Value tests = arith::AddIOp::create(b, trips, one);

  // Checkpoints of the carried values before each of the trips + 1 tests.
  SmallVector<Value> recordState(inits);
  for (Value init : inits)
    recordState.push_back(emptyRows(b, tests, init));
  auto record = scf::ForOp::create(
      b, zero, tests, one, recordState,
      [&](OpBuilder &nested, Location loc, Value k, ValueRange state) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> next;
        SmallVector<Value> saved;
        for (auto [value, store] : llvm::zip(state.take_front(n), state.drop_front(n)))
          saved.push_back(insertRow(ib, value, store, k));
        Value last = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, k, trips);
        auto iterate = scf::IfOp::create(ib, TypeRange(state.take_front(n)), last, true, true);
        {
          OpBuilder::InsertionGuard guard(ib);
          ib.setInsertionPointToStart(iterate.thenBlock());
          scf::YieldOp::create(ib, state.take_front(n));
          ib.setInsertionPointToStart(iterate.elseBlock());
          SmallVector<Value> tested = a.cloneBlock(ib, before, state.take_front(n));
          scf::YieldOp::create(
              ib, a.cloneBlock(ib, after, ArrayRef<Value>(tested).drop_front()));
        }
        llvm::append_range(next, iterate.getResults());
        llvm::append_range(next, saved);
        scf::YieldOp::create(ib, next);
      });
  SmallVector<Value> checkpoints =
      llvm::to_vector_of<Value>(record.getResults().drop_front(n));

  SmallVector<Value> free = a.activeFreeValues(loop);
  bool failedSweep = false;
  /// Sweeps `block` (re-executed with `args`), seeding its terminator's
  /// operands from `seeds` (positions `first`...); returns the adjoints of
  /// its arguments and updates the free values' accumulators `freeAdjoints`.
  auto sweepBlock = [&](ImplicitLocOpBuilder &ib, Block &block, ValueRange args,
                        unsigned first, ValueRange seeds,
                        SmallVector<Value> &freeAdjoints) {
    AdjointBuilder scope(ib, a.activity(), block, &a, a.symbolTables(),
                         SparseReads::Never);
    for (auto [arg, value] : llvm::zip(block.getArguments(), args))
      scope.mapPrimal(arg, value);
    scope.reexecute(block);
    Operation *terminator = block.getTerminator();
    for (auto [position, seed] : llvm::enumerate(seeds))
      scope.accumulate(terminator->getOperand(first + position), seed);
    for (auto [value, adjoint] : llvm::zip(free, freeAdjoints))
      scope.seedOuterAdjoint(value, adjoint);
    if (failed(scope.sweep(block)))
      failedSweep = true;
    for (auto [value, adjoint] : llvm::zip(free, freeAdjoints))
      adjoint = scope.outerAdjoints().lookup(value);
    return llvm::map_to_vector(block.getArguments(), [&](Value arg) {
      return scope.adjointOrZero(arg);
    });
  };

  // The final test: the results are the values it forwards.
  SmallVector<Value> freeAdjoints = llvm::map_to_vector(
      free, [&](Value v) { return a.zerosLike(a.primal(v)); });
  SmallVector<Value> resultSeeds = llvm::map_to_vector(
      loop.getResults(), [&](Value r) { return a.adjointOrZero(r); });
  SmallVector<Value> finalState = llvm::map_to_vector(
      checkpoints, [&](Value store) { return extractRow(b, store, trips); });
  SmallVector<Value> carried =
      sweepBlock(b, before, finalState, 1, resultSeeds, freeAdjoints);
  if (failedSweep)
    return failure();

  // Each iteration backwards: its body, then its test.
  SmallVector<Value> state(carried);
  llvm::append_range(state, freeAdjoints);
  auto reverse = scf::ForOp::create(
      b, zero, trips, one, state,
      [&](OpBuilder &nested, Location loc, Value step, ValueRange adjoints) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value k = arith::SubIOp::create(
            ib, arith::SubIOp::create(ib, trips, one), step);
        SmallVector<Value> restored = llvm::map_to_vector(
            checkpoints, [&](Value store) { return extractRow(ib, store, k); });
        SmallVector<Value> tested = a.cloneBlock(ib, before, restored);
        SmallVector<Value> freeState(adjoints.drop_front(n));
        SmallVector<Value> forwarded = sweepBlock(
            ib, after, ArrayRef<Value>(tested).drop_front(), 0,
            adjoints.take_front(n), freeState);
        SmallVector<Value> previous =
            sweepBlock(ib, before, restored, 1, forwarded, freeState);
        llvm::append_range(previous, freeState);
        scf::YieldOp::create(ib, previous);
      });
  if (failedSweep)
    return failure();
  for (auto [init, adjoint] : llvm::zip(loop.getInits(), reverse.getResults()))
    if (a.isActive(init))
      a.accumulate(init, adjoint);
  for (auto [value, adjoint] :
       llvm::zip(free, reverse.getResults().drop_front(n)))
    a.accumulate(value, adjoint);
  return success();
}

void registerSCFRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, scf::SCFDialect *) {
    attachRules<scf::IfOp, scf::ForOp, scf::WhileOp>(context);
  });
}

} // namespace soac::autodiff
