//===- RowKernel.cpp - maps over rows as one thread block per row ---------===//
#include "passes/Conversion/SoacToGPU/RowKernel.h"

#include "passes/Conversion/SoacToGPU/BlockPrimitives.h"
#include "passes/Conversion/SoacToGPU/Kernel.h"
#include "passes/Utils/Bodies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace soac::kernels {
namespace {

bool isVectorType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() == 1;
}

LogicalResult unsupportedInRow(Operation *op, MapOp map, const Twine &why) {
  InFlightDiagnostic error =
      op->emitOpError() << "is not supported by the GPU lowering inside a map "
                           "over rows: "
                        << why;
  error.attachNote(map.getLoc()) << "in the body of this map";
  return error;
}

/// The body or operator of a SOAC nested in `map`'s body runs per element
/// of a row: scalar code reading only values of the row body that are
/// scalars (vectors come in as the nested SOAC's inputs).
LogicalResult checkNestedRegion(Region &region, Operation *nested, MapOp map,
                                bool mayUseRowScalars) {
  if (failed(checkScalarCode(region, nested)))
    return failure();
  SetVector<Value> above;
  getUsedValuesDefinedAbove(region, above);
  for (Value value : above) {
    if (!definedIn(map, value))
      continue;
    if (isa<TensorType>(value.getType()))
      return unsupportedInRow(nested, map,
                              "its body reads a vector of the row; pass it "
                              "as an input instead");
    if (!mayUseRowScalars)
      return unsupportedInRow(nested, map,
                              "its operator uses a value computed per row");
  }
  return success();
}

/// Tensors read by scalar ops of the row body must be vectors of the row or
/// tensors from outside the map; no op may make a tensor.
LogicalResult checkScalarOp(Operation *op, MapOp map) {
  WalkResult result = op->walk([&](Operation *inner) {
    bool read = isa<tensor::ExtractOp, tensor::DimOp>(inner);
    if (llvm::any_of(inner->getResultTypes(),
                     [](Type t) { return isa<TensorType>(t); }) ||
        (!read && llvm::any_of(inner->getOperandTypes(), [](Type t) {
          return isa<TensorType>(t);
        }))) {
      (void)unsupportedInRow(inner, map,
                             "code per row may compute scalars, read "
                             "vectors and run soac.map/reduce/scan on them");
      return WalkResult::interrupt();
    }
    if (read && inner != op && definedIn(map, inner->getOperand(0))) {
      (void)unsupportedInRow(inner, map,
                             "a vector of the row is read inside a nested "
                             "region; read it in the map's body");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

/// Builds the body of one block: row `row` of the map.
class RowBuilder {
public:
  RowBuilder(MapOp map, const ThreadIds &ids, Value row,
             ArrayRef<Value> outputs)
      : map(map), ids(ids), row(row), outputs(outputs) {}

  void bindRow(ImplicitLocOpBuilder &b, const ElementReader &scalarRows) {
    Block &body = map.getBody().front();
    SmallVector<Value> scalarArgs = scalarRows.read(b, row);
    size_t next = 0;
    for (auto [arg, input] : llvm::zip(body.getArguments(), map.getInputs())) {
      if (isVectorType(arg.getType()))
        matrixRows[arg] = input;
      else
        scalars.map(arg, scalarArgs[next++]);
    }
  }

  void build(ImplicitLocOpBuilder &b, ArrayRef<ValueRange> scratch) {
    Block &body = map.getBody().front();
    size_t nextScratch = 0;
    for (Operation &op : body.without_terminator()) {
      if (auto inner = dyn_cast<MapOp>(op)) {
        for (Value result : inner.getResults())
          lazy[result] = inner;
      } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
        scalars.map(reduce.getResults(),
                    blockReduceRow(b, reduce, scratch[nextScratch++]));
      } else if (auto scan = dyn_cast<ScanOp>(op)) {
        blockScanRow(b, scan, scratch[nextScratch++]);
      } else if (auto extract = dyn_cast<tensor::ExtractOp>(op);
                 extract && definedIn(map, extract.getTensor())) {
        scalars.map(extract.getResult(),
                    element(b, extract.getTensor(),
                            scalars.lookupOrDefault(extract.getIndices()[0])));
      } else if (auto dim = dyn_cast<tensor::DimOp>(op);
                 dim && definedIn(map, dim.getSource())) {
        scalars.map(dim.getResult(), length(b, dim.getSource()));
      } else {
        b.clone(op, scalars);
      }
    }
    yield(b, body.getTerminator()->getOperands());
  }

private:
  /// Element `j` of a vector of the row body, recomputed for inner maps.
  Value element(ImplicitLocOpBuilder &b, Value vector, Value j) {
    if (Value matrix = matrixRows.lookup(vector))
      return tensor::ExtractOp::create(b, matrix, ValueRange{row, j});
    if (MapOp inner = lazy.lookup(vector)) {
      SmallVector<Value> args = llvm::map_to_vector(
          inner.getInputs(), [&](Value in) { return element(b, in, j); });
      IRMapping mapping = scalars;
      Block &block = inner.getBody().front();
      mapping.map(block.getArguments(), args);
      for (Operation &op : block.without_terminator())
        b.clone(op, mapping);
      Value yielded = block.getTerminator()->getOperand(
          cast<OpResult>(vector).getResultNumber());
      return mapping.lookupOrDefault(yielded);
    }
    // A tensor from outside the map (its reads become buffer loads).
    return tensor::ExtractOp::create(b, vector, ValueRange{j});
  }

  Value length(ImplicitLocOpBuilder &b, Value vector) {
    if (Value matrix = matrixRows.lookup(vector))
      return tensor::DimOp::create(b, matrix, 1);
    if (MapOp inner = lazy.lookup(vector))
      return length(b, inner.getInputs()[0]);
    if (auto scan = vector.getDefiningOp<ScanOp>();
        scan && definedIn(map, scan.getResult(0)))
      return length(b, scan.getInputs()[0]);
    return tensor::DimOp::create(b, vector, 0);
  }

  Combiner combinerOf(Region &body, ValueRange inits) {
    SmallVector<Value> neutral = llvm::map_to_vector(
        inits, [&](Value v) { return scalars.lookupOrDefault(v); });
    return Combiner(body, neutral);
  }

  /// The block's threads fold elements of the row, then combine.
  SmallVector<Value> blockReduceRow(ImplicitLocOpBuilder &b, ReduceOp reduce,
                                    ValueRange scratch) {
    Combiner combiner = combinerOf(reduce.getBody(), reduce.getInits());
    Value m = length(b, reduce.getInputs()[0]);
    Value threads = indexConstant(b, kBlockSize);
    auto read = [&](ImplicitLocOpBuilder &ib, Value j) {
      return llvm::map_to_vector(reduce.getInputs(),
                                 [&](Value in) { return element(ib, in, j); });
    };
    SmallVector<Value> acc;
    if (combiner.isCommutative()) {
      acc = foldRows(b, combiner, combiner.neutralElements(), ids.thread, m,
                     threads, read);
    } else {
      auto [lo, hi] = contiguousRange(b, ids.thread, threads, m);
      acc = foldRows(b, combiner, combiner.neutralElements(), lo, hi,
                     indexConstant(b, 1), read);
    }
    return blockReduce(b, combiner, ids.thread, acc, scratch);
  }

  /// Each thread scans a contiguous range of the row from its offset in the
  /// block, writing the result rows the body yields.
  void blockScanRow(ImplicitLocOpBuilder &b, ScanOp scan, ValueRange scratch) {
    Combiner combiner = combinerOf(scan.getBody(), scan.getInits());
    Value m = length(b, scan.getInputs()[0]);
    auto [lo, hi] = contiguousRange(b, ids.thread,
                                    indexConstant(b, kBlockSize), m);
    auto read = [&](ImplicitLocOpBuilder &ib, Value j) {
      return llvm::map_to_vector(scan.getInputs(),
                                 [&](Value in) { return element(ib, in, j); });
    };
    Value one = indexConstant(b, 1);
    SmallVector<Value> acc =
        foldRows(b, combiner, combiner.neutralElements(), lo, hi, one, read);
    SmallVector<Value> offset =
        blockExclusiveScan(b, combiner, ids.thread, acc, scratch).first;
    Operation *terminator = map.getBody().front().getTerminator();
    scf::ForOp::create(
        b, lo, hi, one, offset,
        [&](OpBuilder &nested, Location loc, Value j, ValueRange running) {
          ImplicitLocOpBuilder ib(loc, nested);
          SmallVector<Value> next = combiner.combine(ib, running, read(ib, j));
          for (OpOperand &yielded : terminator->getOpOperands())
            if (auto result = dyn_cast<OpResult>(yielded.get());
                result && result.getOwner() == scan)
              memref::StoreOp::create(
                  ib, next[result.getResultNumber()],
                  outputs[yielded.getOperandNumber()], ValueRange{row, j});
          scf::YieldOp::create(ib, next);
        });
  }

  void yield(ImplicitLocOpBuilder &b, ValueRange values) {
    for (auto [value, output] : llvm::zip(values, outputs)) {
      if (!isa<TensorType>(value.getType())) {
        Value scalar = scalars.lookupOrDefault(value);
        ifThen(b, isThreadZero(b, ids), [&](ImplicitLocOpBuilder &ib) {
          memref::StoreOp::create(ib, scalar, output, ValueRange{row});
        });
        continue;
      }
      if (auto scan = value.getDefiningOp<ScanOp>();
          scan && definedIn(map, value))
        continue; // written by the scan
      // The block's threads write the row in stride: coalesced.
      scf::ForOp::create(
          b, ids.thread, length(b, value), indexConstant(b, kBlockSize),
          ValueRange{},
          [&](OpBuilder &nested, Location loc, Value j, ValueRange) {
            ImplicitLocOpBuilder ib(loc, nested);
            memref::StoreOp::create(ib, element(ib, value, j), output,
                                    ValueRange{row, j});
            scf::YieldOp::create(ib);
          });
    }
  }

  MapOp map;
  const ThreadIds &ids;
  Value row;
  ArrayRef<Value> outputs;
  IRMapping scalars;
  DenseMap<Value, Value> matrixRows; // row argument -> its matrix input
  DenseMap<Value, MapOp> lazy;       // inner map result -> the map
};

/// Host-side length of a vector of the row body.
Value hostLength(ImplicitLocOpBuilder &host, MapOp map, Value vector) {
  if (auto arg = dyn_cast<BlockArgument>(vector);
      arg && arg.getOwner()->getParent() == &map.getBody())
    return tensor::DimOp::create(host, map.getInputs()[arg.getArgNumber()], 1);
  if (Operation *producer = vector.getDefiningOp();
      producer && definedIn(map, vector) && isa<MapOp, ScanOp>(producer))
    return hostLength(host, map, producer->getOperand(0));
  return tensor::DimOp::create(host, vector, 0);
}

} // namespace

LogicalResult checkRowKernel(MapOp map) {
  // One block per row: a grid holds at most 2^31 - 1 blocks. (Such a map
  // then runs one thread per row, where the body allows it.)
  constexpr int64_t kMaxBlocks = (int64_t(1) << 31) - 1;
  int64_t rows = cast<RankedTensorType>(map.getResultTypes().front()).getDimSize(0);
  for (Value input : map.getInputs())
    rows = std::max(rows, cast<RankedTensorType>(input.getType()).getDimSize(0));
  if (rows > kMaxBlocks)
    return map.emitOpError() << "has " << rows
                             << " rows, more than the blocks a GPU grid holds ("
                             << kMaxBlocks << ") for one block per row";
  for (Type type : llvm::concat<Type>(llvm::to_vector(map.getInputs().getTypes()),
                                      llvm::to_vector(map.getResultTypes())))
    if (cast<RankedTensorType>(type).getRank() > 2)
      return map.emitOpError()
             << "is not supported by the GPU lowering: rows of rank above 1 ("
             << type << ")";
  Block &body = map.getBody().front();
  for (Operation &op : body.without_terminator()) {
    if (auto inner = dyn_cast<MapOp>(op)) {
      if (!hasScalarRows(inner))
        return unsupportedInRow(inner, map, "a nested map must map scalars");
      if (failed(checkNestedRegion(inner.getBody(), inner, map, true)))
        return failure();
      continue;
    }
    if (isa<ReduceOp, ScanOp>(op)) {
      if (!llvm::all_of(op.getOperandTypes(), [](Type t) {
            return !isa<TensorType>(t) || isVectorType(t);
          }))
        return unsupportedInRow(&op, map, "it must combine scalars");
      if (failed(checkNestedRegion(op.getRegion(0), &op, map, false)))
        return failure();
      if (isa<ScanOp>(op) && llvm::any_of(op.getUsers(), [&](Operation *user) {
            return user != body.getTerminator();
          }))
        return unsupportedInRow(&op, map,
                                "a scan per row must be yielded, not read");
      continue;
    }
    if (isa<tensor::ExtractOp, tensor::DimOp>(op) &&
        isVectorType(op.getOperand(0).getType()))
      continue;
    if (failed(checkScalarOp(&op, map)))
      return failure();
  }
  return success();
}

bool fitsRowKernel(MapOp map) {
  ScopedDiagnosticHandler silence(map.getContext(),
                                  [](Diagnostic &) { return success(); });
  return succeeded(checkRowKernel(map));
}

void lowerRowKernel(MapOp map) {
  ImplicitLocOpBuilder host(map.getLoc(), map);
  Buffers buffers;
  buffers.addFreeTensors(host, map.getBody());
  SmallVector<Value> scalarInputs, matrixInputs;
  for (Value input : map.getInputs())
    (isVectorType(input.getType()) ? scalarInputs : matrixInputs)
        .push_back(input);
  for (Value matrix : matrixInputs)
    buffers.of(host, matrix);
  ElementReader scalarRows(host, buffers, scalarInputs, map);
  Value n = scalarInputs.empty()
                ? Value(tensor::DimOp::create(host, matrixInputs.front(), 0))
                : scalarRows.size(host);

  Operation *terminator = map.getBody().front().getTerminator();
  SmallVector<Value> outputs;
  for (auto [type, yielded] :
       llvm::zip(map.getResultTypes(), terminator->getOperands())) {
    auto tensorType = cast<RankedTensorType>(type);
    SmallVector<Value> sizes{n};
    if (tensorType.getRank() == 2)
      sizes.push_back(hostLength(host, map, yielded));
    outputs.push_back(
        allocBuffer(host, tensorType, dynamicSizes(tensorType, sizes)));
  }
  // Workgroup buffers for each block-wide reduce or scan of the body.
  SmallVector<Type> workgroup;
  SmallVector<std::pair<size_t, size_t>> slices;
  for (Operation &op : map.getBody().front().without_terminator()) {
    if (!isa<ReduceOp, ScanOp>(op))
      continue;
    auto inits = isa<ReduceOp>(op) ? cast<ReduceOp>(op).getInits()
                                   : cast<ScanOp>(op).getInits();
    SmallVector<Type> types = Combiner(op.getRegion(0), inits).workgroupTypes();
    slices.push_back({workgroup.size(), types.size()});
    llvm::append_range(workgroup, types);
  }
  Value blocks = arith::MaxUIOp::create(host, n, indexConstant(host, 1));
  launchKernel(host, blocks, workgroup, buffers,
               [&](ImplicitLocOpBuilder &b, const ThreadIds &ids,
                   ValueRange attributions) {
                 // All threads of a block take the same branch (barriers).
                 ifThen(b, lessThan(b, ids.block, n),
                        [&](ImplicitLocOpBuilder &ib) {
                          SmallVector<ValueRange> scratch;
                          for (auto [start, size] : slices)
                            scratch.push_back(
                                attributions.slice(start, size));
                          RowBuilder rows(map, ids, ids.block, outputs);
                          rows.bindRow(ib, scalarRows);
                          rows.build(ib, scratch);
                        });
               });
  replaceSoac(map, asTensors(host, outputs, map.getResultTypes()),
              &scalarRows);
}

} // namespace soac::kernels
