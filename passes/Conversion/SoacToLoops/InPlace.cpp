//===- InPlace.cpp - results computed in the tensors they replace ---------===//
#include "passes/Conversion/SoacToLoops/InPlace.h"

#include "passes/Utils/Bodies.h"
#include "passes/Conversion/SoacToLoops/Loops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace soac::loops {

namespace {

/// What a size check before a map computed in a slice of the same rank says.
constexpr llvm::StringLiteral kSliceOfAnotherSize =
    "'tensor.insert_slice': a source of another size than its slice";

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
             // Yielded unchanged by the branch of an scf.if that does not
             // take the slice (a histogram's bin out of range): that path
             // never sees the row written.
             if (auto yield = dyn_cast<scf::YieldOp>(user)) {
               auto branch = dyn_cast<scf::IfOp>(yield->getParentOp());
               return branch && branch->isProperAncestor(slice) &&
                      !yield->getParentRegion()->isAncestor(
                          slice->getParentRegion());
             }
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

/// The tensor.empty ops a row is computed in, following destinations back
/// (loops' initial values, inserts' and destination-style ops' outputs, both
/// branches of an scf.if such as the choice between a parallel and a
/// sequential loop): those eliminate-empty-tensors may replace by the row's
/// slice of its result.
void emptiesRowIsComputedIn(Value row,
                            llvm::SetVector<tensor::EmptyOp> &empties) {
  while (row) {
    Operation *op = row.getDefiningOp();
    if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(op)) {
      empties.insert(empty);
      return;
    }
    if (auto branch = dyn_cast_or_null<scf::IfOp>(op)) {
      unsigned r = cast<OpResult>(row).getResultNumber();
      for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()})
        if (!region->empty())
          emptiesRowIsComputedIn(
              region->front().getTerminator()->getOperand(r), empties);
      return;
    }
    if (auto loop = dyn_cast_or_null<scf::ForOp>(op))
      row = loop.getInitArgs()[cast<OpResult>(row).getResultNumber()];
    else if (auto insert = dyn_cast_or_null<tensor::InsertOp>(op))
      row = insert.getDest();
    else if (auto insert = dyn_cast_or_null<tensor::InsertSliceOp>(op))
      row = insert.getDest();
    else if (auto dps = dyn_cast_or_null<DestinationStyleOpInterface>(op))
      row = dps.getTiedOpOperand(cast<OpResult>(row))->get();
    else
      return;
  }
}

template <typename InsertOp>
void checkRowInPlace(InsertOp insert, DominanceInfo &dominance) {
  llvm::SetVector<tensor::EmptyOp> empties;
  emptiesRowIsComputedIn(insert.getSource(), empties);
  // The slot's dimensions the insert keeps, in order, are the empty's: a
  // row's slot drops the leading one, a column's (x[:, j] = ...) another, a
  // slice of the same rank none.
  llvm::SmallBitVector dropped = insert.getDroppedDims();
  if (empties.empty() || dropped.count() > 1)
    return;
  SmallVector<OpFoldResult> kept;
  for (auto [d, size] : llvm::enumerate(insert.getMixedSizes()))
    if (!dropped.test(d))
      kept.push_back(size);
  for (tensor::EmptyOp empty : empties) {
    if (kept.size() != static_cast<size_t>(empty.getType().getRank()))
      continue;
    ImplicitLocOpBuilder b(empty.getLoc(), empty);
    for (auto [d, size] : llvm::enumerate(kept)) {
      if (!empty.getType().isDynamicDim(d))
        continue;
      auto slot = dyn_cast<Value>(size);
      if (slot && !dominance.properlyDominates(slot, empty))
        continue; // the slot's size comes later: no elimination
      Value expected = getValueOrCreateConstantIndexOp(b, b.getLoc(), size);
      Value same = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                         empty.getDynamicSize(d), expected);
      cf::AssertOp::create(
          b, same,
          checkMessage(insert.getLoc(), dropped.none() ? kSliceOfAnotherSize
                                                       : "rows of different sizes"));
    }
  }
}

/// The one tensor.insert_slice of `result` into another tensor, when its
/// other readers are tensor.dims only (the size checks of
/// soac-check-indices); null otherwise.
tensor::InsertSliceOp onlyInsertOf(Value result) {
  tensor::InsertSliceOp insert;
  for (Operation *user : result.getUsers()) {
    if (isa<tensor::DimOp>(user))
      continue;
    auto slice = dyn_cast<tensor::InsertSliceOp>(user);
    if (!slice || insert || slice.getSource() != result)
      return {};
    insert = slice;
  }
  return insert;
}

/// Each tensor that the lowering of `reader` reads rows of, with the map
/// whose input it is: `reader` itself or a map fused into it (see
/// fusableProducer), for `tensors`, `reader`'s inputs.
void collectReads(MapOp reader, ValueRange tensors,
                  SmallVectorImpl<std::pair<Value, MapOp>> &reads) {
  for (Value tensor : tensors) {
    if (MapOp producer = fusableProducer(tensor, reader))
      collectReads(producer, producer.getInputs(), reads);
    else
      reads.emplace_back(tensor, reader);
  }
}

/// The tensor that is the slice `map`'s result `r` replaces, or null: an
/// extract_slice of a tensor that `map` alone reads (directly, or through a
/// map fused into it), while the result's one reader (besides tensor.dims)
/// is an insert_slice back into that tensor at the same offsets, sizes and
/// strides, and nothing else reads the tensor (an argument is not written).
/// The adjoint of `x[1:]` adds into its slice of the gradient so. Computed
/// in that slice, row i is read before it is written, and bufferization
/// sees the slice extracted and inserted back in place: no new tensor, and
/// no copy of it into the slice.
Value sliceReplaced(MapOp map, unsigned r) {
  Value result = map.getResult(r);
  tensor::InsertSliceOp insert = onlyInsertOf(result);
  if (!insert || isa<BlockArgument>(insert.getDest()) ||
      insert.getDroppedDims().any())
    return {};
  // soac-check-indices checks the offsets of the extract_slice and of the
  // insert_slice apart: two checks of one index against one size are one
  // offset (canonicalization then folds the second into the first, so that
  // bufferization sees one offset too).
  auto checkOf = [](OpFoldResult v) {
    auto value = dyn_cast<Value>(v);
    return value ? value.getDefiningOp<CheckIndexOp>() : CheckIndexOp();
  };
  auto same = [&](ArrayRef<OpFoldResult> a, ArrayRef<OpFoldResult> b) {
    return llvm::equal(a, b, [&](OpFoldResult x, OpFoldResult y) {
      CheckIndexOp cx = checkOf(x), cy = checkOf(y);
      return isEqualConstantIntOrValue(x, y) ||
             (cx && cy && cx.getIndex() == cy.getIndex() &&
              cx.getSize() == cy.getSize());
    });
  };
  SmallVector<std::pair<Value, MapOp>> reads;
  collectReads(map, map.getInputs(), reads);
  for (auto [tensor, reader] : reads) {
    auto extract = tensor.getDefiningOp<tensor::ExtractSliceOp>();
    // Through a fused map, a row read and the row written must be scalars
    // (a tensor row's sizes are the result's, known from its type alone
    // only when static).
    bool direct = reader == map;
    auto type = cast<RankedTensorType>(result.getType());
    if (!extract || extract.getSource() != insert.getDest() ||
        tensor.getType() != type || !onlyReader(reader, tensor) ||
        (!direct && type.getRank() != 1) ||
        extract.getDroppedDims().any() ||
        !same(extract.getMixedOffsets(), insert.getMixedOffsets()) ||
        !same(extract.getMixedSizes(), insert.getMixedSizes()) ||
        !same(extract.getMixedStrides(), insert.getMixedStrides()))
      continue;
    if (direct && !type.hasStaticShape()) {
      unsigned p = llvm::find(map.getInputs(), tensor) - map.getInputs().begin();
      if (!yieldsShapeOf(map.getBody().front(), r, p))
        continue;
    }
    bool onlySlicedHere = llvm::all_of(
        insert.getDest().getUsers(), [&](Operation *user) {
          return user == extract || user == insert || isa<tensor::DimOp>(user);
        });
    return onlySlicedHere ? tensor : Value();
  }
  return {};
}

} // namespace

Value sliceComputedIn(ImplicitLocOpBuilder &b, MapOp map, Value result,
                      Value n) {
  auto type = cast<RankedTensorType>(result.getType());
  if (type.getRank() != 1)
    return {};
  // Besides the insert, only tensor.dims may read it: its size is `n`
  // wherever it is computed.
  tensor::InsertSliceOp insert = onlyInsertOf(result);
  // A destination written nowhere else: an argument, or a tensor read again
  // (by the map itself, say), would make bufferization copy the slice's old
  // contents for the map to overwrite, on top of the copy it saves.
  auto writable = [&](Value dest) {
    return !isa<BlockArgument>(dest) &&
           llvm::all_of(dest.getUsers(), [&](Operation *user) {
             return user == insert || isa<tensor::DimOp>(user);
           });
  };
  DominanceInfo dominance;
  if (!insert || !writable(insert.getDest()) ||
      insert.getDroppedDims().any() ||
      !llvm::all_of(insert.getMixedStrides(), [](OpFoldResult stride) {
        return isConstantIntValue(stride, 1);
      }) ||
      !llvm::all_of(insert->getOperands().drop_front(), [&](Value v) {
        return dominance.properlyDominates(v, map);
      }))
    return {};
  OpFoldResult size = insert.getMixedSizes().front();
  Value same = arith::CmpIOp::create(
      b, arith::CmpIPredicate::eq, n,
      getValueOrCreateConstantIndexOp(b, b.getLoc(), size));
  cf::AssertOp::create(
      b, same,
      checkMessage(insert.getLoc(), kSliceOfAnotherSize));
  return tensor::ExtractSliceOp::create(
      b, type, insert.getDest(), insert.getMixedOffsets(),
      insert.getMixedSizes(), insert.getMixedStrides());
}

SmallVector<Value> seedInputs(MapOp map) {
  SmallVector<Value> seeds(map.getNumResults());
  llvm::SmallPtrSet<Value, 4> taken;
  for (auto [r, type] : llvm::enumerate(map.getResultTypes())) {
    Value replaced = sliceReplaced(map, r);
    if (replaced && taken.insert(replaced).second) {
      seeds[r] = replaced;
      continue;
    }
    for (auto [p, input] : llvm::enumerate(map.getInputs()))
      if (!taken.contains(input) && input.getType() == type &&
          onlyReader(map, input) && !fusableProducer(input, map) &&
          isCarriedTensor(input) &&
          (cast<RankedTensorType>(type).hasStaticShape() ||
           yieldsShapeOf(map.getBody().front(), r, p))) {
        seeds[r] = input;
        taken.insert(input);
        break;
      }
  }
  return seeds;
}

void checkRowsComputedInPlace(ModuleOp module) {
  DominanceInfo dominance(module);
  module.walk([&](tensor::InsertSliceOp insert) {
    checkRowInPlace(insert, dominance);
  });
  module.walk([&](tensor::ParallelInsertSliceOp insert) {
    checkRowInPlace(insert, dominance);
  });
}

} // namespace soac::loops
