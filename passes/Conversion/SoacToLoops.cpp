//===- SoacToLoops.cpp - soac ops to linalg/scf/tensor loops --------------===//
//
// Every soac op becomes loops over its outer dimension, still on tensors. Bodies
// are cloned into the loops (never moved), so one mechanism serves both the op's
// own body and the body of a map fused into it (see RowReader).
//
//===----------------------------------------------------------------------===//

#include "dialect/SoacOps.h"
#include "passes/Passes.h"
#include "passes/Bodies.h"
#include "passes/Rows.h"
#include "passes/Fusion.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

namespace soac {
#define GEN_PASS_DEF_CONVERTSOACTOLOOPS
#include "passes/Passes.h.inc"
} // namespace soac

using namespace mlir;
using namespace soac;

namespace {

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

Value indexConstant(ImplicitLocOpBuilder &b, int64_t value) {
  return arith::ConstantIndexOp::create(b, value);
}

/// Marks the scf.for loops this conversion creates over the rows of a SOAC
/// (folds, scans, scatters, sequential maps), and the scf.if running a map's
/// body on its first row for its row sizes: what runs inside runs per row.
constexpr llvm::StringLiteral kRowLoopAttr = "soac.row_loop";

scf::ForOp markRowLoop(scf::ForOp loop) {
  loop->setAttr(kRowLoopAttr, UnitAttr::get(loop.getContext()));
  return loop;
}

/// True when `op` runs once per row of another SOAC (inside its body or
/// operator, before or after that SOAC is lowered): it is then lowered to
/// sequential loops, the enclosing op providing the parallelism. (A map
/// inside a reduce operator, parallel on its own, would start a parallel
/// region per row of the reduce.)
bool isNestedInParallelOp(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<MapOp, ReduceOp, ScanOp, ReduceByIndexOp, linalg::GenericOp,
            scf::ForallOp, scf::ParallelOp>(parent) ||
        parent->hasAttr(kRowLoopAttr))
      return true;
  return false;
}

/// True when `op` is in the body of a SOAC not lowered yet. SOACs are lowered
/// from the outside in: bodies are cloned into loops first, so that a nested
/// SOAC is lowered where it finally runs (reading loop-carried tensors it may
/// update in place, next to the siblings it may merge with).
bool waitsForEnclosingSoac(Operation *op) {
  Operation *parent = op->getParentOp();
  return parent && isa<SoacDialect>(parent->getDialect());
}

/// Reads row `i` of a consumer's operand tensors. Rows of a fusable map's
/// result are recomputed from the rows of the map's inputs (recursively), so
/// the map's result tensor is never materialized.
class RowReader {
public:
  RowReader(ValueRange tensors, Operation *consumer)
      : tensors(tensors), consumer(consumer) {}

  /// The common outer size of the tensors read, looked up through fused maps
  /// (reading a fused map's result size would keep the map alive). Sizes that
  /// may differ at run time are compared: a mismatch stops the call with a
  /// message naming the op instead of reading out of bounds (a failed
  /// cf.assert: soac-lower-checks on the CPU).
  Value size(ImplicitLocOpBuilder &b) const {
    SmallVector<Value> sizes;
    collectSizes(b, tensors, consumer, sizes);
    for (Value other : ArrayRef<Value>(sizes).drop_front()) {
      if (getConstantIntValue(other) && getConstantIntValue(sizes.front()))
        continue; // the verifier has compared static sizes
      Value same = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                         sizes.front(), other);
      cf::AssertOp::create(b, same, mismatchMessage());
    }
    for (Value size : sizes)
      if (getConstantIntValue(size))
        return size;
    return sizes.front();
  }

  /// Row `i` of each tensor; non-null entries of `known` are rows the
  /// caller already has (see seedInputs), taken instead of read.
  SmallVector<Value> rowsAt(ImplicitLocOpBuilder &b, Value i,
                            ArrayRef<Value> known = {}) const {
    DenseMap<Operation *, SmallVector<Value>> fusedRows;
    SmallVector<Value> rows;
    for (auto [k, t] : llvm::enumerate(tensors))
      rows.push_back(k < known.size() && known[k]
                         ? known[k]
                         : rowOf(b, t, consumer, i, fusedRows));
    return rows;
  }

  /// The fused maps, erased once the consumer is replaced.
  SmallVector<MapOp> fusedMaps() const {
    SmallVector<MapOp> maps;
    collectFused(tensors, consumer, maps);
    return maps;
  }

private:
  /// The outer size of each tensor actually read: fused maps contribute the
  /// sizes of their own inputs.
  static void collectSizes(ImplicitLocOpBuilder &b, ValueRange tensors,
                           Operation *consumer, SmallVector<Value> &sizes) {
    for (Value tensor : tensors) {
      if (MapOp map = fusableProducer(tensor, consumer)) {
        collectSizes(b, map.getInputs(), map, sizes);
        continue;
      }
      auto type = cast<RankedTensorType>(tensor.getType());
      sizes.push_back(type.isDynamicDim(0)
                          ? Value(tensor::DimOp::create(b, tensor, 0))
                          : indexConstant(b, type.getDimSize(0)));
    }
  }

  std::string mismatchMessage() const {
    std::string message;
    llvm::raw_string_ostream os(message);
    if (consumer) {
      if (auto file = dyn_cast<FileLineColLoc>(consumer->getLoc()))
        os << file.getFilename().getValue() << ":" << file.getLine() << ":"
           << file.getColumn();
      else
        os << consumer->getLoc();
      os << ": '" << consumer->getName() << "': ";
    }
    os << "operands have different outer sizes";
    return message;
  }

  static Value rowOf(ImplicitLocOpBuilder &b, Value tensor, Operation *consumer,
                     Value i,
                     DenseMap<Operation *, SmallVector<Value>> &fusedRows) {
    if (MapOp map = fusableProducer(tensor, consumer)) {
      if (!fusedRows.count(map)) {
        SmallVector<Value> inputRows = llvm::map_to_vector(
            map.getInputs(),
            [&](Value in) { return rowOf(b, in, map, i, fusedRows); });
        fusedRows[map] = inlineBody(b, map.getBody(), inputRows);
      }
      return fusedRows[map][cast<OpResult>(tensor).getResultNumber()];
    }
    return extractRow(b, tensor, i);
  }

  static void collectFused(ValueRange tensors, Operation *consumer,
                           SmallVector<MapOp> &maps) {
    for (Value tensor : tensors)
      if (MapOp map = fusableProducer(tensor, consumer))
        if (!llvm::is_contained(maps, map)) {
          maps.push_back(map);
          collectFused(map.getInputs(), map, maps);
        }
  }

private:
  SmallVector<Value> tensors;
  Operation *consumer;
};

/// `tensor.empty` of `type` whose outer size is `outer` and whose other
/// dynamic sizes are `innerSizes` (in order).
Value emptyTensor(ImplicitLocOpBuilder &b, RankedTensorType type, Value outer,
                  ValueRange innerSizes = {}) {
  SmallVector<Value> dynamic;
  if (type.isDynamicDim(0))
    dynamic.push_back(outer);
  llvm::append_range(dynamic, innerSizes);
  return tensor::EmptyOp::create(b, type, dynamic);
}

using IndexedBody =
    function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value)>;

/// The body of a loop that writes row i of its outputs, given i and, for each
/// output that is `seeded` (it starts as an input's tensor, see seedInputs),
/// its row i as it is before the body writes it (null for the others).
using SeededBody = function_ref<SmallVector<Value>(ImplicitLocOpBuilder &,
                                                   Value, ArrayRef<Value>)>;

/// Row i of each seeded output (null for the others).
SmallVector<Value> seededRows(ImplicitLocOpBuilder &b, ValueRange outputs,
                              ArrayRef<bool> seeded, Value i) {
  SmallVector<Value> rows;
  for (auto [out, isSeeded] : llvm::zip(outputs, seeded))
    rows.push_back(isSeeded ? extractRow(b, out, i) : Value());
  return rows;
}

/// Elements a parallel loop must process to repay entering a parallel region
/// (microseconds of waking and joining threads): below, a sequential loop
/// runs instead. Sizes are dynamic, so the choice is made at run time.
constexpr int64_t kMinParallelWork = 1 << 14;

/// The OpenMP runtime's thread count (what soac.set_num_threads sets),
/// declared in the module by the pass once a pattern has called it.
constexpr StringLiteral kMaxThreadsFunction = "omp_get_max_threads";

/// The number of threads parallel loops will run on, as an index.
Value maxThreads(ImplicitLocOpBuilder &b) {
  auto call = func::CallOp::create(b, kMaxThreadsFunction, b.getI32Type(),
                                   ValueRange{});
  return arith::IndexCastOp::create(b, b.getIndexType(), call.getResult(0));
}

/// An scf.if running `build(parallel = true)` when `work` (elements) reaches
/// kMinParallelWork and there is more than one thread, else
/// `build(parallel = false)`: on one thread the parallel forms would only
/// add their costs (chunk partials, an OpenMP region per loop). Without
/// OpenMP, only `build(false)`.
SmallVector<Value>
chooseByWork(ImplicitLocOpBuilder &b, const ConvertSoacToLoopsOptions &options,
             Value work, TypeRange types,
             function_ref<SmallVector<Value>(bool parallel)> build) {
  if (!options.openmp)
    return build(false);
  Value enoughWork = arith::CmpIOp::create(
      b, arith::CmpIPredicate::uge, work, indexConstant(b, kMinParallelWork));
  Value threads = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                        maxThreads(b), indexConstant(b, 1));
  Value enough = arith::AndIOp::create(b, enoughWork, threads);
  auto choice = scf::IfOp::create(b, types, enough, true, true);
  for (auto [block, parallel] :
       {std::pair{choice.thenBlock(), true}, {choice.elseBlock(), false}}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(block);
    scf::YieldOp::create(b, build(parallel));
  }
  return llvm::to_vector_of<Value>(choice.getResults());
}

/// `n` times the number of elements of `tensor` from dimension `fromDim`
/// on: the work of n rows shaped like `tensor` (fromDim 0) or like its rows
/// (fromDim 1).
Value timesElements(ImplicitLocOpBuilder &b, Value n, Value tensor,
                    int64_t fromDim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  Value work = n;
  for (int64_t d = fromDim; d < type.getRank(); ++d)
    work = arith::MulIOp::create(
        b, work,
        type.isDynamicDim(d) ? Value(tensor::DimOp::create(b, tensor, d))
                             : indexConstant(b, type.getDimSize(d)));
  return work;
}

/// `outputs` with element i replaced by `body(i)` for i in [0, n), scalar
/// rows. Parallel: a linalg.generic with only outputs whose body reads what
/// it needs at linalg.index 0 (a seeded output's old element is its block
/// argument). Sequential: an scf.for inserting into the outputs.
SmallVector<Value> tabulateInto(ImplicitLocOpBuilder &b, Value n,
                                ValueRange outputs, ArrayRef<bool> seeded,
                                bool parallel, SeededBody body) {
  if (!parallel) {
    auto loop = markRowLoop(scf::ForOp::create(
        b, indexConstant(b, 0), n, indexConstant(b, 1), outputs,
        [&](OpBuilder &nested, Location loc, Value i, ValueRange outs) {
          ImplicitLocOpBuilder ib(loc, nested);
          SmallVector<Value> values =
              body(ib, i, seededRows(ib, outs, seeded, i));
          SmallVector<Value> updated;
          for (auto [value, out] : llvm::zip(values, outs))
            updated.push_back(tensor::InsertOp::create(ib, value, out, i));
          scf::YieldOp::create(ib, updated);
        }));
    return llvm::to_vector_of<Value>(loop.getResults());
  }
  SmallVector<AffineMap> maps(outputs.size(), b.getMultiDimIdentityMap(1));
  auto generic = linalg::GenericOp::create(
      b, outputs.getTypes(), ValueRange{}, outputs, maps,
      {utils::IteratorType::parallel},
      [&](OpBuilder &nested, Location loc, ValueRange elements) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value i = linalg::IndexOp::create(ib, 0);
        SmallVector<Value> old;
        for (auto [element, isSeeded] : llvm::zip(elements, seeded))
          old.push_back(isSeeded ? element : Value());
        linalg::YieldOp::create(ib, body(ib, i, old));
      });
  return llvm::to_vector_of<Value>(generic.getResults());
}

/// Tensors `result[i] = body(i)` for i in [0, n), with scalar rows, in new
/// tensors.
SmallVector<Value> tabulate(ImplicitLocOpBuilder &b, Value n,
                            TypeRange resultTypes, bool parallel,
                            IndexedBody body) {
  SmallVector<Value> outputs = llvm::map_to_vector(resultTypes, [&](Type t) {
    return emptyTensor(b, cast<RankedTensorType>(t), n);
  });
  SmallVector<bool> seeded(outputs.size(), false);
  return tabulateInto(b, n, outputs, seeded, parallel,
                      [&](ImplicitLocOpBuilder &ib, Value i, ArrayRef<Value>) {
                        return body(ib, i);
                      });
}

/// Folds rows [lo, hi) into `accumulators` with the operator region `op`
/// (reassociable: see inlineBody).
SmallVector<Value> foldRange(ImplicitLocOpBuilder &b, Region &op,
                             const RowReader &rows, Value lo, Value hi,
                             ValueRange accumulators) {
  auto loop = markRowLoop(scf::ForOp::create(
      b, lo, hi, indexConstant(b, 1), accumulators,
      [&](OpBuilder &nested, Location loc, Value i, ValueRange accs) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> args(accs);
        llvm::append_range(args, rows.rowsAt(ib, i));
        scf::YieldOp::create(ib, inlineBody(ib, op, args, /*reassociate=*/true));
      }));
  return llvm::to_vector_of<Value>(loop.getResults());
}

/// The bounds of chunk `c` of `n` rows cut into chunks of `chunkSize`.
std::pair<Value, Value> chunkBounds(ImplicitLocOpBuilder &b, Value c,
                                    Value chunkSize, Value n) {
  Value lo = arith::MinUIOp::create(b, arith::MulIOp::create(b, c, chunkSize), n);
  Value hi = arith::MinUIOp::create(b, arith::AddIOp::create(b, lo, chunkSize), n);
  return {lo, hi};
}

/// 1-D tensor types of dynamic size with the given element types.
SmallVector<Type> vectorTypes(TypeRange elementTypes) {
  return llvm::map_to_vector(elementTypes, [&](Type t) -> Type {
    return RankedTensorType::get({ShapedType::kDynamic}, t);
  });
}

bool allScalar(TypeRange types) {
  return llvm::none_of(types, llvm::IsaPred<RankedTensorType>);
}

/// Replaces the results of `op` (a null replacement: a result nobody reads
/// any more), erases it and the maps fused into it.
void replaceAndEraseFused(PatternRewriter &rewriter, Operation *op,
                          ValueRange replacements, const RowReader &rows) {
  SmallVector<MapOp> fused = rows.fusedMaps();
  for (auto [result, replacement] : llvm::zip(op->getResults(), replacements))
    if (replacement)
      rewriter.replaceAllUsesWith(result, replacement);
  rewriter.eraseOp(op);
  for (MapOp map : fused) // producers before their own producers
    rewriter.eraseOp(map);
}

/// Whether `reduce` reads only rows of results of `map` that nothing else
/// reads, and its neutral elements and the values its operator captures
/// are defined before `map`: it can then run as part of map's loop.
bool foldsOnlyRowsOf(ReduceOp reduce, MapOp map) {
  for (Value input : reduce.getInputs()) {
    if (input.getDefiningOp() != map.getOperation())
      return false;
    for (OpOperand &use : input.getUses())
      if (use.getOwner() != reduce.getOperation() ||
          !readsRowsOf(reduce, use))
        return false;
  }
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(reduce.getBody(), captured);
  captured.insert(reduce.getInits().begin(), reduce.getInits().end());
  DominanceInfo dominance;
  return llvm::all_of(captured, [&](Value value) {
    return dominance.properlyDominates(value, map);
  });
}

/// A reduce, in the block of a map lowered to a sequential loop, that folds
/// rows of map's results nothing else reads while map's other results are
/// read elsewhere (else the map fuses into the reduce). The map's loop also
/// folds the reduce (Futhark's redomap with map outputs), so the rows it
/// folds are never stored. Null when there is none.
ReduceOp foldedReduce(MapOp map) {
  if (!isNestedInParallelOp(map) || waitsForFusion(map))
    return nullptr;
  for (Operation *user : map->getUsers()) {
    auto reduce = dyn_cast<ReduceOp>(user);
    if (reduce && reduce->getBlock() == map->getBlock() &&
        foldsOnlyRowsOf(reduce, map))
      return reduce;
  }
  return nullptr;
}

/// Whether `reduce` is folded in the loop of the map it reads (foldedReduce).
bool foldedWithItsMap(ReduceOp reduce) {
  auto map = reduce.getInputs().front().getDefiningOp<MapOp>();
  return map && foldedReduce(map) == reduce;
}

/// "file:line:col: `what`", the message of a failed check at `loc`.
std::string checkMessage(Location loc, StringRef what) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn() << ": ";
  os << what;
  return message;
}

/// A row written into `dest` must have the shape of dest's rows, which come
/// from row 0 (arrays are regular): a body yielding rows whose sizes depend
/// on the data would otherwise write past its slot. Dimensions static on
/// both sides were compared by the verifier.
void assertRowFits(ImplicitLocOpBuilder &b, Value row, Value dest) {
  auto rowTensor = dyn_cast<RankedTensorType>(row.getType());
  if (!rowTensor)
    return;
  auto destTensor = cast<RankedTensorType>(dest.getType());
  for (int64_t d = 0; d < rowTensor.getRank(); ++d) {
    if (!rowTensor.isDynamicDim(d) && !destTensor.isDynamicDim(d + 1))
      continue;
    Value same = arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq, tensor::DimOp::create(b, row, d),
        tensor::DimOp::create(b, dest, d + 1));
    cf::AssertOp::create(
        b, same, checkMessage(b.getLoc(), "rows of different sizes"));
  }
}

/// The tensor.empty a row is computed in, following destinations back
/// (loops' initial values, inserts' and destination-style ops' outputs): the
/// one eliminate-empty-tensors replaces by the row's slice of its result.
tensor::EmptyOp emptyRowIsComputedIn(Value row) {
  while (row) {
    Operation *op = row.getDefiningOp();
    if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(op))
      return empty;
    if (auto loop = dyn_cast_or_null<scf::ForOp>(op))
      row = loop.getInitArgs()[cast<OpResult>(row).getResultNumber()];
    else if (auto insert = dyn_cast_or_null<tensor::InsertOp>(op))
      row = insert.getDest();
    else if (auto insert = dyn_cast_or_null<tensor::InsertSliceOp>(op))
      row = insert.getDest();
    else if (auto dps = dyn_cast_or_null<DestinationStyleOpInterface>(op))
      row = dps.getTiedOpOperand(cast<OpResult>(row))->get();
    else
      return {};
  }
  return {};
}

/// A row computed in place in its slot of a result (eliminate-empty-tensors
/// gives the row's tensor.empty the slot's sizes, known before the row) is
/// written with those sizes while the body computes it: a body whose rows
/// have sizes that depend on the data would write past the slot before
/// assertRowFits runs. So the sizes of such a tensor.empty are compared with
/// the slot's, before the row is computed.
template <typename InsertOp>
void checkRowsComputedInPlace(InsertOp insert, DominanceInfo &dominance) {
  tensor::EmptyOp empty = emptyRowIsComputedIn(insert.getSource());
  auto destRank = cast<RankedTensorType>(insert.getDest().getType()).getRank();
  if (!empty || destRank != empty.getType().getRank() + 1)
    return;
  SmallVector<OpFoldResult> sizes = insert.getMixedSizes();
  ImplicitLocOpBuilder b(empty.getLoc(), empty);
  for (int64_t d = 0; d < empty.getType().getRank(); ++d) {
    if (!empty.getType().isDynamicDim(d))
      continue;
    auto slot = dyn_cast<Value>(sizes[d + 1]);
    if (slot && !dominance.properlyDominates(slot, empty))
      continue; // the slot's size comes later: no elimination
    Value expected = getValueOrCreateConstantIndexOp(b, b.getLoc(), sizes[d + 1]);
    Value same = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                       empty.getDynamicSize(d), expected);
    cf::AssertOp::create(
        b, same, checkMessage(insert.getLoc(), "rows of different sizes"));
  }
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// Writes each row into its output at row `i` from an scf.forall body:
/// everything the inserts need is computed first, since the terminator
/// (scf.forall.in_parallel) may hold nothing but the inserts.
/// Rows with a non-null entry in `oldRows` (seeded outputs) are written with
/// the sizes of the slice they were read from, so that after bufferization
/// the write is a copy of that slice onto itself, which folds away.
void parallelInsertRows(ImplicitLocOpBuilder &b, ValueRange rows,
                        ValueRange outputs, Value i,
                        ArrayRef<Value> oldRows = {}) {
  SmallVector<Value> sources;
  SmallVector<SmallVector<OpFoldResult>> sizes;
  for (auto [k, row] : llvm::enumerate(rows)) {
    SmallVector<OpFoldResult> rowSizes{b.getIndexAttr(1)};
    if (isa<RankedTensorType>(row.getType())) {
      Value shapedLike = k < oldRows.size() && oldRows[k] ? oldRows[k] : row;
      llvm::append_range(rowSizes,
                         tensor::getMixedSizes(b, b.getLoc(), shapedLike));
    } else {
      // A scalar row goes in as a one-element tensor.
      row = tensor::FromElementsOp::create(
          b, RankedTensorType::get({1}, row.getType()), ValueRange{row});
    }
    sources.push_back(row);
    sizes.push_back(rowSizes);
  }
  for (auto [row, out] : llvm::zip(sources, outputs))
    assertRowFits(b, row, out);
  auto inParallel = scf::InParallelOp::create(b);
  b.setInsertionPointToStart(inParallel.getBody());
  for (auto [source, rowSizes, out] : llvm::zip(sources, sizes, outputs)) {
    int64_t rank = cast<RankedTensorType>(out.getType()).getRank();
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    offsets[0] = i;
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    tensor::ParallelInsertSliceOp::create(b, source, out, offsets, rowSizes,
                                          strides);
  }
}

/// `outputs` with row i replaced by `body(i)`, for i in [0, n) in parallel
/// (an scf.forall).
SmallVector<Value> forallRows(ImplicitLocOpBuilder &b, Value n,
                              ValueRange outputs, ArrayRef<bool> seeded,
                              SeededBody body) {
  auto forall = scf::ForallOp::create(
      b, ArrayRef<OpFoldResult>{n}, outputs, std::nullopt,
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        // args: the induction variable, then the shared outputs
        ImplicitLocOpBuilder ib(loc, nested);
        Value i = args[0];
        ValueRange shared = args.drop_front();
        SmallVector<Value> old = seededRows(ib, shared, seeded, i);
        parallelInsertRows(ib, body(ib, i, old), shared, i, old);
      });
  return llvm::to_vector_of<Value>(forall.getResults());
}

/// Tensors `result[c] = body(c)` for c in [0, n) in parallel, whose rows have
/// the types and sizes of `likeRows` (tensors, or scalars among them: the
/// partial results of a reduce whose merged operands mix both).
SmallVector<Value> tabulateTensorRows(ImplicitLocOpBuilder &b, Value n,
                                      ValueRange likeRows, IndexedBody body) {
  SmallVector<Value> outputs = llvm::map_to_vector(
      likeRows, [&](Value row) { return emptyRows(b, n, row); });
  SmallVector<bool> seeded(outputs.size(), false);
  return forallRows(b, n, outputs, seeded,
                    [&](ImplicitLocOpBuilder &ib, Value c, ArrayRef<Value>) {
                      return body(ib, c);
                    });
}

/// The first tensor with tensor rows among those `consumer` reads, looking
/// through the maps fused into it (whose inputs it reads instead: their
/// results' sizes would keep them alive); null when all rows are scalars.
Value firstTensorWithTensorRows(ValueRange tensors, Operation *consumer) {
  for (Value tensor : tensors) {
    if (MapOp map = fusableProducer(tensor, consumer)) {
      if (Value found = firstTensorWithTensorRows(map.getInputs(), map))
        return found;
      continue;
    }
    if (cast<RankedTensorType>(tensor.getType()).getRank() > 1)
      return tensor;
  }
  return Value();
}

/// The work of a SOAC over `n` rows of `tensors`, as far as the rows it
/// reads tell: n times the elements of a tensor row, or n.
Value rowWork(ImplicitLocOpBuilder &b, ValueRange tensors, Operation *consumer,
              Value n) {
  Value rowsOf = firstTensorWithTensorRows(tensors, consumer);
  return rowsOf ? timesElements(b, n, rowsOf, 1) : n;
}

/// Whether `tensor` is one a loop carries and writes back: an accumulator
/// or the output of a loop computing its rows (an scf.for or scf.forall
/// block argument), or the row of such an output being computed (see
/// seededRows: the loop only writes it back). Writing into it in place
/// costs no copy once nothing else reads it. (Tensors ops computed would
/// qualify too, but reusing them saves one allocation per call, not one per
/// row, and enlarges what bufferization's in-place analysis must compare:
/// twice the compile time of HAND's gradient.)
bool isCarriedTensor(Value tensor) {
  if (auto slice = tensor.getDefiningOp<tensor::ExtractSliceOp>()) {
    Value source = slice.getSource();
    return isa<BlockArgument>(source) && isCarriedTensor(source) &&
           llvm::all_of(source.getUses(), [&](OpOperand &use) {
             Operation *user = use.getOwner();
             if (user == slice || isa<tensor::DimOp>(user))
               return true;
             if (auto insert = dyn_cast<tensor::InsertSliceOp>(user))
               return &use == &insert.getDestMutable();
             if (auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(user))
               return &use == &insert.getDestMutable();
             return false;
           });
  }
  auto arg = dyn_cast<BlockArgument>(tensor);
  return arg && isa<scf::ForOp, scf::ForallOp>(arg.getOwner()->getParentOp());
}

/// Whether `map` is the one op reading the elements of `tensor` (others may
/// take its sizes), through one operand.
bool onlyReader(MapOp map, Value tensor) {
  unsigned reads = 0;
  for (Operation *user : tensor.getUsers()) {
    if (isa<tensor::DimOp>(user))
      continue;
    if (user != map.getOperation() || ++reads > 1)
      return false;
  }
  return true;
}

/// Whether the rows `body` yields as its result `r` have the shape of its
/// argument `p`: scalars do; a tensor row must be the result of a map over
/// that argument whose own rows keep the shape of that argument's rows.
/// (Types alone cannot tell: a dynamic size may differ.)
bool yieldsShapeOf(Block &body, unsigned r, unsigned p) {
  Value yielded = body.getTerminator()->getOperand(r);
  if (!isa<RankedTensorType>(yielded.getType()))
    return true;
  auto inner = yielded.getDefiningOp<MapOp>();
  if (!inner)
    return false;
  unsigned innerResult = cast<OpResult>(yielded).getResultNumber();
  for (auto [q, input] : llvm::enumerate(inner.getInputs()))
    if (input == body.getArgument(p) &&
        yieldsShapeOf(inner.getBody().front(), innerResult, q))
      return true;
  return false;
}

/// For each result of `map`, the input whose tensor it is computed in, or -1
/// for a new tensor: a loop-carried input of the same shape that only this
/// map reads, so that its row i is dead once row i of the result is computed
/// from it.
/// `acc' = map (+) acc row` in a fold then updates the accumulator in place
/// instead of allocating and copying a new one per row.
SmallVector<int> seedInputs(MapOp map) {
  SmallVector<int> seeds(map.getNumResults(), -1);
  SmallVector<bool> taken(map.getInputs().size(), false);
  for (auto [r, type] : llvm::enumerate(map.getResultTypes()))
    for (auto [p, input] : llvm::enumerate(map.getInputs()))
      if (!taken[p] && input.getType() == type && onlyReader(map, input) &&
          !fusableProducer(input, map) && isCarriedTensor(input) &&
          (cast<RankedTensorType>(type).hasStaticShape() ||
           yieldsShapeOf(map.getBody().front(), r, p))) {
        seeds[r] = static_cast<int>(p);
        taken[p] = true;
        break;
      }
  return seeds;
}

struct MapToLoops : OpRewritePattern<MapOp> {
  MapToLoops(MLIRContext *context, const ConvertSoacToLoopsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(MapOp map,
                                PatternRewriter &rewriter) const override {
    if (waitsForEnclosingSoac(map))
      return rewriter.notifyMatchFailure(map, "lowered after its enclosing SOAC");
    if (waitsForFusion(map) || waitsForMapFusion(map))
      return rewriter.notifyMatchFailure(map, "fused into its consumer");
    ImplicitLocOpBuilder b(map.getLoc(), rewriter);
    RowReader rows(map.getInputs(), map);
    Value n = rows.size(b);
    bool parallel = !isNestedInParallelOp(map);
    SmallVector<int> seeds = seedInputs(map);
    // The rows a reduce folded in this loop reads are not stored.
    ReduceOp folded = foldedReduce(map);
    SmallVector<bool> reduced(map.getNumResults(), false);
    if (folded)
      for (Value input : folded.getInputs()) {
        unsigned r = cast<OpResult>(input).getResultNumber();
        reduced[r] = true;
        seeds[r] = -1;
      }
    SmallVector<bool> seeded =
        llvm::map_to_vector(seeds, [](int p) { return p >= 0; });
    // A seeded input's row is read from the output it seeds, before the
    // body overwrites it.
    auto body = [&](ImplicitLocOpBuilder &ib, Value i, ArrayRef<Value> old) {
      SmallVector<Value> known(map.getInputs().size());
      for (auto [r, p] : llvm::enumerate(seeds))
        if (p >= 0)
          known[p] = old[r];
      return inlineBody(ib, map.getBody(), rows.rowsAt(ib, i, known));
    };
    SmallVector<Type> rowTypes = llvm::map_to_vector(
        map.getBody().front().getTerminator()->getOperandTypes(),
        [](Type t) { return t; });
    SmallVector<Value> results, foldedResults;
    if (folded || !allScalar(rowTypes)) {
      results = tabulateRows(b, map, n, parallel, seeds, seeded, body,
                             options, folded, reduced, foldedResults);
    } else {
      auto outputs = [&] {
        return llvm::map_to_vector(
            llvm::enumerate(map.getResultTypes()), [&](auto rt) -> Value {
              auto [r, type] = rt;
              return seeds[r] >= 0
                         ? map.getInputs()[seeds[r]]
                         : emptyTensor(b, cast<RankedTensorType>(type), n);
            });
      };
      if (!parallel)
        results = tabulateInto(b, n, outputs(), seeded, false, body);
      else
        results = chooseByWork(b, options, rowWork(b, map.getInputs(), map, n),
                               map.getResultTypes(), [&](bool enough) {
                                 return tabulateInto(b, n, outputs(), seeded,
                                                     enough, body);
                               });
    }
    if (folded)
      rewriter.replaceOp(folded, foldedResults);
    replaceAndEraseFused(rewriter, map, results, rows);
    return success();
  }

private:
  /// A map with tensor rows: the dynamic row sizes come from running the body
  /// once on row 0 (rows are regular), then each row is inserted whole.
  /// The `reduced` results are not stored: their rows are folded by
  /// `folded` (see foldedReduce) in the sequential loop, whose results go to
  /// `foldedResults`; those results of the map are null.
  static SmallVector<Value>
  tabulateRows(ImplicitLocOpBuilder &b, MapOp map, Value n, bool parallel,
               ArrayRef<int> seeds, ArrayRef<bool> seeded, SeededBody body,
               const ConvertSoacToLoopsOptions &options, ReduceOp folded,
               ArrayRef<bool> reduced, SmallVector<Value> &foldedResults) {
    // The probe reads every row from the inputs: nothing is written yet.
    SmallVector<Value> noOldRows(seeds.size());
    SmallVector<bool> unsized = llvm::map_to_vector(
        llvm::zip(seeded, reduced), [](auto sr) {
          return std::get<0>(sr) || std::get<1>(sr);
        });
    SmallVector<Value> innerSizes =
        rowSizes(b, map, n, unsized, [&](ImplicitLocOpBuilder &ib, Value i) {
          return body(ib, i, noOldRows);
        });
    SmallVector<Value> outputs;
    // The sizes of each output's rows, known before any row is computed: a
    // seeded output's are its input's.
    SmallVector<SmallVector<OpFoldResult>> outputRowSizes;
    size_t used = 0;
    for (auto [r, t] : llvm::enumerate(map.getResultTypes())) {
      auto type = cast<RankedTensorType>(t);
      if (reduced[r]) {
        outputs.push_back(Value());
        outputRowSizes.emplace_back();
        continue;
      }
      if (seeded[r]) {
        Value input = map.getInputs()[seeds[r]];
        outputs.push_back(input);
        outputRowSizes.push_back(SmallVector<OpFoldResult>(
            ArrayRef(tensor::getMixedSizes(b, b.getLoc(), input)).drop_front()));
        continue;
      }
      size_t dynamicInner = llvm::count_if(type.getShape().drop_front(),
                                           ShapedType::isDynamic);
      ArrayRef<Value> dynamic =
          ArrayRef<Value>(innerSizes).slice(used, dynamicInner);
      outputs.push_back(emptyTensor(b, type, n, dynamic));
      SmallVector<OpFoldResult> sizes;
      const Value *next = dynamic.begin();
      for (int64_t size : type.getShape().drop_front())
        sizes.push_back(ShapedType::isDynamic(size)
                            ? OpFoldResult(*next++)
                            : OpFoldResult(b.getIndexAttr(size)));
      outputRowSizes.push_back(sizes);
      used += dynamicInner;
    }
    auto build = [&](bool inParallel) -> SmallVector<Value> {
      if (!inParallel) {
        // Carried: the stored outputs, then the folded reduce's accumulators.
        SmallVector<Value> carried(llvm::make_filter_range(
            outputs, [](Value out) { return static_cast<bool>(out); }));
        size_t stored = carried.size();
        if (folded)
          llvm::append_range(carried, folded.getInits());
        auto loop = markRowLoop(scf::ForOp::create(
            b, indexConstant(b, 0), n, indexConstant(b, 1), carried,
            [&](OpBuilder &nested, Location loc, Value i, ValueRange state) {
              ImplicitLocOpBuilder ib(loc, nested);
              SmallVector<Value> outs;
              auto next = state.begin();
              for (Value out : outputs)
                outs.push_back(out ? *next++ : Value());
              SmallVector<Value> old = seededRows(ib, outs, seeded, i);
              SmallVector<Value> rows = body(ib, i, old);
              SmallVector<Value> updated;
              for (auto [r, row] : llvm::enumerate(rows)) {
                if (reduced[r])
                  continue;
                // A seeded row goes back with the sizes it was read with
                // (see parallelInsertRows).
                Value oldRow = old[r];
                assertRowFits(ib, row, outs[r]);
                updated.push_back(insertRow(
                    ib, row, outs[r], i,
                    oldRow && isa<RankedTensorType>(oldRow.getType())
                        ? tensor::getMixedSizes(ib, ib.getLoc(), oldRow)
                        : outputRowSizes[r]));
              }
              if (folded) {
                SmallVector<Value> args(state.drop_front(stored));
                for (Value input : folded.getInputs())
                  args.push_back(rows[cast<OpResult>(input).getResultNumber()]);
                llvm::append_range(updated,
                                   inlineBody(ib, folded.getBody(), args,
                                              /*reassociate=*/true));
              }
              scf::YieldOp::create(ib, updated);
            }));
        SmallVector<Value> results;
        auto next = loop.getResults().begin();
        for (Value out : outputs)
          results.push_back(out ? Value(*next++) : Value());
        foldedResults.assign(next, loop.getResults().end());
        return results;
      }
      return forallRows(b, n, outputs, seeded, body);
    };
    if (!parallel)
      return build(false);
    // Rows written or rows read, whichever is larger.
    Value work =
        arith::MaxUIOp::create(b, timesElements(b, n, outputs.front(), 1),
                               rowWork(b, map.getInputs(), map, n));
    return chooseByWork(b, options, work, map.getResultTypes(), build);
  }

  /// The dynamic inner sizes of the results that are not `unsized`, from
  /// the rows yielded for row 0 (0 when there are no rows).
  static SmallVector<Value> rowSizes(ImplicitLocOpBuilder &b, MapOp map,
                                     Value n, ArrayRef<bool> unsized,
                                     IndexedBody body) {
    SmallVector<std::pair<unsigned, unsigned>> wanted; // (result, dim)
    for (auto [r, t] : llvm::enumerate(map.getResultTypes()))
      for (auto [d, size] :
           llvm::enumerate(cast<RankedTensorType>(t).getShape().drop_front()))
        if (ShapedType::isDynamic(size) && !unsized[r])
          wanted.push_back({static_cast<unsigned>(r), static_cast<unsigned>(d)});
    if (wanted.empty())
      return {};
    SmallVector<Type> indexTypes(wanted.size(), b.getIndexType());
    Value zero = indexConstant(b, 0);
    Value nonEmpty =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, n, zero);
    auto probe = scf::IfOp::create(b, indexTypes, nonEmpty, true, true);
    probe->setAttr(kRowLoopAttr, b.getUnitAttr());
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(probe.thenBlock());
      SmallVector<Value> rows = body(b, zero);
      SmallVector<Value> sizes = llvm::map_to_vector(wanted, [&](auto rd) {
        return Value(tensor::DimOp::create(b, rows[rd.first], rd.second));
      });
      scf::YieldOp::create(b, sizes);
      b.setInsertionPointToStart(probe.elseBlock());
      scf::YieldOp::create(b, SmallVector<Value>(wanted.size(), zero));
    }
    return llvm::to_vector_of<Value>(probe.getResults());
  }

  ConvertSoacToLoopsOptions options;
};

struct ReduceToLoops : OpRewritePattern<ReduceOp> {
  ReduceToLoops(MLIRContext *context, const ConvertSoacToLoopsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(ReduceOp reduce,
                                PatternRewriter &rewriter) const override {
    if (waitsForEnclosingSoac(reduce))
      return rewriter.notifyMatchFailure(reduce, "lowered after its enclosing SOAC");
    if (foldedWithItsMap(reduce))
      return rewriter.notifyMatchFailure(reduce, "folded in its map's loop");
    ImplicitLocOpBuilder b(reduce.getLoc(), rewriter);
    RowReader rows(reduce.getInputs(), reduce);
    Value n = rows.size(b);
    Region &op = reduce.getBody();
    auto sequential = [&] {
      return foldRange(b, op, rows, indexConstant(b, 0), n, reduce.getInits());
    };
    auto chunked = [&] {
      // Chunks folded in parallel from the neutral elements, then the chunk
      // results folded in order (associativity makes this equal). Every
      // chunk starts from a copy of tensor neutral elements: then there is
      // at most one chunk per thread.
      bool scalar = allScalar(reduce.getInits().getTypes());
      Value chunks = indexConstant(b, options.numChunks);
      if (!scalar)
        chunks = arith::MinUIOp::create(b, chunks, maxThreads(b));
      Value chunkSize = arith::CeilDivUIOp::create(b, n, chunks);
      auto foldChunk = [&](ImplicitLocOpBuilder &ib, Value c) {
        auto [lo, hi] = chunkBounds(ib, c, chunkSize, n);
        return foldRange(ib, op, rows, lo, hi, reduce.getInits());
      };
      SmallVector<Value> partials =
          scalar
              ? tabulate(b, chunks, vectorTypes(reduce.getInits().getTypes()),
                         /*parallel=*/true, foldChunk)
              : tabulateTensorRows(b, chunks, reduce.getInits(), foldChunk);
      RowReader partialRows(partials, nullptr);
      return foldRange(b, op, partialRows, indexConstant(b, 0), chunks,
                       reduce.getInits());
    };
    SmallVector<Value> results;
    if (isNestedInParallelOp(reduce)) {
      results = sequential();
    } else {
      // Rows shaped like the (first) neutral element, or read from tensor
      // rows.
      Value first = reduce.getInits().front();
      Value work = isa<RankedTensorType>(first.getType())
                       ? timesElements(b, n, first, 0)
                       : rowWork(b, reduce.getInputs(), reduce, n);
      results = chooseByWork(b, options, work, reduce.getResultTypes(),
                             [&](bool enough) {
                               return enough ? chunked() : sequential();
                             });
    }
    replaceAndEraseFused(rewriter, reduce, results, rows);
    return success();
  }

  ConvertSoacToLoopsOptions options;
};

struct ScanToLoops : OpRewritePattern<ScanOp> {
  ScanToLoops(MLIRContext *context, const ConvertSoacToLoopsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(ScanOp scan,
                                PatternRewriter &rewriter) const override {
    if (waitsForEnclosingSoac(scan))
      return rewriter.notifyMatchFailure(scan, "lowered after its enclosing SOAC");
    ImplicitLocOpBuilder b(scan.getLoc(), rewriter);
    RowReader rows(scan.getInputs(), scan);
    Value n = rows.size(b);
    // Rows have the shape of the neutral elements.
    SmallVector<Value> outputs;
    for (auto [type, init] :
         llvm::zip(scan.getResultTypes(), scan.getInits())) {
      SmallVector<Value> inner;
      for (auto [d, size] : llvm::enumerate(
               cast<RankedTensorType>(type).getShape().drop_front()))
        if (ShapedType::isDynamic(size))
          inner.push_back(tensor::DimOp::create(b, init, d));
      outputs.push_back(
          emptyTensor(b, cast<RankedTensorType>(type), n, inner));
    }
    auto sequential = [&] {
      return scanRange(b, scan, rows, indexConstant(b, 0), n,
                       indexConstant(b, 0), scan.getInits(), outputs);
    };
    SmallVector<Value> results =
        isNestedInParallelOp(scan) || !allScalar(scan.getInits().getTypes())
            ? sequential()
            : chooseByWork(b, options, rowWork(b, scan.getInputs(), scan, n),
                           scan.getResultTypes(), [&](bool enough) {
                return enough ? parallelScan(b, scan, rows, n, outputs)
                              : sequential();
              });
    replaceAndEraseFused(rewriter, scan, results, rows);
    return success();
  }

private:
  /// Scans rows [lo, hi) starting from `accumulators`, writing the running
  /// values into `outputs` at row (i - shift).
  static SmallVector<Value> scanRange(ImplicitLocOpBuilder &b, ScanOp scan,
                                      const RowReader &rows, Value lo, Value hi,
                                      Value shift, ValueRange accumulators,
                                      ValueRange outputs) {
    size_t k = accumulators.size();
    SmallVector<Value> carried(accumulators);
    llvm::append_range(carried, outputs);
    auto loop = markRowLoop(scf::ForOp::create(
        b, lo, hi, indexConstant(b, 1), carried,
        [&](OpBuilder &nested, Location loc, Value i, ValueRange state) {
          ImplicitLocOpBuilder ib(loc, nested);
          SmallVector<Value> args(state.take_front(k));
          llvm::append_range(args, rows.rowsAt(ib, i));
          SmallVector<Value> next = inlineBody(ib, scan.getBody(), args);
          Value at = arith::SubIOp::create(ib, i, shift);
          SmallVector<Value> yielded(next);
          for (auto [value, out] : llvm::zip(next, state.drop_front(k))) {
            assertRowFits(ib, value, out);
            yielded.push_back(insertRow(ib, value, out, at));
          }
          scf::YieldOp::create(ib, yielded);
        }));
    return llvm::to_vector_of<Value>(loop.getResults().drop_front(k));
  }

  /// Chunk totals in parallel, their exclusive scan in order, then every chunk
  /// rescanned from its offset in parallel into its slice of the outputs.
  SmallVector<Value> parallelScan(ImplicitLocOpBuilder &b, ScanOp scan,
                                  const RowReader &rows, Value n,
                                  ValueRange outputs) const {
    TypeRange elementTypes = scan.getInits().getTypes();
    Value chunks = indexConstant(b, options.numChunks);
    Value chunkSize = arith::CeilDivUIOp::create(b, n, chunks);
    SmallVector<Value> totals = tabulate(
        b, chunks, vectorTypes(elementTypes), /*parallel=*/true,
        [&](ImplicitLocOpBuilder &ib, Value c) {
          auto [lo, hi] = chunkBounds(ib, c, chunkSize, n);
          return foldRange(ib, scan.getBody(), rows, lo, hi, scan.getInits());
        });
    // offsets[c] = inits op totals[0] op ... op totals[c-1]
    RowReader totalRows(totals, nullptr);
    SmallVector<Value> offsetOutputs = llvm::map_to_vector(
        vectorTypes(elementTypes), [&](Type t) {
          return emptyTensor(b, cast<RankedTensorType>(t), chunks);
        });
    size_t k = elementTypes.size();
    SmallVector<Value> carried(scan.getInits());
    llvm::append_range(carried, offsetOutputs);
    auto offsetLoop = markRowLoop(scf::ForOp::create(
        b, indexConstant(b, 0), chunks, indexConstant(b, 1), carried,
        [&](OpBuilder &nested, Location loc, Value c, ValueRange state) {
          ImplicitLocOpBuilder ib(loc, nested);
          SmallVector<Value> yielded;
          SmallVector<Value> args(state.take_front(k));
          llvm::append_range(args, totalRows.rowsAt(ib, c));
          yielded = inlineBody(ib, scan.getBody(), args);
          for (auto [acc, out] :
               llvm::zip(state.take_front(k), state.drop_front(k)))
            yielded.push_back(tensor::InsertOp::create(ib, acc, out, c));
          scf::YieldOp::create(ib, yielded);
        }));
    SmallVector<Value> offsets =
        llvm::to_vector_of<Value>(offsetLoop.getResults().drop_front(k));

    auto forall = scf::ForallOp::create(
        b, ArrayRef<OpFoldResult>{chunks}, outputs, std::nullopt,
        [&](OpBuilder &nested, Location loc, ValueRange args) {
          // args: the chunk number, then the shared outputs
          ImplicitLocOpBuilder ib(loc, nested);
          Value c = args[0];
          ValueRange shared = args.drop_front();
          auto [lo, hi] = chunkBounds(ib, c, chunkSize, n);
          Value length = arith::SubIOp::create(ib, hi, lo);
          SmallVector<Value> start = llvm::map_to_vector(
              offsets, [&](Value o) -> Value {
                return tensor::ExtractOp::create(ib, o, ValueRange{c});
              });
          SmallVector<Value> slices = llvm::map_to_vector(
              shared, [&](Value out) -> Value {
                return tensor::ExtractSliceOp::create(
                    ib, out, ArrayRef<OpFoldResult>{lo},
                    ArrayRef<OpFoldResult>{length},
                    ArrayRef<OpFoldResult>{ib.getIndexAttr(1)});
              });
          SmallVector<Value> scanned =
              scanRange(ib, scan, rows, lo, hi, lo, start, slices);
          auto inParallel = scf::InParallelOp::create(ib);
          ib.setInsertionPointToStart(inParallel.getBody());
          for (auto [slice, out] : llvm::zip(scanned, shared))
            tensor::ParallelInsertSliceOp::create(
                ib, slice, out, ArrayRef<OpFoldResult>{lo},
                ArrayRef<OpFoldResult>{length},
                ArrayRef<OpFoldResult>{ib.getIndexAttr(1)});
        });
    return llvm::to_vector_of<Value>(forall.getResults());
  }

  ConvertSoacToLoopsOptions options;
};

/// `0 <= index < size` for an index of type index, i32 or i64, and the index
/// as an `index` value.
std::pair<Value, Value> checkedIndex(ImplicitLocOpBuilder &b, Value index,
                                     Value size) {
  if (!index.getType().isIndex())
    index = arith::IndexCastOp::create(b, b.getIndexType(), index);
  // Unsigned comparison: a negative index wraps to a huge one.
  Value inRange =
      arith::CmpIOp::create(b, arith::CmpIPredicate::ult, index, size);
  return {inRange, index};
}

/// Updates `dests` at the index read from each row: the sequential loop of
/// scatter and reduce_by_index. Rows read are (index, values...); `update`
/// returns the new dests given the old ones, the row's values and the index,
/// and runs only when the index is in range.
using IndexedUpdate = function_ref<SmallVector<Value>(
    ImplicitLocOpBuilder &, ValueRange dests, ValueRange values, Value index)>;

SmallVector<Value> updateAtIndices(ImplicitLocOpBuilder &b,
                                   const RowReader &rows, ValueRange dests,
                                   IndexedUpdate update) {
  Value n = rows.size(b);
  Value bins = tensor::DimOp::create(b, dests.front(), 0);
  // Every destination is indexed by the same bounds check.
  for (Value dest : dests.drop_front())
    cf::AssertOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, bins,
                              tensor::DimOp::create(b, dest, 0)),
        checkMessage(b.getLoc(), "destinations have different outer sizes"));
  auto loop = markRowLoop(scf::ForOp::create(
      b, indexConstant(b, 0), n, indexConstant(b, 1), dests,
      [&](OpBuilder &nested, Location loc, Value i, ValueRange state) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> row = rows.rowsAt(ib, i);
        auto [inRange, index] = checkedIndex(ib, row[0], bins);
        auto ifInRange =
            scf::IfOp::create(ib, state.getTypes(), inRange, true, true);
        ib.setInsertionPointToStart(ifInRange.thenBlock());
        scf::YieldOp::create(
            ib, update(ib, state, ArrayRef<Value>(row).drop_front(), index));
        ib.setInsertionPointToStart(ifInRange.elseBlock());
        scf::YieldOp::create(ib, state);
        ib.setInsertionPointAfter(ifInRange);
        scf::YieldOp::create(ib, ifInRange.getResults());
      }));
  return llvm::to_vector_of<Value>(loop.getResults());
}

struct ScatterToLoops : OpRewritePattern<ScatterOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScatterOp scatter,
                                PatternRewriter &rewriter) const override {
    if (waitsForEnclosingSoac(scatter))
      return rewriter.notifyMatchFailure(scatter, "lowered after its enclosing SOAC");
    ImplicitLocOpBuilder b(scatter.getLoc(), rewriter);
    SmallVector<Value> read{scatter.getIndices(), scatter.getValues()};
    RowReader rows(read, scatter);
    SmallVector<Value> results = updateAtIndices(
        b, rows, scatter.getDest(),
        [&](ImplicitLocOpBuilder &ib, ValueRange dests, ValueRange values,
            Value index) -> SmallVector<Value> {
          assertRowFits(ib, values[0], dests[0]);
          return {insertRow(ib, values[0], dests[0], index)};
        });
    replaceAndEraseFused(rewriter, scatter, results, rows);
    return success();
  }
};

struct ReduceByIndexToLoops : OpRewritePattern<ReduceByIndexOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceByIndexOp histogram,
                                PatternRewriter &rewriter) const override {
    if (waitsForEnclosingSoac(histogram))
      return rewriter.notifyMatchFailure(histogram, "lowered after its enclosing SOAC");
    ImplicitLocOpBuilder b(histogram.getLoc(), rewriter);
    SmallVector<Value> read{histogram.getIndices()};
    llvm::append_range(read, histogram.getValues());
    RowReader rows(read, histogram);
    SmallVector<Value> results = updateAtIndices(
        b, rows, histogram.getDests(),
        [&](ImplicitLocOpBuilder &ib, ValueRange dests, ValueRange values,
            Value index) {
          SmallVector<Value> args = llvm::map_to_vector(dests, [&](Value bin) {
            return extractRow(ib, bin, index);
          });
          llvm::append_range(args, values);
          SmallVector<Value> written;
          for (auto [value, bin] :
               llvm::zip(inlineBody(ib, histogram.getBody(), args), dests)) {
            assertRowFits(ib, value, bin);
            written.push_back(insertRow(ib, value, bin, index));
          }
          return written;
        });
    replaceAndEraseFused(rewriter, histogram, results, rows);
    return success();
  }
};

/// A tensor.splat in a loop becomes a fill chosen like a SOAC's loops:
/// sequential per row of an enclosing SOAC, else a parallel linalg.fill only
/// when the work and the thread count make it pay (bufferization would make
/// it a parallel region per iteration of the loops around it).
struct SplatToLoops : OpRewritePattern<tensor::SplatOp> {
  SplatToLoops(MLIRContext *context, const ConvertSoacToLoopsOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(tensor::SplatOp splat,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(splat.getLoc(), rewriter);
    RankedTensorType type = splat.getType();
    if (type.getRank() == 0)
      return rewriter.notifyMatchFailure(splat, "no rows");
    // A splat that runs once is left to bufferization (one parallel fill):
    // lowering all of them here doubled the bufferization time of HAND's
    // gradient (19 splats) for nothing.
    if (!isNestedInParallelOp(splat) &&
        !splat->getParentOfType<LoopLikeOpInterface>())
      return rewriter.notifyMatchFailure(splat, "runs once");
    SmallVector<OpFoldResult> sizes = getMixedValues(
        type.getShape(), splat.getDynamicSizes(), b.getContext());
    Value n = getValueOrCreateConstantIndexOp(b, b.getLoc(), sizes.front());
    // Both forms fill one tensor, allocated once (before the loops around
    // the splat, where their sizes allow).
    Value empty = tensor::EmptyOp::create(b, sizes, type.getElementType());
    Value result;
    if (isNestedInParallelOp(splat)) {
      result = sequentialFill(b, splat, empty, sizes, n);
    } else {
      Value work = n;
      for (OpFoldResult size : ArrayRef(sizes).drop_front())
        work = arith::MulIOp::create(
            b, work, getValueOrCreateConstantIndexOp(b, b.getLoc(), size));
      result =
          chooseByWork(b, options, work, TypeRange{type},
                       [&](bool parallel) -> SmallVector<Value> {
                         if (!parallel)
                           return {sequentialFill(b, splat, empty, sizes, n)};
                         return {linalg::FillOp::create(
                                     b, ValueRange{splat.getInput()},
                                     ValueRange{empty})
                                     .getResult(0)};
                       })
              .front();
    }
    rewriter.replaceOp(splat, result);
    return success();
  }

private:
  /// `dest` filled with the splat's value row by row in an scf.for (rows of
  /// rank > 1 are splats again, lowered by this pattern as nested).
  static Value sequentialFill(ImplicitLocOpBuilder &b, tensor::SplatOp splat,
                              Value dest, ArrayRef<OpFoldResult> sizes,
                              Value n) {
    RankedTensorType type = splat.getType();
    if (type.getRank() == 1)
      return tabulateInto(b, n, ValueRange{dest}, /*seeded=*/{false},
                          /*parallel=*/false,
                          [&](ImplicitLocOpBuilder &, Value, ArrayRef<Value>) {
                            return SmallVector<Value>{splat.getInput()};
                          })
          .front();
    auto rowType = RankedTensorType::get(type.getShape().drop_front(),
                                         type.getElementType());
    SmallVector<Value> rowDynamic;
    for (auto [d, size] : llvm::enumerate(sizes.drop_front()))
      if (rowType.isDynamicDim(d))
        rowDynamic.push_back(
            getValueOrCreateConstantIndexOp(b, b.getLoc(), size));
    auto loop = markRowLoop(scf::ForOp::create(
        b, indexConstant(b, 0), n, indexConstant(b, 1), ValueRange{dest},
        [&](OpBuilder &nested, Location loc, Value i, ValueRange outs) {
          ImplicitLocOpBuilder ib(loc, nested);
          Value row = tensor::SplatOp::create(ib, rowType, splat.getInput(),
                                              rowDynamic);
          scf::YieldOp::create(ib, insertRow(ib, row, outs.front(), i));
        }));
    return loop.getResult(0);
  }

  ConvertSoacToLoopsOptions options;
};

struct IotaToLoops : OpRewritePattern<IotaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(IotaOp iota,
                                PatternRewriter &rewriter) const override {
    if (waitsForEnclosingSoac(iota))
      return rewriter.notifyMatchFailure(iota, "lowered after its enclosing SOAC");
    ImplicitLocOpBuilder b(iota.getLoc(), rewriter);
    auto type = cast<RankedTensorType>(iota.getType());
    Value n = iota.getSize() ? iota.getSize()
                             : indexConstant(b, type.getDimSize(0));
    Type element = type.getElementType();
    SmallVector<Value> results = tabulate(
        b, n, TypeRange{type}, !isNestedInParallelOp(iota),
        [&](ImplicitLocOpBuilder &ib, Value i) -> SmallVector<Value> {
          if (element.isIndex())
            return {i};
          return {arith::IndexCastOp::create(ib, element, i)};
        });
    rewriter.replaceOp(iota, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Declares kMaxThreadsFunction (provided by the OpenMP runtime) when the
/// lowering called it.
void declareMaxThreads(ModuleOp module) {
  if (module.lookupSymbol(kMaxThreadsFunction))
    return;
  WalkResult calls = module.walk([](func::CallOp call) {
    return call.getCallee() == kMaxThreadsFunction ? WalkResult::interrupt()
                                                   : WalkResult::advance();
  });
  if (!calls.wasInterrupted())
    return;
  auto b = ImplicitLocOpBuilder::atBlockBegin(module.getLoc(), module.getBody());
  auto declaration = func::FuncOp::create(
      b, kMaxThreadsFunction, b.getFunctionType({}, {b.getI32Type()}));
  declaration.setPrivate();
}

struct ConvertSoacToLoopsPass
    : soac::impl::ConvertSoacToLoopsBase<ConvertSoacToLoopsPass> {
  using ConvertSoacToLoopsBase::ConvertSoacToLoopsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Derivatives must be expanded first; say so instead of leaving them.
    WalkResult unexpanded = module.walk([](Operation *op) {
      if (isa<VjpOp, JvpOp>(op)) {
        op->emitOpError() << "must be expanded by the soac-autodiff pass "
                             "before lowering to loops";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (unexpanded.wasInterrupted())
      return signalPassFailure();
    // finalize-memref-to-llvm (MLIR 22.1) asserts on memory of integers
    // narrower than a byte; i1 is handled by convert-i1-memref-to-llvm.
    WalkResult narrow = module.walk([](Operation *op) {
      for (Type type : llvm::concat<const Type>(op->getOperandTypes(),
                                                op->getResultTypes())) {
        auto shaped = dyn_cast<ShapedType>(type);
        auto integer =
            shaped ? dyn_cast<IntegerType>(shaped.getElementType()) : nullptr;
        if (integer && integer.getWidth() > 1 && integer.getWidth() < 8) {
          op->emitOpError() << "uses " << type
                            << ": tensors of integers narrower than 8 bits "
                               "(other than i1) are not supported by the CPU "
                               "lowering";
          return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    if (narrow.wasInterrupted())
      return signalPassFailure();
    // One-shot bufferization asserts on a dimension past the rank.
    if (failed(verifyDimIndices(module)))
      return signalPassFailure();
    if (numChunks < 1) {
      module.emitError() << "num-chunks must be at least 1, got "
                       << static_cast<int64_t>(numChunks);
      return signalPassFailure();
    }

    RewritePatternSet patterns(&getContext());
    populateSoacToLoopsPatterns(patterns, {numChunks, openmp});
    if (failed(applyPatternsGreedily(module, std::move(patterns)))) {
      module.emitError() << "convert-soac-to-loops did not converge";
      return signalPassFailure();
    }
    declareMaxThreads(module);
    DominanceInfo dominance(module);
    module.walk([&](tensor::InsertSliceOp insert) {
      checkRowsComputedInPlace(insert, dominance);
    });
    module.walk([&](tensor::ParallelInsertSliceOp insert) {
      checkRowsComputedInPlace(insert, dominance);
    });
    // Index checks stay, for soac-lower-checks.
    WalkResult leftover = module.walk([](Operation *op) {
      if (isa<SoacDialect>(op->getDialect()) && !isa<CheckIndexOp>(op)) {
        op->emitOpError() << "could not be lowered to loops";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (leftover.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void soac::populateSoacToLoopsPatterns(
    RewritePatternSet &patterns, const ConvertSoacToLoopsOptions &options) {
  MLIRContext *context = patterns.getContext();
  // Maps are fused, and siblings merged, before any of them is lowered, so
  // that a map read by several SOACs fuses into them instead of being
  // materialized.
  populateMapFusionPatterns(patterns, /*benefit=*/2);
  patterns.add<ScatterToLoops, ReduceByIndexToLoops, IotaToLoops>(context);
  patterns.add<MapToLoops, ReduceToLoops, ScanToLoops, SplatToLoops>(context,
                                                                     options);
}
