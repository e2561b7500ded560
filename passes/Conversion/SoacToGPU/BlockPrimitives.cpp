//===- BlockPrimitives.cpp - warp and block reductions, scans, atomics ----===//
#include "passes/Conversion/SoacToGPU/BlockPrimitives.h"

#include "passes/Utils/Bodies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace soac::kernels {

//===----------------------------------------------------------------------===//
// Values on the wire: warp shuffles and workgroup memory move 32- and 64-bit
// integers and floats; narrower values travel widened, indices as i64.
//===----------------------------------------------------------------------===//

static Type wireType(Type type) {
  MLIRContext *context = type.getContext();
  if (type.isIndex())
    return IntegerType::get(context, 64);
  if (type.getIntOrFloatBitWidth() < 32)
    return IntegerType::get(context, 32);
  return type;
}

static Value toWire(ImplicitLocOpBuilder &b, Value value) {
  Type type = value.getType();
  Type wire = wireType(type);
  if (type == wire)
    return value;
  if (type.isIndex())
    return arith::IndexCastOp::create(b, wire, value);
  if (isa<FloatType>(type))
    value = arith::BitcastOp::create(
        b, IntegerType::get(b.getContext(), type.getIntOrFloatBitWidth()),
        value);
  return arith::ExtUIOp::create(b, wire, value);
}

static Value fromWire(ImplicitLocOpBuilder &b, Value wire, Type type) {
  if (wire.getType() == type)
    return wire;
  if (type.isIndex())
    return arith::IndexCastOp::create(b, type, wire);
  auto narrow = IntegerType::get(b.getContext(), type.getIntOrFloatBitWidth());
  Value value = arith::TruncIOp::create(b, narrow, wire);
  if (isa<FloatType>(type))
    value = arith::BitcastOp::create(b, type, value);
  return value;
}

/// Each value shuffled among the lanes of the warp; the flag says whether the
/// source lane exists (same for all values).
static std::pair<SmallVector<Value>, Value>
shuffle(ImplicitLocOpBuilder &b, ValueRange values, int32_t offset,
        gpu::ShuffleMode mode) {
  SmallVector<Value> shuffled;
  Value valid;
  for (Value value : values) {
    auto op = gpu::ShuffleOp::create(b, toWire(b, value), offset,
                                     static_cast<int32_t>(kWarpSize), mode);
    shuffled.push_back(fromWire(b, op.getShuffleResult(), value.getType()));
    valid = op.getValid();
  }
  return {shuffled, valid};
}

static SmallVector<Value> select(ImplicitLocOpBuilder &b, Value condition,
                                 ValueRange ifTrue, ValueRange ifFalse) {
  return llvm::map_to_vector(llvm::zip(ifTrue, ifFalse), [&](auto pair) {
    return Value(arith::SelectOp::create(b, condition, std::get<0>(pair),
                                         std::get<1>(pair)));
  });
}

static Value cmp(ImplicitLocOpBuilder &b, arith::CmpIPredicate predicate,
                 Value lhs, int64_t rhs) {
  return arith::CmpIOp::create(b, predicate, lhs, indexConstant(b, rhs));
}

//===----------------------------------------------------------------------===//
// Combiner
//===----------------------------------------------------------------------===//

SmallVector<Value> Combiner::combine(ImplicitLocOpBuilder &b, ValueRange acc,
                                     ValueRange values) const {
  SmallVector<Value> args(acc);
  llvm::append_range(args, values);
  return inlineBody(b, op, args);
}

bool Combiner::isCommutative() const {
  Operation *only = combiningOp(op);
  return only && only->hasTrait<OpTrait::IsCommutative>();
}

SmallVector<Type> Combiner::workgroupTypes() const {
  return llvm::map_to_vector(neutral, [](Value v) -> Type {
    return workgroupType(wireType(v.getType()), kWarpsPerBlock);
  });
}

//===----------------------------------------------------------------------===//
// Folds, block reductions and scans
//===----------------------------------------------------------------------===//

SmallVector<Value> foldRows(
    ImplicitLocOpBuilder &b, const Combiner &combiner, ValueRange acc,
    Value first, Value end, Value step,
    function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value)> read) {
  auto loop = scf::ForOp::create(
      b, first, end, step, acc,
      [&](OpBuilder &nested, Location loc, Value j, ValueRange carried) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> next =
            combiner.combine(ib, carried, read(ib, j));
        scf::YieldOp::create(ib, next);
      });
  return loop.getResults();
}

// A butterfly where the lane of the upper half of each pair of groups puts
// its partner's value first.
SmallVector<Value> warpAllReduce(ImplicitLocOpBuilder &b,
                                 const Combiner &combiner, Value lane,
                                 ValueRange values) {
  SmallVector<Value> acc(values);
  for (int32_t offset = 1; offset < kWarpSize; offset *= 2) {
    auto [other, valid] = shuffle(b, acc, offset, gpu::ShuffleMode::XOR);
    Value bit = arith::AndIOp::create(b, lane, indexConstant(b, offset));
    Value upper = cmp(b, arith::CmpIPredicate::ne, bit, 0);
    SmallVector<Value> first = select(b, upper, other, acc);
    SmallVector<Value> second = select(b, upper, acc, other);
    acc = combiner.combine(b, first, second);
  }
  return acc;
}

SmallVector<Value> blockReduce(ImplicitLocOpBuilder &b,
                               const Combiner &combiner, Value thread,
                               ValueRange values, ValueRange scratch) {
  Value warpSize = indexConstant(b, kWarpSize);
  Value lane = arith::RemUIOp::create(b, thread, warpSize);
  Value warp = arith::DivUIOp::create(b, thread, warpSize);
  SmallVector<Value> warpTotals = warpAllReduce(b, combiner, lane, values);
  ifThen(b, cmp(b, arith::CmpIPredicate::eq, lane, 0),
         [&](ImplicitLocOpBuilder &ib) {
           for (auto [total, buffer] : llvm::zip(warpTotals, scratch))
             memref::StoreOp::create(ib, toWire(ib, total), buffer,
                                     ValueRange{warp});
         });
  gpu::BarrierOp::create(b);
  // Every warp combines the warp totals (lane w holds warp w's), so every
  // thread ends with the block's total without another broadcast.
  Value inRange = cmp(b, arith::CmpIPredicate::ult, lane, kWarpsPerBlock);
  Value slot = arith::MinUIOp::create(b, lane,
                                      indexConstant(b, kWarpsPerBlock - 1));
  SmallVector<Value> loaded;
  for (auto [buffer, neutral] :
       llvm::zip(scratch, combiner.neutralElements())) {
    Value wire = memref::LoadOp::create(b, buffer, ValueRange{slot});
    loaded.push_back(arith::SelectOp::create(
        b, inRange, fromWire(b, wire, neutral.getType()), neutral));
  }
  SmallVector<Value> total = warpAllReduce(b, combiner, lane, loaded);
  // The scratch buffers may be written again by the next block operation.
  gpu::BarrierOp::create(b);
  return total;
}

std::pair<SmallVector<Value>, SmallVector<Value>>
blockExclusiveScan(ImplicitLocOpBuilder &b, const Combiner &combiner,
                   Value thread, ValueRange values, ValueRange scratch) {
  Value warpSize = indexConstant(b, kWarpSize);
  Value lane = arith::RemUIOp::create(b, thread, warpSize);
  Value warp = arith::DivUIOp::create(b, thread, warpSize);
  // Inclusive scan within the warp (Hillis-Steele on shuffles).
  SmallVector<Value> inclusive(values);
  for (int32_t offset = 1; offset < kWarpSize; offset *= 2) {
    auto [lower, valid] = shuffle(b, inclusive, offset, gpu::ShuffleMode::UP);
    Value has = cmp(b, arith::CmpIPredicate::uge, lane, offset);
    inclusive =
        select(b, has, combiner.combine(b, lower, inclusive), inclusive);
  }
  ifThen(b, cmp(b, arith::CmpIPredicate::eq, lane, kWarpSize - 1),
         [&](ImplicitLocOpBuilder &ib) {
           for (auto [total, buffer] : llvm::zip(inclusive, scratch))
             memref::StoreOp::create(ib, toWire(ib, total), buffer,
                                     ValueRange{warp});
         });
  gpu::BarrierOp::create(b);
  auto [previous, valid] = shuffle(b, inclusive, 1, gpu::ShuffleMode::UP);
  Value firstLane = cmp(b, arith::CmpIPredicate::eq, lane, 0);
  SmallVector<Value> inWarp =
      select(b, firstLane, combiner.neutralElements(), previous);
  // The warps before this one, and all of them, from workgroup memory.
  SmallVector<Value> init(combiner.neutralElements());
  llvm::append_range(init, combiner.neutralElements());
  size_t k = scratch.size();
  auto loop = scf::ForOp::create(
      b, indexConstant(b, 0), indexConstant(b, kWarpsPerBlock),
      indexConstant(b, 1), init,
      [&](OpBuilder &nested, Location loc, Value w, ValueRange carried) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> warpTotal;
        for (auto [buffer, neutral] :
             llvm::zip(scratch, combiner.neutralElements()))
          warpTotal.push_back(fromWire(
              ib, memref::LoadOp::create(ib, buffer, ValueRange{w}),
              neutral.getType()));
        ValueRange prefix = carried.take_front(k);
        ValueRange total = carried.drop_front(k);
        Value before =
            arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, w, warp);
        SmallVector<Value> next = select(
            ib, before, combiner.combine(ib, prefix, warpTotal), prefix);
        llvm::append_range(next, combiner.combine(ib, total, warpTotal));
        scf::YieldOp::create(ib, next);
      });
  SmallVector<Value> exclusive = combiner.combine(
      b, loop.getResults().take_front(k), inWarp);
  gpu::BarrierOp::create(b);
  return {exclusive, SmallVector<Value>(loop.getResults().drop_front(k))};
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

/// The kind of the native atomic for a one-op operator, if any.
static std::optional<arith::AtomicRMWKind> nativeAtomicKind(Region &op) {
  Operation *only = combiningOp(op);
  if (!only)
    return std::nullopt;
  using Kind = arith::AtomicRMWKind;
  return llvm::TypeSwitch<Operation *, std::optional<Kind>>(only)
      .Case([](arith::AddFOp) { return Kind::addf; })
      .Case([](arith::AddIOp) { return Kind::addi; })
      .Case([](arith::MaxSIOp) { return Kind::maxs; })
      .Case([](arith::MaxUIOp) { return Kind::maxu; })
      .Case([](arith::MinSIOp) { return Kind::mins; })
      .Case([](arith::MinUIOp) { return Kind::minu; })
      .Case([](arith::AndIOp) { return Kind::andi; })
      .Case([](arith::OrIOp) { return Kind::ori; })
      .Default([](Operation *) { return std::nullopt; });
}

LogicalResult checkAtomicCombine(Region &op, Type element,
                                 Operation *soacOp) {
  if (nativeAtomicKind(op))
    return success();
  if (element.isIntOrFloat() && (element.getIntOrFloatBitWidth() == 32 ||
                                 element.getIntOrFloatBitWidth() == 64))
    return success();
  return soacOp->emitOpError()
         << "combines " << element
         << " with an operator that has no atomic instruction: the GPU "
            "lowering needs 32- or 64-bit values for compare-and-swap";
}

namespace {

/// Bits per element of a buffer (an index is 64).
unsigned bitWidth(Type element) {
  return element.isIndex() ? 64 : element.getIntOrFloatBitWidth();
}

/// The address of element `index` of the rank-1 `buffer` (identity
/// layout), for LLVM's atomic operations, which memref has no form of.
Value elementPointer(ImplicitLocOpBuilder &b, Value buffer, Value index) {
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, buffer);
  Value offset =
      arith::MulIOp::create(b, index, indexConstant(b, bitWidth(element) / 8));
  Value address = arith::IndexCastOp::create(
      b, b.getI64Type(), arith::AddIOp::create(b, base, offset));
  return LLVM::IntToPtrOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext()), address);
}

/// `value` of `from` (an integer of its bits, or the other way) as `to`.
Value reinterpret(ImplicitLocOpBuilder &b, Value value, Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (from.isIndex() || to.isIndex())
    return arith::IndexCastOp::create(b, to, value);
  return arith::BitcastOp::create(b, to, value);
}

} // namespace

void atomicCombine(ImplicitLocOpBuilder &b, Region &op, Value buffer,
                   Value index, Value value) {
  if (std::optional<arith::AtomicRMWKind> kind = nativeAtomicKind(op)) {
    memref::AtomicRMWOp::create(b, *kind, value, buffer, ValueRange{index});
    return;
  }
  // Compare-and-swap loop on the value's bits: read, combine, swap if
  // unchanged, else retry with what was there.
  Type type = value.getType();
  auto bits = IntegerType::get(b.getContext(), type.getIntOrFloatBitWidth());
  Value pointer = elementPointer(b, buffer, index);
  Value initial = LLVM::LoadOp::create(b, bits, pointer);
  auto loop = scf::WhileOp::create(
      b, TypeRange{bits}, ValueRange{initial},
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value expected = args[0];
        Value current = type == bits ? expected
                                     : Value(arith::BitcastOp::create(
                                           ib, type, expected));
        Value combined = inlineBody(ib, op, {current, value})[0];
        Value desired = type == bits ? combined
                                     : Value(arith::BitcastOp::create(
                                           ib, bits, combined));
        auto exchange = LLVM::AtomicCmpXchgOp::create(
            ib, pointer, expected, desired, LLVM::AtomicOrdering::acq_rel,
            LLVM::AtomicOrdering::monotonic);
        Value seen = LLVM::ExtractValueOp::create(ib, exchange, 0);
        Value swapped = LLVM::ExtractValueOp::create(ib, exchange, 1);
        Value retry = arith::XOrIOp::create(
            ib, swapped, arith::ConstantIntOp::create(ib, 1, 1));
        scf::ConditionOp::create(ib, retry, ValueRange{seen});
      },
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        scf::YieldOp::create(nested, loc, args);
      });
  (void)loop;
}

LogicalResult checkLockedCombine(ReduceByIndexOp histogram) {
  for (Value dest : histogram.getDests()) {
    auto type = cast<RankedTensorType>(dest.getType());
    Type element = type.getElementType();
    if (type.getRank() != 1)
      return histogram->emitOpError()
             << "is not supported by the GPU lowering: an operator that "
                "combines several destinations together needs scalar rows "
                "(destinations of rank 1)";
    unsigned width =
        element.isIntOrIndexOrFloat() ? bitWidth(element) : 0;
    if (width != 8 && width != 16 && width != 32 && width != 64)
      return histogram->emitOpError()
             << "is not supported by the GPU lowering: its destinations of "
             << element
             << " are updated together under a lock, by loads and stores of "
                "8, 16, 32 or 64 bits";
  }
  return checkScalarCode(histogram.getBody(), histogram);
}

void lockedCombine(ImplicitLocOpBuilder &b, Region &op, ValueRange buffers,
                   Value locks, Value index, ValueRange values) {
  // Only the GPU's own threads contend: ordering within the device is
  // enough (`.gpu` in PTX rather than `.sys`).
  StringRef scope = "device";
  Value lock = elementPointer(b, locks, index);
  Value free = arith::ConstantIntOp::create(b, 0, 32);
  Value taken = arith::ConstantIntOp::create(b, 1, 32);
  scf::WhileOp::create(
      b, TypeRange{}, ValueRange{},
      [&](OpBuilder &nested, Location loc, ValueRange) {
        ImplicitLocOpBuilder ib(loc, nested);
        auto exchange = LLVM::AtomicCmpXchgOp::create(
            ib, lock, free, taken, LLVM::AtomicOrdering::acquire,
            LLVM::AtomicOrdering::monotonic, scope);
        Value acquired = LLVM::ExtractValueOp::create(ib, exchange, 1);
        ifThen(ib, acquired, [&](ImplicitLocOpBuilder &tb) {
          SmallVector<Value> pointers, current;
          for (Value buffer : buffers) {
            Type element = cast<MemRefType>(buffer.getType()).getElementType();
            unsigned width = bitWidth(element);
            Value pointer = elementPointer(tb, buffer, index);
            Value loaded = LLVM::LoadOp::create(
                tb, tb.getIntegerType(width), pointer, width / 8,
                /*isVolatile=*/false, /*isNonTemporal=*/false,
                /*isInvariant=*/false, /*isInvariantGroup=*/false,
                LLVM::AtomicOrdering::monotonic, scope);
            pointers.push_back(pointer);
            current.push_back(reinterpret(tb, loaded, element));
          }
          SmallVector<Value> args(current);
          llvm::append_range(args, values);
          SmallVector<Value> combined = inlineBody(tb, op, args);
          for (auto [value, pointer] : llvm::zip(combined, pointers)) {
            unsigned width = bitWidth(value.getType());
            LLVM::StoreOp::create(
                tb, reinterpret(tb, value, tb.getIntegerType(width)), pointer,
                width / 8, /*isVolatile=*/false, /*isNonTemporal=*/false,
                /*isInvariantGroup=*/false, LLVM::AtomicOrdering::monotonic,
                scope);
          }
          LLVM::StoreOp::create(tb, free, lock, 4, /*isVolatile=*/false,
                                /*isNonTemporal=*/false,
                                /*isInvariantGroup=*/false,
                                LLVM::AtomicOrdering::release, scope);
        });
        Value retry = arith::XOrIOp::create(
            ib, acquired, arith::ConstantIntOp::create(ib, 1, 1));
        scf::ConditionOp::create(ib, retry, ValueRange{});
      },
      [&](OpBuilder &nested, Location loc, ValueRange) {
        scf::YieldOp::create(nested, loc);
      });
}

} // namespace soac::kernels
