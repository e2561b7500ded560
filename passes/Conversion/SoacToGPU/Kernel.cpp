//===- Kernel.cpp - building gpu.launch kernels from SOACs ----------------===//
#include "passes/Conversion/SoacToGPU/Kernel.h"

#include "passes/Utils/Bodies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace soac::kernels {

LogicalResult checkScalarCode(Region &region, Operation *soacOp) {
  auto isTensor = [](Type type) { return isa<TensorType>(type); };
  for (BlockArgument arg : region.getArguments())
    if (isTensor(arg.getType()))
      return soacOp->emitOpError()
             << "has rows of type " << arg.getType()
             << ": this SOAC is not supported by the GPU lowering (it needs "
                "scalar rows here)";
  WalkResult result = region.walk([&](Operation *op) {
    bool readsOutside = isa<tensor::ExtractOp, tensor::DimOp>(op) &&
                        !region.isAncestor(op->getOperand(0).getParentRegion());
    if (readsOutside)
      return WalkResult::advance();
    if (llvm::any_of(op->getOperandTypes(), isTensor) ||
        llvm::any_of(op->getResultTypes(), isTensor)) {
      InFlightDiagnostic error =
          op->emitOpError()
          << "is not supported by the GPU lowering here: code running "
             "per row of a SOAC may only compute scalars and read tensors "
             "(tensor.extract, tensor.dim)";
      error.attachNote(soacOp->getLoc())
          << "in the body of this '" << soacOp->getName() << "'";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

bool definedIn(MapOp map, Value value) {
  return map.getBody().isAncestor(value.getParentRegion());
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

Value Buffers::of(ImplicitLocOpBuilder &host, Value tensor) {
  auto found = buffers.find(tensor);
  if (found != buffers.end())
    return found->second;
  auto type = cast<RankedTensorType>(tensor.getType());
  Value source = tensor;
  // A constant bufferizes to a global of the host program, which kernels
  // cannot read: copy it into an allocation (GPU-visible memory).
  if (tensor.getDefiningOp<arith::ConstantOp>())
    source = bufferization::AllocTensorOp::create(host, type, ValueRange{},
                                                  /*copy=*/tensor);
  // Any layout: a slice of another buffer is read where it is.
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  auto layout = StridedLayoutAttr::get(host.getContext(), ShapedType::kDynamic,
                                       strides);
  auto memrefType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  auto toBuffer = bufferization::ToBufferOp::create(host, memrefType, source);
  toBuffer.setReadOnly(true);
  buffers[tensor] = toBuffer;
  return toBuffer;
}

void Buffers::addFreeTensors(ImplicitLocOpBuilder &host, Region &region) {
  SetVector<Value> above;
  getUsedValuesDefinedAbove(region, above);
  for (Value value : above)
    if (isa<RankedTensorType>(value.getType()))
      of(host, value);
}

void Buffers::rewriteReads(gpu::LaunchOp launch) const {
  SmallVector<Operation *> reads;
  launch.walk([&](Operation *op) {
    if (isa<tensor::ExtractOp, tensor::DimOp>(op) &&
        buffers.count(op->getOperand(0)))
      reads.push_back(op);
  });
  for (Operation *op : reads) {
    ImplicitLocOpBuilder b(op->getLoc(), op);
    Value buffer = buffers.lookup(op->getOperand(0));
    Value replacement;
    if (auto extract = dyn_cast<tensor::ExtractOp>(op))
      replacement = memref::LoadOp::create(b, buffer, extract.getIndices());
    else
      replacement =
          memref::DimOp::create(b, buffer, cast<tensor::DimOp>(op).getIndex());
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
  }
}

//===----------------------------------------------------------------------===//
// ElementReader
//===----------------------------------------------------------------------===//

bool computesTensors(Region &region) {
  WalkResult tensors = region.walk([](Operation *op) {
    return llvm::any_of(op->getResultTypes(),
                        [](Type t) { return isa<TensorType>(t); })
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return tensors.wasInterrupted();
}

Region *elementwiseScalarOperator(Region &op) {
  Block &block = op.front();
  if (block.getNumArguments() != 2 ||
      !llvm::hasSingleElement(block.without_terminator()))
    return nullptr;
  auto inner = dyn_cast<MapOp>(block.front());
  if (!inner || inner.getInputs().size() != 2 ||
      inner.getInputs()[0] != block.getArgument(0) ||
      inner.getInputs()[1] != block.getArgument(1) ||
      inner->getNumResults() != 1 ||
      block.getTerminator()->getNumOperands() != 1 ||
      block.getTerminator()->getOperand(0) != inner.getResult(0))
    return nullptr;
  if (!hasScalarRows(inner))
    return elementwiseScalarOperator(inner.getBody());
  return computesTensors(inner.getBody()) ? nullptr : &inner.getBody();
}

static Region *scalarOperator(Region &body, ValueRange rows) {
  bool scalars = llvm::all_of(rows.getTypes(), [](Type t) {
    return cast<RankedTensorType>(t).getRank() == 1;
  });
  if (scalars)
    return &body;
  return rows.size() == 1 ? elementwiseScalarOperator(body) : nullptr;
}

Region *scalarOperator(ReduceOp reduce) {
  return scalarOperator(reduce.getBody(), reduce.getInputs());
}

Region *scalarOperator(ReduceByIndexOp histogram) {
  return scalarOperator(histogram.getBody(), histogram.getValues());
}

MapOp fusedScalarMap(Value tensor, Operation *consumer) {
  MapOp map = fusableProducer(tensor, consumer);
  return map && hasScalarRows(map) && !computesTensors(map.getBody()) ? map
                                                                      : nullptr;
}

ElementReader::ElementReader(ImplicitLocOpBuilder &host, Buffers &buffers,
                             ValueRange tensors, Operation *consumer)
    : tensors(tensors), consumer(consumer) {
  prepare(host, buffers, tensors, consumer);
}

void ElementReader::prepare(ImplicitLocOpBuilder &host, Buffers &buffers,
                            ValueRange inputs, Operation *reader) {
  for (Value tensor : inputs) {
    if (MapOp map = fusedScalarMap(tensor, reader)) {
      if (llvm::is_contained(fused, map))
        continue;
      fused.push_back(map);
      buffers.addFreeTensors(host, map.getBody());
      prepare(host, buffers, map.getInputs(), map);
      continue;
    }
    buffers.of(host, tensor);
    if (!firstLeaf)
      firstLeaf = tensor;
  }
}

Value ElementReader::size(ImplicitLocOpBuilder &host) const {
  return sizesOf(host, firstLeaf).front();
}

SmallVector<Value> ElementReader::read(ImplicitLocOpBuilder &b,
                                       Value i) const {
  DenseMap<Operation *, SmallVector<Value>> computed;
  std::function<Value(Value, Operation *)> element = [&](Value tensor,
                                                         Operation *reader) {
    MapOp map = fusedScalarMap(tensor, reader);
    if (!map)
      return Value(tensor::ExtractOp::create(b, tensor, ValueRange{i}));
    if (!computed.count(map)) {
      SmallVector<Value> inputs = llvm::map_to_vector(
          map.getInputs(), [&](Value in) { return element(in, map); });
      computed[map] = inlineBody(b, map.getBody(), inputs);
    }
    return computed[map][cast<OpResult>(tensor).getResultNumber()];
  };
  return llvm::map_to_vector(tensors,
                             [&](Value t) { return element(t, consumer); });
}

SmallVector<MapOp> ElementReader::fusedMaps() const { return fused; }

//===----------------------------------------------------------------------===//
// Launches and buffers
//===----------------------------------------------------------------------===//

gpu::LaunchOp launchKernel(
    ImplicitLocOpBuilder &host, Value blocks, TypeRange workgroup,
    const Buffers &buffers,
    function_ref<void(ImplicitLocOpBuilder &, const ThreadIds &, ValueRange)>
        body,
    int64_t blockSize) {
  Value one = indexConstant(host, 1);
  Value threads = indexConstant(host, blockSize);
  auto launch = gpu::LaunchOp::create(host, blocks, one, one, threads, one,
                                      one, /*dynamicSharedMemorySize=*/nullptr,
                                      /*asyncTokenType=*/nullptr,
                                      /*asyncDependencies=*/{}, workgroup);
  ImplicitLocOpBuilder b(host.getLoc(), host.getContext());
  b.setInsertionPointToEnd(&launch.getBody().front());
  ThreadIds ids;
  ids.thread = launch.getThreadIds().x;
  ids.block = launch.getBlockIds().x;
  Value threadsPerBlock = indexConstant(b, blockSize);
  ids.global = arith::AddIOp::create(
      b, arith::MulIOp::create(b, ids.block, threadsPerBlock), ids.thread);
  ids.count =
      arith::MulIOp::create(b, launch.getGridSize().x, threadsPerBlock);
  body(b, ids, launch.getWorkgroupAttributions());
  gpu::TerminatorOp::create(b);
  buffers.rewriteReads(launch);
  return launch;
}

Value allocBuffer(ImplicitLocOpBuilder &host, RankedTensorType type,
                  ValueRange dynamicSizes) {
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  return memref::AllocOp::create(host, memrefType, dynamicSizes);
}

Value asTensor(ImplicitLocOpBuilder &host, Value buffer, Type tensorType) {
  return bufferization::ToTensorOp::create(host, tensorType, buffer,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

SmallVector<Value> asTensors(ImplicitLocOpBuilder &host, ValueRange buffers,
                             TypeRange types) {
  return llvm::map_to_vector(llvm::zip(buffers, types), [&](auto pair) {
    return asTensor(host, std::get<0>(pair), std::get<1>(pair));
  });
}

void replaceSoac(Operation *op, ValueRange results,
                 const ElementReader *reader) {
  op->replaceAllUsesWith(results);
  op->erase();
  if (reader)
    for (MapOp map : reader->fusedMaps())
      map.erase();
}

SmallVector<Value> sizesOf(ImplicitLocOpBuilder &host, Value tensor) {
  return getValueOrCreateConstantIndexOp(
      host, host.getLoc(), tensor::getMixedSizes(host, host.getLoc(), tensor));
}

Value isThreadZero(ImplicitLocOpBuilder &b, const ThreadIds &ids) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, ids.thread,
                               indexConstant(b, 0));
}

MemRefType workgroupType(Type element, int64_t size) {
  auto space = gpu::AddressSpaceAttr::get(element.getContext(),
                                         gpu::AddressSpace::Workgroup);
  return MemRefType::get({size}, element, MemRefLayoutAttrInterface{}, space);
}

Value indexConstant(ImplicitLocOpBuilder &b, int64_t value) {
  return arith::ConstantIndexOp::create(b, value);
}

Value ceilDiv(ImplicitLocOpBuilder &b, Value a, Value bValue) {
  return arith::CeilDivUIOp::create(b, a, bValue);
}

Value blocksFor(ImplicitLocOpBuilder &host, Value n, int64_t blockSize) {
  Value blocks = ceilDiv(host, n, indexConstant(host, blockSize));
  return arith::MaxUIOp::create(host, blocks, indexConstant(host, 1));
}

Value lessThan(ImplicitLocOpBuilder &b, Value lhs, Value rhs) {
  return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, lhs, rhs);
}

Value minIndex(ImplicitLocOpBuilder &b, Value lhs, Value rhs) {
  return arith::MinUIOp::create(b, lhs, rhs);
}

std::pair<Value, Value> checkedIndex(ImplicitLocOpBuilder &b, Value index,
                                     Value size) {
  if (!index.getType().isIndex())
    index = arith::IndexCastOp::create(b, b.getIndexType(), index);
  // Negative indices are huge as unsigned numbers: one comparison.
  return {index, lessThan(b, index, size)};
}

/// The contiguous range [lo, hi) of `n` rows that thread `t` of `threads`
/// folds when rows must be combined in order.
std::pair<Value, Value> contiguousRange(ImplicitLocOpBuilder &b, Value t,
                                        Value threads, Value n) {
  Value chunk = ceilDiv(b, n, threads);
  Value lo = minIndex(b, arith::MulIOp::create(b, t, chunk), n);
  Value hi = minIndex(b, arith::AddIOp::create(b, lo, chunk), n);
  return {lo, hi};
}

SmallVector<Value> dynamicSizes(RankedTensorType type, ValueRange sizes) {
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamic.push_back(sizes[d]);
  return dynamic;
}

void forEachIndexIn(ImplicitLocOpBuilder &b, Value lo, Value hi, Value step,
                    function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
  scf::ForOp::create(b, lo, hi, step, ValueRange{},
                     [&](OpBuilder &nested, Location loc, Value i, ValueRange) {
                       ImplicitLocOpBuilder ib(loc, nested);
                       body(ib, i);
                       scf::YieldOp::create(ib);
                     });
}

void forEachIndex(ImplicitLocOpBuilder &b, Value count,
                  function_ref<void(ImplicitLocOpBuilder &, Value)> body) {
  forEachIndexIn(b, indexConstant(b, 0), count, indexConstant(b, 1), body);
}

void ifThen(ImplicitLocOpBuilder &b, Value condition,
            function_ref<void(ImplicitLocOpBuilder &)> then) {
  auto ifOp = scf::IfOp::create(b, condition, /*withElseRegion=*/false);
  ImplicitLocOpBuilder inner(b.getLoc(), b.getContext());
  inner.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  then(inner);
}

void ifThenElse(ImplicitLocOpBuilder &b, Value condition,
                function_ref<void(ImplicitLocOpBuilder &)> then,
                function_ref<void(ImplicitLocOpBuilder &)> otherwise) {
  auto ifOp = scf::IfOp::create(b, condition, /*withElseRegion=*/true);
  ImplicitLocOpBuilder inner(b.getLoc(), b.getContext());
  inner.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  then(inner);
  inner.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  otherwise(inner);
}

} // namespace soac::kernels
