//===- HostBufferCopies.cpp - host accesses of buffers as copies ----------===//
//
// soac-host-buffer-copies (see Passes.td): the loads, stores and copies host
// code of a GPU program makes on buffers become copies by the runtime, so
// that the buffers may be device memory, which the host cannot address.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace soac {
#define GEN_PASS_DEF_SOACHOSTBUFFERCOPIES
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

/// runtime/soac_cuda_runtime.c: copies `bytes` from `from` to `to`, any
/// of them device, managed or host memory, after the kernels before it, and
/// waits for it (the host reads or writes one side).
constexpr llvm::StringLiteral kCopy = "soac_gpu_copy";
/// The same between two GPU buffers, queued on the stream: the host waits
/// for nothing.
constexpr llvm::StringLiteral kCopyBuffers = "soac_gpu_copy_buffers";
/// Between two GPU buffers not both contiguous: (to, from, element bytes,
/// rank, the address of the sizes and both sides' strides), queued too.
constexpr llvm::StringLiteral kCopyStrided = "soac_gpu_copy_strided";

/// Arguments of private functions that every call passes a host buffer.
using HostArguments = llvm::DenseSet<Value>;

/// True for buffers the host addresses whatever memory GPU buffers are in:
/// the stack, globals, memory spaces other than the default one, and
/// arguments every call passes such a buffer.
bool hostAddressable(Value buffer, const HostArguments &hostArguments) {
  while (Operation *def = buffer.getDefiningOp()) {
    if (isa<memref::AllocaOp, memref::GetGlobalOp>(def))
      return true;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    buffer = view.getViewSource();
  }
  return hostArguments.contains(buffer) ||
         cast<MemRefType>(buffer.getType()).getMemorySpace() != nullptr;
}

/// True when the callee of `call` only loads, stores and measures its
/// `position`th argument (a helper of the deallocation pipeline does).
bool onlyReadsAndWrites(func::CallOp call, unsigned position, ModuleOp module) {
  auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
  if (!callee || callee.isExternal() || !callee.isPrivate())
    return false;
  return llvm::all_of(callee.getArgument(position).getUsers(),
                      [](Operation *user) {
                        return isa<memref::LoadOp, memref::StoreOp,
                                   memref::DimOp>(user);
                      });
}

/// Host-only scratch: a static buffer whose uses, all in its own block,
/// are loads, stores, casts, its dealloc and calls of helpers that only
/// load, store and measure it (the arrays of pointers and ownership flags
/// the deallocation pipeline hands to its helper). No kernel reads it and
/// nothing outlives its block.
bool isHostScratch(memref::AllocOp alloc, ModuleOp module) {
  if (!alloc.getType().hasStaticShape())
    return false;
  SmallVector<Value> values{alloc.getResult()};
  while (!values.empty()) {
    Value value = values.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != alloc->getBlock())
        return false;
      if (auto cast = dyn_cast<memref::CastOp>(user))
        values.push_back(cast.getResult());
      else if (auto call = dyn_cast<func::CallOp>(user)) {
        if (!onlyReadsAndWrites(call, use.getOperandNumber(), module))
          return false;
      } else if (!isa<memref::LoadOp, memref::StoreOp, memref::DeallocOp>(
                     user))
        return false;
    }
  }
  return true;
}

/// Host-only scratch on the stack, at the function's entry (a loop around
/// it then reuses one buffer, which is safe as nothing outlives the block).
void moveScratchToStack(func::FuncOp function, ModuleOp module) {
  SmallVector<memref::AllocOp> scratch;
  function.walk([&](memref::AllocOp alloc) {
    if (!alloc->getParentOfType<gpu::LaunchOp>() &&
        isHostScratch(alloc, module))
      scratch.push_back(alloc);
  });
  for (memref::AllocOp alloc : scratch) {
    OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
    auto stack = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                          alloc.getAlignmentAttr());
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.replaceAllUsesWith(stack.getResult());
    alloc.erase();
  }
}

/// The arguments of private functions that every call passes a host buffer.
HostArguments hostArguments(ModuleOp module) {
  HostArguments found;
  for (auto function : module.getOps<func::FuncOp>()) {
    if (function.isExternal() || !function.isPrivate())
      continue;
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(function, module);
    if (!uses)
      continue;
    SmallVector<bool> host(function.getNumArguments(), true);
    bool called = false;
    for (const SymbolTable::SymbolUse &use : *uses) {
      auto call = dyn_cast<func::CallOp>(use.getUser());
      if (!call) {
        host.assign(host.size(), false);
        break;
      }
      called = true;
      for (auto [i, operand] : llvm::enumerate(call.getOperands()))
        host[i] = host[i] && isa<MemRefType>(operand.getType()) &&
                  hostAddressable(operand, found);
    }
    for (auto [i, argument] : llvm::enumerate(function.getArguments()))
      if (called && host[i])
        found.insert(argument);
  }
  return found;
}

/// Bytes of an element of `type`; none for sub-byte types (i1).
std::optional<int64_t> elementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat() && type.getIntOrFloatBitWidth() % 8 == 0)
    return type.getIntOrFloatBitWidth() / 8;
  return std::nullopt;
}

/// The address of `buffer[indices]` (the buffer's start without indices),
/// as an i64.
Value address(ImplicitLocOpBuilder &b, Value buffer, ValueRange indices,
              int64_t bytes) {
  auto metadata = memref::ExtractStridedMetadataOp::create(b, buffer);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(
      b, b.getIndexType(), buffer);
  Value offset = metadata.getOffset();
  for (auto [index, stride] : llvm::zip(indices, metadata.getStrides()))
    offset = arith::AddIOp::create(b, offset,
                                   arith::MulIOp::create(b, index, stride));
  Value size = arith::ConstantIndexOp::create(b, bytes);
  Value at = arith::AddIOp::create(b, base,
                                   arith::MulIOp::create(b, offset, size));
  return arith::IndexCastOp::create(b, b.getI64Type(), at);
}

Value i64Constant(ImplicitLocOpBuilder &b, int64_t value) {
  return arith::ConstantIntOp::create(b, b.getI64Type(), value);
}

void callCopy(ImplicitLocOpBuilder &b, Value to, Value from, Value bytes,
              StringRef copy = kCopy) {
  func::CallOp::create(b, copy, TypeRange{}, ValueRange{to, from, bytes});
}

/// A rank-0 stack buffer of `element` at the start of `function` (not in a
/// loop, where each iteration would grow the stack).
Value stageFor(func::FuncOp function, Type element, Location loc) {
  OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
  return memref::AllocaOp::create(b, loc, MemRefType::get({}, element));
}

/// The stack buffer's address as an i64.
Value stageAddress(ImplicitLocOpBuilder &b, Value stage) {
  Value at = memref::ExtractAlignedPointerAsIndexOp::create(
      b, b.getIndexType(), stage);
  return arith::IndexCastOp::create(b, b.getI64Type(), at);
}

/// Each rewrite returns the runtime function it calls.
StringRef rewriteLoad(func::FuncOp function, memref::LoadOp load,
                      int64_t bytes) {
  ImplicitLocOpBuilder b(load.getLoc(), load);
  Value stage = stageFor(function, load.getType(), load.getLoc());
  Value from = address(b, load.getMemRef(), load.getIndices(), bytes);
  callCopy(b, stageAddress(b, stage), from, i64Constant(b, bytes));
  load.replaceAllUsesWith(
      memref::LoadOp::create(b, stage, ValueRange{}).getResult());
  load.erase();
  return kCopy;
}

StringRef rewriteStore(func::FuncOp function, memref::StoreOp store,
                       int64_t bytes) {
  ImplicitLocOpBuilder b(store.getLoc(), store);
  Value stage = stageFor(function, store.getValueToStore().getType(),
                         store.getLoc());
  memref::StoreOp::create(b, store.getValueToStore(), stage, ValueRange{});
  Value to = address(b, store.getMemRef(), store.getIndices(), bytes);
  callCopy(b, to, stageAddress(b, stage), i64Constant(b, bytes));
  store.erase();
  return kCopy;
}

/// True for buffers whose elements are contiguous in row-major order.
bool contiguous(MemRefType type) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  return type.getRank() == 1 &&
         succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides[0] == 1;
}

bool bothContiguous(memref::CopyOp copy) {
  return contiguous(cast<MemRefType>(copy.getSource().getType())) &&
         contiguous(cast<MemRefType>(copy.getTarget().getType()));
}

/// `copy` by the runtime: between two GPU buffers (neither host-addressable)
/// it is queued, else waited for. Returns the runtime function it calls.
StringRef rewriteCopy(memref::CopyOp copy, int64_t bytes,
                      const HostArguments &host) {
  ImplicitLocOpBuilder b(copy.getLoc(), copy);
  Value source = copy.getSource();
  Value count = arith::ConstantIndexOp::create(b, bytes);
  auto type = cast<MemRefType>(source.getType());
  for (int64_t d = 0; d < type.getRank(); ++d)
    count = arith::MulIOp::create(b, count,
                                  memref::DimOp::create(b, source, d));
  Value size = arith::IndexCastOp::create(b, b.getI64Type(), count);
  bool betweenBuffers = !hostAddressable(source, host) &&
                        !hostAddressable(copy.getTarget(), host);
  StringRef function = betweenBuffers ? kCopyBuffers : kCopy;
  callCopy(b, address(b, copy.getTarget(), {}, bytes),
           address(b, source, {}, bytes), size, function);
  copy.erase();
  return function;
}

/// `copy` between GPU buffers not both contiguous, by the runtime: their
/// sizes and strides go in a stack buffer at the function's entry.
StringRef rewriteStridedCopy(func::FuncOp function, memref::CopyOp copy,
                             int64_t bytes) {
  ImplicitLocOpBuilder b(copy.getLoc(), copy);
  int64_t rank = cast<MemRefType>(copy.getSource().getType()).getRank();
  OpBuilder entry = OpBuilder::atBlockBegin(&function.getBody().front());
  Value shape = memref::AllocaOp::create(
      entry, copy.getLoc(), MemRefType::get({3 * rank}, b.getI64Type()));
  auto from = memref::ExtractStridedMetadataOp::create(b, copy.getSource());
  auto to = memref::ExtractStridedMetadataOp::create(b, copy.getTarget());
  SmallVector<Value> words(from.getSizes());
  llvm::append_range(words, from.getStrides());
  llvm::append_range(words, to.getStrides());
  for (auto [i, word] : llvm::enumerate(words))
    memref::StoreOp::create(
        b, arith::IndexCastOp::create(b, b.getI64Type(), word), shape,
        ValueRange{arith::ConstantIndexOp::create(b, i)});
  func::CallOp::create(
      b, kCopyStrided, TypeRange{},
      ValueRange{address(b, copy.getTarget(), {}, bytes),
                 address(b, copy.getSource(), {}, bytes),
                 i64Constant(b, bytes), i64Constant(b, rank),
                 stageAddress(b, shape)});
  copy.erase();
  return kCopyStrided;
}

/// The type of the buffer a load or store reads or writes, or a copy reads.
MemRefType accessed(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return load.getMemRefType();
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return store.getMemRefType();
  return cast<MemRefType>(cast<memref::CopyOp>(op).getSource().getType());
}

struct SoacHostBufferCopiesPass
    : soac::impl::SoacHostBufferCopiesBase<SoacHostBufferCopiesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal())
        moveScratchToStack(function, module);
    HostArguments host = hostArguments(module);
    llvm::SmallSetVector<StringRef, 2> called;
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      // Collected first: the rewrites add loads and stores of stack buffers.
      SmallVector<Operation *> accesses;
      function.walk([&](Operation *op) {
        if (op->getParentOfType<gpu::LaunchOp>())
          return;
        if (auto load = dyn_cast<memref::LoadOp>(op);
            load && !hostAddressable(load.getMemRef(), host))
          accesses.push_back(op);
        if (auto store = dyn_cast<memref::StoreOp>(op);
            store && !hostAddressable(store.getMemRef(), host))
          accesses.push_back(op);
        if (auto copy = dyn_cast<memref::CopyOp>(op)) {
          bool sourceOnHost = hostAddressable(copy.getSource(), host);
          bool targetOnHost = hostAddressable(copy.getTarget(), host);
          // A strided copy with a side on the host stays memrefCopy.
          if (bothContiguous(copy) ? !(sourceOnHost && targetOnHost)
                                   : !(sourceOnHost || targetOnHost))
            accesses.push_back(op);
        }
      });
      for (Operation *op : accesses) {
        Type element = accessed(op).getElementType();
        std::optional<int64_t> bytes = elementBytes(element);
        if (!bytes)
          continue;
        if (auto load = dyn_cast<memref::LoadOp>(op))
          called.insert(rewriteLoad(function, load, *bytes));
        else if (auto store = dyn_cast<memref::StoreOp>(op))
          called.insert(rewriteStore(function, store, *bytes));
        else if (auto copy = cast<memref::CopyOp>(op); bothContiguous(copy))
          called.insert(rewriteCopy(copy, *bytes, host));
        else
          called.insert(rewriteStridedCopy(function, copy, *bytes));
      }
    }
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Type i64 = b.getI64Type();
    for (StringRef copy : called) {
      if (module.lookupSymbol(copy))
        continue;
      SmallVector<Type> arguments(copy == kCopyStrided ? 5 : 3, i64);
      func::FuncOp::create(b, module.getLoc(), copy,
                           b.getFunctionType(arguments, {}))
          .setPrivate();
    }
  }
};

} // namespace
