//===- ThreadKernel.cpp - maps over rows as one thread per row ------------===//
//
// Longer than the others (about 1,200 lines) and kept whole: it has one
// job, the kernel of ThreadKernel.h, in three parts that share private
// types: the shapes known before the kernel runs (Shapes), the check of what
// one thread can run (checkThreadBlock, which fills Shapes) and the thread's
// code (ThreadCode, the closures, views and scratch memory of the body,
// about 650 lines of one class). Splitting it would put those types in a
// header that nothing else reads.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToGPU/ThreadKernel.h"

#include "passes/Conversion/RuntimeChecks.h"
#include "passes/Conversion/SoacToGPU/BlockPrimitives.h"
#include "passes/Conversion/SoacToGPU/Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

#include <functional>
#include <memory>
#include <optional>
#include <vector>

using namespace mlir;

namespace soac::kernels {
namespace {

/// Threads per block of a thread kernel. A row is a long computation and
/// such maps have few rows (GMM's 10,000 points): blocks of kBlockSize
/// threads put 40 blocks on an H200's 132 multiprocessors and left the
/// others idle; blocks of 64 spread 157. Still two warps each, and up to 32
/// resident blocks fill a multiprocessor where rows are many.
constexpr int64_t kThreadBlockSize = 64;

bool isTensor(Type type) { return isa<TensorType>(type); }

LogicalResult unsupportedInThread(Operation *op, MapOp map, const Twine &why) {
  InFlightDiagnostic error =
      op->emitOpError() << "is not supported by the GPU lowering inside a map "
                           "run by one thread per row: "
                        << why;
  error.attachNote(map.getLoc()) << "in the body of this map";
  return error;
}

//===----------------------------------------------------------------------===//
// Shapes, known before the kernel runs
//===----------------------------------------------------------------------===//

/// Where one size of a tensor of the body comes from: a dimension of a tensor
/// the kernel reads, an index computed outside the map, a constant, the
/// product of `factors` (a collapsed dimension), or result `result` of
/// `computed`, an arith op of the body computed on the host from `factors`
/// (sizes the body derives from others, as soac-flatten's reshapes do).
struct SizeSource {
  Value tensor;
  int64_t dim = 0;
  Value index;
  int64_t constant = 0;
  std::vector<SizeSource> factors;
  Operation *computed = nullptr;
  unsigned result = 0;
};
using Shape = SmallVector<SizeSource>;

/// The shapes of the tensors of `map`'s body, traced back to values defined
/// outside it; failure when a shape depends on what the body computes.
class Shapes {
public:
  explicit Shapes(MapOp map) : map(map) {}

  FailureOr<Shape> of(Value tensor) {
    if (auto found = known.find(tensor); found != known.end())
      return found->second;
    if (!isa<RankedTensorType>(tensor.getType()))
      return failure(); // no sizes to trace
    FailureOr<Shape> shape = compute(tensor);
    if (failed(shape))
      return failure();
    // Static sizes are constants whatever the source.
    auto type = cast<RankedTensorType>(tensor.getType());
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (!type.isDynamicDim(d))
        (*shape)[d] = constantSize(type.getDimSize(d));
    known[tensor] = *shape;
    return shape;
  }

private:
  static SizeSource constantSize(int64_t value) {
    SizeSource size;
    size.constant = value;
    return size;
  }

  FailureOr<Shape> compute(Value tensor) {
    auto type = cast<RankedTensorType>(tensor.getType());
    Shape shape;
    if (!definedIn(map, tensor)) {
      for (int64_t d = 0; d < type.getRank(); ++d)
        shape.push_back(SizeSource{tensor, d, {}, 0});
      return shape;
    }
    // A row of an input of this map or of a map nested in it.
    if (auto arg = dyn_cast<BlockArgument>(tensor)) {
      auto parent = dyn_cast<MapOp>(arg.getOwner()->getParentOp());
      if (!parent)
        return failure();
      FailureOr<Shape> input = of(parent.getInputs()[arg.getArgNumber()]);
      if (failed(input))
        return failure();
      return Shape(llvm::drop_begin(*input));
    }
    Operation *producer = tensor.getDefiningOp();
    if (auto inner = dyn_cast<MapOp>(producer)) {
      FailureOr<Shape> outer = of(inner.getInputs()[0]);
      if (failed(outer))
        return failure();
      shape.push_back(outer->front());
      Value yielded = inner.getBody().front().getTerminator()->getOperand(
          cast<OpResult>(tensor).getResultNumber());
      if (isTensor(yielded.getType())) {
        FailureOr<Shape> row = of(yielded);
        if (failed(row))
          return failure();
        llvm::append_range(shape, *row);
      }
      return shape;
    }
    // A fold of vector rows has the shape of its initial row.
    if (auto reduce = dyn_cast<ReduceOp>(producer))
      return of(reduce.getInits()[cast<OpResult>(tensor).getResultNumber()]);
    if (auto insert = dyn_cast<tensor::InsertOp>(producer))
      return of(insert.getDest());
    if (auto histogram = dyn_cast<ReduceByIndexOp>(producer))
      return of(histogram.getDests()[0]);
    if (auto castOp = dyn_cast<tensor::CastOp>(producer))
      return of(castOp.getSource());
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(producer)) {
      FailureOr<Shape> source = of(collapse.getSrc());
      if (failed(source))
        return failure();
      for (const ReassociationIndices &group :
           collapse.getReassociationIndices()) {
        if (group.size() == 1) {
          shape.push_back((*source)[group.front()]);
          continue;
        }
        SizeSource product;
        for (int64_t d : group)
          product.factors.push_back((*source)[d]);
        shape.push_back(std::move(product));
      }
      return shape;
    }
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(producer)) {
      for (OpFoldResult size : expand.getMixedOutputShape()) {
        FailureOr<SizeSource> source = sizeOf(size);
        if (failed(source))
          return failure();
        shape.push_back(*source);
      }
      return shape;
    }
    if (isa<tensor::FromElementsOp>(producer)) {
      for (int64_t size : type.getShape())
        shape.push_back(constantSize(size));
      return shape;
    }
    if (auto iota = dyn_cast<IotaOp>(producer)) {
      if (!iota.getSize())
        return Shape{constantSize(type.getDimSize(0))};
      FailureOr<SizeSource> size = sizeOf(iota.getSize());
      if (failed(size))
        return failure();
      return Shape{*size};
    }
    if (auto splat = dyn_cast<tensor::SplatOp>(producer)) {
      auto dynamic = splat.getDynamicSizes().begin();
      for (int64_t d = 0; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d)) {
          shape.push_back(constantSize(type.getDimSize(d)));
          continue;
        }
        FailureOr<SizeSource> size = sizeOf(*dynamic++);
        if (failed(size))
          return failure();
        shape.push_back(*size);
      }
      return shape;
    }
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(producer)) {
      llvm::SmallBitVector dropped = slice.getDroppedDims();
      for (auto [d, size] : llvm::enumerate(slice.getMixedSizes())) {
        if (dropped.test(d))
          continue;
        FailureOr<SizeSource> source = sizeOf(size);
        if (failed(source))
          return failure();
        shape.push_back(*source);
      }
      return shape;
    }
    return failure();
  }

  /// A size given as a constant or an index value (below).
  FailureOr<SizeSource> sizeOf(OpFoldResult size) {
    if (std::optional<int64_t> value = getConstantIntValue(size))
      return constantSize(*value);
    return sizeOf(cast<Value>(size));
  }

  /// An index value used as a size: from outside the map, or a dimension of
  /// a tensor whose shape is known.
  FailureOr<SizeSource> sizeOf(Value index) {
    if (!definedIn(map, index))
      return SizeSource{{}, 0, index, 0};
    if (auto dim = index.getDefiningOp<tensor::DimOp>()) {
      std::optional<int64_t> d = dim.getConstantIndex();
      FailureOr<Shape> source = of(dim.getSource());
      // A dimension past the rank (the verifier rejects it, but IR built
      // without verification may hold one) has no size to trace.
      if (!d || failed(source) || *d < 0 ||
          *d >= static_cast<int64_t>(source->size()))
        return failure();
      return (*source)[*d];
    }
    // Arithmetic the host repeats before the launch, whether or not a thread
    // runs it: nothing that can trap there (signed division can overflow;
    // an unsigned divisor of zero is made one: see materialize).
    Operation *def = index.getDefiningOp();
    if (!def || !isa<arith::ArithDialect>(def->getDialect()) ||
        def->getNumRegions() != 0 || !isMemoryEffectFree(def) ||
        isa<arith::DivSIOp, arith::RemSIOp, arith::CeilDivSIOp,
            arith::FloorDivSIOp>(def))
      return failure();
    SizeSource computed;
    computed.computed = def;
    computed.result = cast<OpResult>(index).getResultNumber();
    for (Value operand : def->getOperands()) {
      FailureOr<SizeSource> source = sizeOf(operand);
      if (failed(source))
        return failure();
      computed.factors.push_back(*source);
    }
    return computed;
  }

  MapOp map;
  DenseMap<Value, Shape> known;
};

/// `shape` as index values at the host builder's insertion point (before
/// the kernel).
Value materialize(ImplicitLocOpBuilder &host, const SizeSource &size) {
  if (size.tensor)
    return tensor::DimOp::create(host, size.tensor, size.dim);
  if (size.index)
    return size.index;
  if (size.computed) {
    IRMapping operands;
    for (auto [operand, factor] :
         llvm::zip(size.computed->getOperands(), size.factors))
      operands.map(operand, materialize(host, factor));
    // The host computes it even when no thread does (no rows): a divisor of
    // zero there would trap, so it divides by one instead.
    if (isa<arith::DivUIOp, arith::RemUIOp, arith::CeilDivUIOp>(
            size.computed)) {
      Value divisor = operands.lookup(size.computed->getOperand(1));
      Value zero = arith::ConstantOp::create(
          host, divisor.getType(), host.getZeroAttr(divisor.getType()));
      Value one = arith::ConstantOp::create(
          host, divisor.getType(), host.getOneAttr(divisor.getType()));
      Value isZero = arith::CmpIOp::create(host, arith::CmpIPredicate::eq,
                                           divisor, zero);
      operands.map(size.computed->getOperand(1),
                   arith::SelectOp::create(host, isZero, one, divisor));
    }
    return host.clone(*size.computed, operands)->getResult(size.result);
  }
  if (size.factors.empty())
    return indexConstant(host, size.constant);
  Value product = materialize(host, size.factors.front());
  for (const SizeSource &factor : llvm::drop_begin(size.factors))
    product = arith::MulIOp::create(host, product, materialize(host, factor));
  return product;
}

SmallVector<Value> materialize(ImplicitLocOpBuilder &host, const Shape &shape) {
  return llvm::map_to_vector(
      shape, [&](const SizeSource &size) { return materialize(host, size); });
}

//===----------------------------------------------------------------------===//
// What one thread can run
//===----------------------------------------------------------------------===//

/// Regions of scalar ops (scf.if, scf.for...) and reduce operators may read
/// tensors from outside the map only: the body's tensors are not in memory.
LogicalResult checkReadsOutside(Region &region, Operation *op, MapOp map) {
  SetVector<Value> above;
  getUsedValuesDefinedAbove(region, above);
  for (Value value : above)
    if (isTensor(value.getType()) && definedIn(map, value))
      return unsupportedInThread(op, map,
                                 "a tensor of the row is read inside a nested "
                                 "region; read it in the map's body");
  return success();
}

/// Slices are read in place, so their source must be in memory, not a map
/// recomputed per element (through the rows of nested maps' inputs).
bool slicesComputedTensor(tensor::ExtractSliceOp slice, MapOp map) {
  Value source = slice.getSource();
  while (definedIn(map, source)) {
    if (auto inner = source.getDefiningOp<tensor::ExtractSliceOp>()) {
      source = inner.getSource();
      continue;
    }
    auto arg = dyn_cast<BlockArgument>(source);
    if (!arg)
      return true;
    auto parent = dyn_cast<MapOp>(arg.getOwner()->getParentOp());
    if (!parent || parent == map)
      return false;
    source = parent.getInputs()[arg.getArgNumber()];
  }
  return false;
}

LogicalResult checkThreadBlock(Block &block, MapOp map, Shapes &shapes) {
  auto knownShape = [&](Operation *op, Value tensor) {
    auto type = dyn_cast<RankedTensorType>(tensor.getType());
    if (!type || type.getRank() == 0)
      return unsupportedInThread(op, map, "its tensors must have a rank");
    if (succeeded(shapes.of(tensor)))
      return success();
    return unsupportedInThread(op, map,
                               "the shape of its tensors must follow from the "
                               "sizes of the tensors the map reads");
  };
  for (Operation &op : block.without_terminator()) {
    if (auto inner = dyn_cast<MapOp>(op)) {
      for (Value result : inner.getResults())
        if (failed(knownShape(inner, result)))
          return failure();
      if (failed(checkThreadBlock(inner.getBody().front(), map, shapes)))
        return failure();
      continue;
    }
    if (auto reduce = dyn_cast<ReduceOp>(op)) {
      Region *scalarOp = scalarOperator(reduce);
      if (!scalarOp)
        return unsupportedInThread(reduce, map,
                                   "it must combine scalars, or vectors "
                                   "elementwise");
      if (failed(knownShape(reduce, reduce.getInputs()[0])) ||
          llvm::any_of(reduce.getResults(),
                       [&](Value result) {
                         return isTensor(result.getType()) &&
                                failed(knownShape(reduce, result));
                       }) ||
          failed(checkScalarCode(*scalarOp, reduce)) ||
          failed(checkReadsOutside(*scalarOp, reduce, map)))
        return failure();
      continue;
    }
    if (isa<tensor::ExtractOp>(op)) {
      if (failed(knownShape(&op, op.getOperand(0))))
        return failure();
      continue;
    }
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op)) {
      // A view of its source read at row-major positions of the leading
      // dimensions it merges or splits (as sparse adjoints flatten their
      // batches, and soac-flatten a nest's rows).
      SmallVector<ReassociationIndices> groups =
          isa<tensor::CollapseShapeOp>(op)
              ? cast<tensor::CollapseShapeOp>(op).getReassociationIndices()
              : cast<tensor::ExpandShapeOp>(op).getReassociationIndices();
      if (llvm::any_of(llvm::drop_begin(groups),
                       [](const ReassociationIndices &group) {
                         return group.size() != 1;
                       }))
        return unsupportedInThread(&op, map,
                                   "it may merge or split its leading "
                                   "dimension only");
      if (failed(knownShape(&op, op.getOperand(0))) ||
          failed(knownShape(&op, op.getResult(0))))
        return failure();
      continue;
    }
    if (isa<IotaOp, tensor::SplatOp, tensor::FromElementsOp, tensor::CastOp,
            tensor::InsertOp>(op)) {
      if (failed(knownShape(&op, op.getResult(0))))
        return failure();
      continue;
    }
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      std::optional<int64_t> d = dim.getConstantIndex();
      if (!d)
        return unsupportedInThread(dim, map, "the dimension must be constant");
      if (failed(knownShape(dim, dim.getSource())))
        return failure();
      // The kernel reads the source's sizes at `d` (soac's verifier rejects
      // such a dim; this keeps unverified IR from indexing past them).
      auto type = cast<RankedTensorType>(dim.getSource().getType());
      if (*d < 0 || *d >= type.getRank())
        return dim.emitOpError()
               << "index " << *d << " is out of range for its source of type "
               << type << ": expected an index below its rank, "
               << type.getRank();
      continue;
    }
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
      if (!llvm::all_of(slice.getMixedStrides(), [](OpFoldResult stride) {
            return getConstantIntValue(stride) == 1;
          }))
        return unsupportedInThread(slice, map, "its strides must be 1");
      if (failed(knownShape(slice, slice.getSource())) ||
          failed(knownShape(slice, slice.getResult())))
        return failure();
      if (slicesComputedTensor(slice, map))
        return unsupportedInThread(slice, map,
                                   "it slices a tensor the body computes");
      continue;
    }
    if (auto histogram = dyn_cast<ReduceByIndexOp>(op)) {
      if (histogram.getDests().size() != 1 ||
          cast<RankedTensorType>(histogram.getDests()[0].getType())
                  .getRank() != 1)
        return unsupportedInThread(histogram, map,
                                   "it must combine scalars into one "
                                   "destination");
      if (failed(knownShape(histogram, histogram.getIndices())) ||
          failed(knownShape(histogram, histogram.getValues()[0])) ||
          failed(knownShape(histogram, histogram.getResult(0))) ||
          failed(checkScalarCode(histogram.getBody(), histogram)) ||
          failed(checkReadsOutside(histogram.getBody(), histogram, map)))
        return failure();
      continue;
    }
    if (isa<ScanOp>(op))
      return unsupportedInThread(&op, map,
                                 "a scan per row must be yielded by a map "
                                 "whose body nests no deeper (one block per "
                                 "row)");
    if (llvm::any_of(op.getResultTypes(), isTensor) ||
        llvm::any_of(op.getOperandTypes(), isTensor))
      return unsupportedInThread(
          &op, map,
          "code per row may compute scalars; read, slice, insert into, "
          "reshape (tensor.collapse_shape, tensor.expand_shape) and build "
          "tensors (tensor.from_elements, tensor.splat, soac.iota); and run "
          "soac.map, soac.reduce and soac.reduce_by_index on them");
    for (Region &region : op.getRegions())
      if (failed(checkScalarCode(region, &op)) ||
          failed(checkReadsOutside(region, &op, map)))
        return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The thread's code
//===----------------------------------------------------------------------===//

struct Frame;
using FramePtr = std::shared_ptr<Frame>;

/// A tensor of the body inside the kernel: a view of where its elements
/// come from, which depends on `kind`:
///  - Buffer: the buffer of `tensor` (a tensor the kernel reads), or the
///    memref `scratch` (a nested map's results, materialized per thread), at
///    `indices`, of which the dimensions in `open` are still to be indexed
///    (their entries are offsets);
///  - Map: result `result` of the soac.map `op`, recomputed in `scope` on
///    the elements of `inputs`;
///  - Generated: `op` (soac.iota, tensor.splat, tensor.from_elements) in
///    `scope`, at `indices`;
///  - Fold: the soac.reduce `op` of vector rows, folding element `indices`
///    of each row of `inputs[0]` onto that of `inputs[1]` (the initial row);
///  - Inserted: the tensor.insert `op` in `scope`: its scalar where
///    `indices` are its indices, else the element of `inputs[0]` (its
///    destination);
///  - Collapsed: the tensor.collapse_shape `op` of `inputs[0]`, whose
///    first `result` dimensions it merges: an element of the merged
///    dimension is the source's at that row-major position;
///  - Expanded: the tensor.expand_shape `op` of `inputs[0]`, whose first
///    dimension it splits into dimensions of sizes `split`: once `indices`
///    hold one index of each, the source's element at their row-major
///    position;
/// Generated, Fold and Inserted views collect `indices` until the last
/// dimension is indexed, Expanded ones until the split ones are.
struct View {
  enum class Kind {
    Buffer,
    Map,
    Generated,
    Fold,
    Inserted,
    Collapsed,
    Expanded
  };
  Kind kind = Kind::Buffer;

  Value tensor;
  Value scratch;
  SmallVector<Value> indices;
  SmallVector<unsigned> open;

  Operation *op = nullptr;
  unsigned result = 0;
  FramePtr scope;
  std::vector<View> inputs;

  /// Host values: the sizes of the dimensions still to be indexed.
  SmallVector<Value> sizes;
  /// Host values: an Expanded view's sizes of the dimensions it splits.
  SmallVector<Value> split;
};

/// What a value of the body is in the kernel: a scalar or a view.
struct Entry {
  Value scalar;
  std::optional<View> view;
};

/// The values of one run of a block (a map's body for one element, an
/// operator's for one step), inside the scope that defined the block.
struct Frame {
  FramePtr parent;
  /// The element of its map this frame computes (null for the thread's own
  /// row and for operator steps).
  Value index;
  DenseMap<Value, Value> scalars;
  DenseMap<Value, View> views;
};

Value allTrue(ImplicitLocOpBuilder &b, ValueRange conditions) {
  Value all = conditions.front();
  for (Value condition : conditions.drop_front())
    all = arith::AndIOp::create(b, all, condition);
  return all;
}

class ThreadCode {
public:
  ThreadCode(ImplicitLocOpBuilder &host, Shapes &shapes, MapOp map, Value n) {
    // Every size the kernel needs, computed on the host before the launch.
    auto add = [&](Value tensor) {
      if (!sizes.count(tensor))
        sizes[tensor] = materialize(host, *shapes.of(tensor));
    };
    std::function<void(Region &)> addAll = [&](Region &region) {
      region.walk<WalkOrder::PreOrder>([&](Operation *op) {
        for (Value value :
             llvm::concat<Value>(op->getOperands(), op->getResults()))
          if (isTensor(value.getType()))
            add(value);
        // Only the scalar operator of a fold of vector rows runs.
        auto reduce = dyn_cast<ReduceOp>(op);
        if (!reduce)
          return WalkResult::advance();
        addAll(*scalarOperator(reduce));
        return WalkResult::skip();
      });
    };
    addAll(map.getBody());
    // Inputs of scalars are read by an ElementReader, which may recompute
    // them: no size of theirs is taken.
    for (Value input : map.getInputs())
      if (cast<RankedTensorType>(input.getType()).getRank() > 1)
        add(input);
    allocateScratch(host, map, n);
  }

  /// Runs the ops of `block` (not its terminator) in `frame`.
  void run(ImplicitLocOpBuilder &b, Block &block, const FramePtr &frame) {
    for (Operation &op : block.without_terminator()) {
      if (auto inner = dyn_cast<MapOp>(op)) {
        std::vector<View> inputs;
        for (Value input : inner.getInputs())
          inputs.push_back(view(frame, input));
        if (scratch.count(inner)) {
          computeIntoScratch(b, inner, inputs, frame);
          continue;
        }
        for (OpResult result : inner->getResults()) {
          View lazy = deferred(View::Kind::Map, inner, frame, result);
          lazy.result = result.getResultNumber();
          lazy.inputs = inputs;
          frame->views[result] = lazy;
        }
      } else if (auto reduce = dyn_cast<ReduceOp>(op)) {
        if (scalarOperator(reduce) != &reduce.getBody()) {
          View folded =
              deferred(View::Kind::Fold, reduce, frame, reduce.getResult(0));
          folded.inputs = {view(frame, reduce.getInputs()[0]),
                           view(frame, reduce.getInits()[0])};
          frame->views[reduce.getResult(0)] = folded;
          continue;
        }
        SmallVector<Value> results = fold(b, reduce, frame);
        for (auto [result, value] : llvm::zip(reduce.getResults(), results))
          frame->scalars[result] = value;
      } else if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
        Entry entry{{}, view(frame, extract.getTensor())};
        for (Value index : extract.getIndices())
          entry = element(b, *entry.view, scalar(frame, index));
        frame->scalars[extract.getResult()] = entry.scalar;
      } else if (auto dim = dyn_cast<tensor::DimOp>(op)) {
        frame->scalars[dim.getResult()] =
            sizes.lookup(dim.getSource())[*dim.getConstantIndex()];
      } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
        frame->views[slice.getResult()] = sliced(b, frame, slice);
      } else if (auto castOp = dyn_cast<tensor::CastOp>(op)) {
        frame->views[castOp.getResult()] = view(frame, castOp.getSource());
      } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
        View collapsed = deferred(View::Kind::Collapsed, collapse, frame,
                                  collapse.getResult());
        collapsed.inputs = {view(frame, collapse.getSrc())};
        collapsed.result = collapse.getReassociationIndices().front().size();
        frame->views[collapse.getResult()] = collapsed;
      } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
        View expanded = deferred(View::Kind::Expanded, expand, frame,
                                 expand.getResult());
        expanded.inputs = {view(frame, expand.getSrc())};
        expanded.split.assign(
            expanded.sizes.begin(),
            expanded.sizes.begin() +
                expand.getReassociationIndices().front().size());
        frame->views[expand.getResult()] = expanded;
      } else if (auto insert = dyn_cast<tensor::InsertOp>(op)) {
        View inserted =
            deferred(View::Kind::Inserted, insert, frame, insert.getResult());
        inserted.inputs = {view(frame, insert.getDest())};
        frame->views[insert.getResult()] = inserted;
      } else if (auto histogram = dyn_cast<ReduceByIndexOp>(op)) {
        computeIntoScratch(b, histogram, frame);
      } else if (isa<IotaOp, tensor::SplatOp, tensor::FromElementsOp>(op)) {
        frame->views[op.getResult(0)] =
            deferred(View::Kind::Generated, &op, frame, op.getResult(0));
      } else {
        IRMapping mapping;
        for (Value operand : op.getOperands())
          mapping.map(operand, scalar(frame, operand));
        SetVector<Value> above;
        for (Region &region : op.getRegions())
          getUsedValuesDefinedAbove(region, above);
        for (Value value : above)
          if (!isTensor(value.getType()))
            mapping.map(value, scalar(frame, value));
        Operation *copy = b.clone(op, mapping);
        for (auto [result, value] :
             llvm::zip(op.getResults(), copy->getResults()))
          frame->scalars[result] = value;
      }
    }
  }

  /// The kernel-side value of `value`, a scalar: found in `frame` or the
  /// scopes around it, or defined outside the kernel.
  Value scalar(const FramePtr &frame, Value value) const {
    for (Frame *f = frame.get(); f; f = f->parent.get())
      if (Value found = f->scalars.lookup(value))
        return found;
    return value;
  }

  /// `value` of the body as found in `frame` or around it: a view when it is
  /// a tensor, else a scalar.
  Entry entry(const FramePtr &frame, Value value) const {
    if (isTensor(value.getType()))
      return {{}, view(frame, value)};
    return {scalar(frame, value), {}};
  }

  /// The view of `tensor`: found in `frame` or around it, or a tensor the
  /// kernel reads whole.
  View view(const FramePtr &frame, Value tensor) const {
    for (Frame *f = frame.get(); f; f = f->parent.get())
      if (auto found = f->views.find(tensor); found != f->views.end())
        return found->second;
    return whole(tensor);
  }

  /// A tensor the kernel reads, all of its dimensions open.
  View whole(Value tensor) const {
    View all;
    all.tensor = tensor;
    int64_t rank = cast<RankedTensorType>(tensor.getType()).getRank();
    all.indices.assign(rank, Value());
    for (int64_t d = 0; d < rank; ++d)
      all.open.push_back(d);
    all.sizes = sizes.lookup(tensor);
    return all;
  }

  /// Element `j` of `v`: a scalar, or a view of one rank less.
  Entry element(ImplicitLocOpBuilder &b, const View &v, Value j) {
    if (v.kind == View::Kind::Buffer)
      return bufferElement(b, v, j);
    if (v.kind == View::Kind::Map)
      return mapElement(b, v, j);
    if (v.kind == View::Kind::Collapsed)
      return collapsedElement(b, v, j);
    if (v.kind == View::Kind::Expanded)
      return expandedElement(b, v, j);
    View next = v;
    next.indices.push_back(j);
    next.sizes.erase(next.sizes.begin());
    bool last = next.sizes.empty();
    if (v.kind == View::Kind::Generated) {
      if (!last)
        return {{}, next};
      return {generated(b, next), {}};
    }
    // The input that has the view's shape: the initial row of a fold, the
    // destination of an insert.
    unsigned same = v.kind == View::Kind::Fold ? 1 : 0;
    Entry sameElement = element(b, v.inputs[same], j);
    if (!last) {
      next.inputs[same] = *sameElement.view;
      return {{}, next};
    }
    if (v.kind == View::Kind::Inserted)
      return {inserted(b, next, sameElement.scalar), {}};
    return {folded(b, next, sameElement.scalar), {}};
  }

  /// Stores one scalar of a result into its output at the given indices.
  using Store = function_ref<void(ImplicitLocOpBuilder &, Value scalar,
                                  Value output, ArrayRef<Value> indices)>;
  static void plainStore(ImplicitLocOpBuilder &b, Value scalar, Value output,
                         ArrayRef<Value> indices) {
    memref::StoreOp::create(b, scalar, output, indices);
  }

  /// Writes each of `entries` (scalars or views) into its output at
  /// `indices`, then the elements of a view, then `trailing` (the thread's
  /// index, innermost in scratch memory), each scalar by `store`. The
  /// results of one nested map (views of one map op in one scope) are
  /// written by one loop, each element of the map computed once for all of
  /// them rather than once per result (GMM's adjoint per component yields
  /// three rows). The loops' bounds are sizes the host computed, the same
  /// in every thread: every thread reaches each `store` as often (unless a
  /// failed check made it skip code: warp sums, which rely on this, are
  /// only made for kernels without checks).
  void write(ImplicitLocOpBuilder &b, ArrayRef<Entry> entries,
             ArrayRef<Value> outputs, ArrayRef<Value> indices,
             ArrayRef<Value> trailing = {}, Store store = plainStore) {
    SmallVector<bool> written(entries.size(), false);
    for (auto [k, current] : llvm::enumerate(entries)) {
      if (written[k])
        continue;
      if (!current.view) {
        SmallVector<Value> at(indices);
        llvm::append_range(at, trailing);
        store(b, current.scalar, outputs[k], at);
        continue;
      }
      const View &v = *current.view;
      SmallVector<size_t> group{k};
      for (size_t other = k + 1; v.kind == View::Kind::Map &&
                                 other < entries.size();
           ++other) {
        const std::optional<View> &w = entries[other].view;
        if (!written[other] && w && w->kind == View::Kind::Map &&
            w->op == v.op && w->scope == v.scope)
          group.push_back(other);
      }
      for (size_t member : group)
        written[member] = true;
      forEachIndex(b, v.sizes.front(), [&](ImplicitLocOpBuilder &ib, Value j) {
        SmallVector<Value> inner(indices);
        inner.push_back(j);
        std::vector<Entry> elements;
        SmallVector<Value> targets;
        if (v.kind == View::Kind::Map) {
          FramePtr frame = mapFrame(ib, v.op, v.inputs, v.scope, j);
          Operation *yield =
              cast<MapOp>(v.op).getBody().front().getTerminator();
          for (size_t member : group)
            elements.push_back(
                entry(frame, yield->getOperand(entries[member].view->result)));
        } else {
          elements.push_back(element(ib, v, j));
        }
        for (size_t member : group)
          targets.push_back(outputs[member]);
        write(ib, elements, targets, inner, trailing, store);
      });
    }
  }

  SmallVector<Value> sizesOf(Value tensor) const {
    return sizes.lookup(tensor);
  }

private:
  /// A view of `kind` of `tensor`, defined by `op` in `scope`.
  View deferred(View::Kind kind, Operation *op, const FramePtr &scope,
                Value tensor) const {
    View v;
    v.kind = kind;
    v.op = op;
    v.scope = scope;
    v.sizes = sizes.lookup(tensor);
    return v;
  }

  Entry bufferElement(ImplicitLocOpBuilder &b, const View &v, Value j) {
    View row = v;
    unsigned d = row.open.front();
    row.indices[d] = row.indices[d]
                         ? Value(arith::AddIOp::create(b, row.indices[d], j))
                         : j;
    row.open.erase(row.open.begin());
    row.sizes.erase(row.sizes.begin());
    if (!row.open.empty())
      return {{}, row};
    if (row.scratch)
      return {memref::LoadOp::create(b, row.scratch, row.indices), {}};
    return {tensor::ExtractOp::create(b, row.tensor, row.indices), {}};
  }

  /// The frame of element `j` of the map of `v`, its body run.
  FramePtr mapFrame(ImplicitLocOpBuilder &b, Operation *map,
                    ArrayRef<View> inputs, const FramePtr &scope, Value j) {
    auto frame = std::make_shared<Frame>();
    frame->parent = scope;
    frame->index = j;
    Block &body = cast<MapOp>(map).getBody().front();
    for (auto [arg, input] : llvm::zip(body.getArguments(), inputs)) {
      Entry entry = element(b, input, j);
      if (entry.view)
        frame->views[arg] = *entry.view;
      else
        frame->scalars[arg] = entry.scalar;
    }
    run(b, body, frame);
    return frame;
  }

  /// Element `j` of the merged dimension of a collapse: the source's at the
  /// row-major position `j` of the dimensions merged.
  Entry collapsedElement(ImplicitLocOpBuilder &b, const View &v, Value j) {
    const View &source = v.inputs.front();
    SmallVector<Value> position(v.result);
    Value rest = j;
    for (unsigned d = v.result - 1; d > 0; --d) {
      position[d] = arith::RemUIOp::create(b, rest, source.sizes[d]);
      rest = arith::DivUIOp::create(b, rest, source.sizes[d]);
    }
    position[0] = rest;
    Entry at{{}, source};
    for (Value index : position)
      at = element(b, *at.view, index);
    return at;
  }

  /// Element `j` of the next dimension of an expand: the view itself with
  /// `j` collected while split dimensions remain, then the source's element
  /// at the row-major position of the indices collected.
  Entry expandedElement(ImplicitLocOpBuilder &b, const View &v, Value j) {
    View next = v;
    next.indices.push_back(j);
    next.sizes.erase(next.sizes.begin());
    if (next.indices.size() < v.split.size())
      return {{}, next};
    Value position = next.indices.front();
    for (auto [index, size] :
         llvm::zip(llvm::drop_begin(next.indices), llvm::drop_begin(v.split)))
      position = arith::AddIOp::create(
          b, arith::MulIOp::create(b, position, size), index);
    return element(b, v.inputs.front(), position);
  }

  Entry mapElement(ImplicitLocOpBuilder &b, const View &v, Value j) {
    FramePtr frame = mapFrame(b, v.op, v.inputs, v.scope, j);
    Block &body = cast<MapOp>(v.op).getBody().front();
    return entry(frame, body.getTerminator()->getOperand(v.result));
  }

  /// The element at `v.indices` of a soac.iota, tensor.splat or
  /// tensor.from_elements.
  Value generated(ImplicitLocOpBuilder &b, const View &v) {
    if (auto splat = dyn_cast<tensor::SplatOp>(v.op))
      return scalar(v.scope, splat.getInput());
    if (auto elements = dyn_cast<tensor::FromElementsOp>(v.op)) {
      // The row-major position of the indices, then a choice among the
      // elements (constant indices fold to one of them).
      ArrayRef<int64_t> shape = elements.getType().getShape();
      Value position = indexConstant(b, 0);
      for (auto [index, size] : llvm::zip(v.indices, shape))
        position = arith::AddIOp::create(
            b, arith::MulIOp::create(b, position, indexConstant(b, size)),
            index);
      Value chosen = scalar(v.scope, elements.getElements()[0]);
      for (auto [k, element] :
           llvm::enumerate(elements.getElements().drop_front())) {
        Value here = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                           position,
                                           indexConstant(b, k + 1));
        chosen = arith::SelectOp::create(b, here, scalar(v.scope, element),
                                         chosen);
      }
      return chosen;
    }
    Value j = v.indices.front();
    Type type = getElementTypeOrSelf(v.op->getResult(0));
    if (type.isIndex())
      return j;
    return arith::IndexCastOp::create(b, type, j);
  }

  /// The element at `v.indices` of a tensor.insert whose destination has
  /// `destination` there.
  Value inserted(ImplicitLocOpBuilder &b, const View &v, Value destination) {
    auto insert = cast<tensor::InsertOp>(v.op);
    SmallVector<Value> same;
    for (auto [index, at] : llvm::zip(v.indices, insert.getIndices()))
      same.push_back(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, index,
                                           scalar(v.scope, at)));
    return arith::SelectOp::create(b, allTrue(b, same),
                                   scalar(v.scope, insert.getScalar()),
                                   destination);
  }

  /// The element at `v.indices` of a fold of vector rows starting from
  /// `initial`: a loop over the rows.
  Value folded(ImplicitLocOpBuilder &b, const View &v, Value initial) {
    const View &rows = v.inputs[0];
    Block &op = scalarOperator(cast<ReduceOp>(v.op))->front();
    auto loop = scf::ForOp::create(
        b, indexConstant(b, 0), rows.sizes.front(), indexConstant(b, 1),
        ValueRange{initial},
        [&](OpBuilder &nested, Location loc, Value i, ValueRange acc) {
          ImplicitLocOpBuilder ib(loc, nested);
          Entry x = element(ib, rows, i);
          for (Value index : v.indices)
            x = element(ib, *x.view, index);
          scf::YieldOp::create(ib,
                               apply(ib, op, v.scope, {acc[0], x.scalar}));
        });
    return loop.getResult(0);
  }

  /// Runs the operator `op` on `args` in a frame inside `scope`; its
  /// yielded scalars.
  SmallVector<Value> apply(ImplicitLocOpBuilder &b, Block &op,
                           const FramePtr &scope, ValueRange args) {
    auto step = std::make_shared<Frame>();
    step->parent = scope;
    for (auto [arg, value] : llvm::zip(op.getArguments(), args))
      step->scalars[arg] = value;
    run(b, op, step);
    return llvm::map_to_vector(op.getTerminator()->getOperands(),
                               [&](Value v) { return scalar(step, v); });
  }

  /// A nested reduce of scalars: a loop folding the elements of its inputs.
  SmallVector<Value> fold(ImplicitLocOpBuilder &b, ReduceOp reduce,
                          const FramePtr &frame) {
    std::vector<View> inputs;
    for (Value input : reduce.getInputs())
      inputs.push_back(view(frame, input));
    SmallVector<Value> inits = llvm::map_to_vector(
        reduce.getInits(), [&](Value init) { return scalar(frame, init); });
    Block &op = reduce.getBody().front();
    auto loop = scf::ForOp::create(
        b, indexConstant(b, 0), inputs.front().sizes.front(),
        indexConstant(b, 1), inits,
        [&](OpBuilder &nested, Location loc, Value j, ValueRange acc) {
          ImplicitLocOpBuilder ib(loc, nested);
          SmallVector<Value> args(acc);
          for (const View &input : inputs)
            args.push_back(element(ib, input, j).scalar);
          scf::YieldOp::create(ib, apply(ib, op, frame, args));
        });
    return llvm::to_vector_of<Value>(loop.getResults());
  }

  /// A slice of a tensor read in place: offsets added to the open
  /// dimensions, the dimensions it drops fixed.
  View sliced(ImplicitLocOpBuilder &b, const FramePtr &frame,
              tensor::ExtractSliceOp slice) {
    View source = view(frame, slice.getSource());
    assert(source.kind == View::Kind::Buffer &&
           "slices of computed tensors are rejected earlier");
    View result = source;
    result.open.clear();
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    for (auto [d, offset] : llvm::enumerate(slice.getMixedOffsets())) {
      unsigned dim = source.open[d];
      Value start = getValueOrCreateConstantIndexOp(
          b, b.getLoc(),
          isa<Value>(offset) ? OpFoldResult(scalar(frame, cast<Value>(offset)))
                             : offset);
      result.indices[dim] =
          result.indices[dim]
              ? Value(arith::AddIOp::create(b, result.indices[dim], start))
              : start;
      if (!dropped.test(d))
        result.open.push_back(dim);
    }
    result.sizes = sizes.lookup(slice.getResult());
    return result;
  }

  /// Nested maps whose results are computed once per thread into scratch
  /// memory rather than where each element is read (`keptInScratch`), when
  /// only SOACs read them (all of their elements, often several times), or
  /// a map kept in scratch itself yields them:
  ///  - maps of scalars whose elements cost a loop (their bodies hold
  ///    SOACs): the adjoint of a matrix-vector product reads each element
  ///    of the product in several places, and recomputing it there made
  ///    GMM's gradient kernel do d times the work of its primal;
  ///  - maps of scalars and rows of which one costs a loop per element
  ///    (`costlyRow`): read element by element, each element ran the body
  ///    again. A histogram row was computed whole for each element (the
  ///    dense adjoint per row of a gather two maps deep, summed over the
  ///    rows: GMM's icf adjoint did bins times the work of its histograms);
  ///    GMM's adjoint per point read each component's `Q (x - mu)` (a map
  ///    of dot products) from six SOACs, each of which ran the component
  ///    again, and its adjoint products read each element d times.
  /// The second kind's scratch is no larger than what its costly row takes
  /// when computed once per element of the maps around it (a row a map kept
  /// in scratch yields is stored in both); its rows that are results of one
  /// map are stored in one loop over their elements.
  /// The scratch of a map has one slot per element of each map around it
  /// (so an element of an outer map computed again writes the same slot
  /// with the same values, and no view of an earlier element is
  /// overwritten), then its own elements (and a row's), then the thread,
  /// innermost, so that a warp's accesses coalesce.
  static bool keptInScratch(MapOp inner) {
    auto readsWhole = [](Operation *user) {
      return isa<MapOp, ReduceOp, ReduceByIndexOp, tensor::DimOp>(user);
    };
    // Yielded by the enclosing nested map, which is kept in scratch itself
    // and writes the row there element by element once: a read of the
    // whole row, so the row is kept too when SOACs also read it (GMM's
    // `Q (x - mu)` per component, also read by the component's quadratic
    // form, ran three times). Asked once, of the one yield.
    Operation *yield = inner->getBlock()->getTerminator();
    bool yielded = llvm::is_contained(inner->getUsers(), yield);
    bool othersReadWhole =
        llvm::all_of(inner->getUsers(), [&](Operation *user) {
          return user == yield || readsWhole(user);
        });
    bool read = llvm::any_of(inner->getUsers(), [&](Operation *user) {
      return user != yield && !isa<tensor::DimOp>(user);
    });
    if (!othersReadWhole || !read)
      return false;
    if (yielded) {
      auto outer = dyn_cast<MapOp>(yield->getParentOp());
      if (!isa<YieldOp>(yield) || !outer || !outer->getParentOfType<MapOp>() ||
          !keptInScratch(outer))
        return false;
    }
    if (yieldsScalars(inner))
      return holdsSoacs(inner);
    Operation *rows = inner.getBody().front().getTerminator();
    bool rowsAtMost = llvm::all_of(rows->getOperandTypes(), [](Type type) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      return !tensor || tensor.getRank() == 1;
    });
    return rowsAtMost && llvm::any_of(rows->getOperands(), costlyRow);
  }

  /// Whether `row`, a rank-1 tensor a map body yields, costs a loop per
  /// element read: a histogram (computed whole for any of its elements), or
  /// a map of scalars whose body holds SOACs.
  static bool costlyRow(Value row) {
    Operation *def = row.getDefiningOp();
    if (isa_and_nonnull<ReduceByIndexOp>(def))
      return true;
    auto map = dyn_cast_or_null<MapOp>(def);
    return map && yieldsScalars(map) && holdsSoacs(map);
  }

  static bool yieldsScalars(MapOp map) {
    return llvm::none_of(
        map.getBody().front().getTerminator()->getOperandTypes(), isTensor);
  }

  static bool holdsSoacs(MapOp map) {
    return map.getBody()
        .walk([](Operation *op) {
          return isa<MapOp, ReduceOp, ReduceByIndexOp>(op)
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  }

  void allocateScratch(ImplicitLocOpBuilder &host, MapOp map, Value n) {
    std::function<void(Block &, SmallVector<Value>)> visit =
        [&](Block &block, SmallVector<Value> around) {
          for (Operation &op : block.without_terminator()) {
            if (auto histogram = dyn_cast<ReduceByIndexOp>(op)) {
              allocate(host, histogram, around, n);
              continue;
            }
            auto inner = dyn_cast<MapOp>(op);
            if (!inner || inner->getNumResults() == 0)
              continue;
            Value size = sizes.lookup(inner->getResult(0)).front();
            if (keptInScratch(inner))
              allocate(host, inner, around, n);
            SmallVector<Value> inside = around;
            inside.push_back(size);
            visit(inner.getBody().front(), inside);
          }
        };
    visit(map.getBody().front(), {});
  }

  /// One scratch buffer per result of `op` (a map of scalars or rows, or a
  /// histogram of rank-1 results): `around` (the sizes of the maps around
  /// it), the result's own sizes, then `n` threads.
  void allocate(ImplicitLocOpBuilder &host, Operation *op,
                ArrayRef<Value> around, Value n) {
    for (OpResult result : op->getResults()) {
      SmallVector<Value> shape(around);
      llvm::append_range(shape, sizes.lookup(result));
      shape.push_back(n);
      auto type = RankedTensorType::get(
          SmallVector<int64_t>(shape.size(), ShapedType::kDynamic),
          getElementTypeOrSelf(result.getType()));
      scratch[op].push_back(allocBuffer(host, type, shape));
    }
  }

  /// Where this thread's slots for an op run in `frame` start: the element
  /// of each map around it.
  static SmallVector<Value> scratchPath(const FramePtr &frame) {
    SmallVector<Value> path;
    for (Frame *f = frame.get(); f; f = f->parent.get())
      if (f->index)
        path.insert(path.begin(), f->index);
    return path;
  }

  /// The indices of this thread's slot for `elements` (null: still open)
  /// of an op whose slots start at `path`.
  SmallVector<Value> scratchSlot(ArrayRef<Value> path,
                                 ValueRange elements) const {
    SmallVector<Value> at(path);
    llvm::append_range(at, elements);
    at.push_back(threadIndex);
    return at;
  }

  /// Makes the results of `op` views of its scratch, whose slots start at
  /// `path`.
  void viewScratch(Operation *op, ArrayRef<Value> path,
                   const FramePtr &frame) {
    for (auto [result, buffer] : llvm::zip(op->getResults(), scratch[op])) {
      View stored;
      stored.scratch = buffer;
      stored.sizes = sizes.lookup(result);
      stored.indices = scratchSlot(
          path, SmallVector<Value>(stored.sizes.size(), Value()));
      for (size_t d = 0; d < stored.sizes.size(); ++d)
        stored.open.push_back(path.size() + d);
      frame->views[result] = stored;
    }
  }

  /// Computes every element of `inner` into its scratch (see keptInScratch;
  /// a row element by element, rows of one nested map in one loop: write)
  /// and makes its results views of it.
  void computeIntoScratch(ImplicitLocOpBuilder &b, MapOp inner,
                          ArrayRef<View> inputs, const FramePtr &frame) {
    SmallVector<Value> path = scratchPath(frame);
    SmallVector<Value> buffers = scratch.lookup(inner);
    forEachIndex(
        b, sizes.lookup(inner->getResult(0)).front(),
        [&](ImplicitLocOpBuilder &ib, Value j) {
          FramePtr computed = mapFrame(ib, inner, inputs, frame, j);
          std::vector<Entry> entries;
          for (Value yielded :
               inner.getBody().front().getTerminator()->getOperands())
            entries.push_back(entry(computed, yielded));
          SmallVector<Value> at(path);
          at.push_back(j);
          write(ib, entries, buffers, at, threadIndex);
        });
    viewScratch(inner, path, frame);
  }

  /// A histogram per thread, in its scratch: the destination copied there,
  /// then each value combined into its bin, one pass over the values
  /// (computing each bin as the fold of the values of its index would take
  /// a pass over all values per bin: the gradient of a gather per row made
  /// GMM's icf adjoint such a kernel). Values at an index outside the bins
  /// are dropped, as soac.reduce_by_index drops them.
  void computeIntoScratch(ImplicitLocOpBuilder &b, ReduceByIndexOp histogram,
                          const FramePtr &frame) {
    SmallVector<Value> path = scratchPath(frame);
    Value buffer = scratch.lookup(histogram).front();
    View destination = view(frame, histogram.getDests()[0]);
    View indices = view(frame, histogram.getIndices());
    View values = view(frame, histogram.getValues()[0]);
    Value bins = sizes.lookup(histogram.getResult(0)).front();
    auto slot = [&](Value bin) { return scratchSlot(path, bin); };
    forEachIndex(b, bins, [&](ImplicitLocOpBuilder &ib, Value bin) {
      memref::StoreOp::create(ib, element(ib, destination, bin).scalar, buffer,
                              slot(bin));
    });
    Block &op = histogram.getBody().front();
    // Combines element `i` of `from` (a view of values) into the bin `index`
    // names, when there is one.
    auto combine = [&](ImplicitLocOpBuilder &ib, Value index, const View &from,
                       Value i) {
      auto [bin, inRange] = checkedIndex(ib, index, bins);
      ifThen(ib, inRange, [&](ImplicitLocOpBuilder &tb) {
        Value value = element(tb, from, i).scalar;
        Value old = memref::LoadOp::create(tb, buffer, slot(bin));
        Value combined = apply(tb, op, frame, {old, value}).front();
        memref::StoreOp::create(tb, combined, buffer, slot(bin));
      });
    };
    if (stackedRows(indices, values)) {
      // The rows of one nested map, flattened (sparse adjoints' stacked
      // reads): its body runs once per row for both, not twice per element.
      const View &stack = indices.inputs.front();
      Operation *yield =
          cast<MapOp>(stack.op).getBody().front().getTerminator();
      forEachIndex(
          b, stack.sizes.front(), [&](ImplicitLocOpBuilder &rb, Value r) {
            FramePtr row = mapFrame(rb, stack.op, stack.inputs, stack.scope, r);
            View indexRow = *entry(row, yield->getOperand(stack.result)).view;
            View valueRow =
                *entry(row, yield->getOperand(values.inputs.front().result))
                     .view;
            forEachIndex(
                rb, stack.sizes[1], [&](ImplicitLocOpBuilder &cb, Value c) {
                  combine(cb, element(cb, indexRow, c).scalar, valueRow, c);
                });
          });
    } else {
      forEachIndex(b, indices.sizes.front(),
                   [&](ImplicitLocOpBuilder &ib, Value i) {
                     combine(ib, element(ib, indices, i).scalar, values, i);
                   });
    }
    viewScratch(histogram, path, frame);
  }

  /// Whether `indices` and `values` flatten two rank-1 results of one
  /// nested map (collapses of its two dimensions).
  static bool stackedRows(const View &indices, const View &values) {
    auto stacked = [](const View &v) {
      return v.kind == View::Kind::Collapsed && v.result == 2 &&
             v.inputs.front().kind == View::Kind::Map &&
             v.inputs.front().sizes.size() == 2;
    };
    return stacked(indices) && stacked(values) &&
           indices.inputs.front().op == values.inputs.front().op &&
           indices.inputs.front().scope == values.inputs.front().scope;
  }

public:
  /// The thread's index in the grid, which indexes scratch memory (set in
  /// the kernel; the thread's row, except past the last row under warp
  /// sums).
  Value threadIndex;

private:
  DenseMap<Value, SmallVector<Value>> sizes;
  DenseMap<Operation *, SmallVector<Value>> scratch;
};

} // namespace

/// Whether `region` checks a run-time condition (an index, a size).
static bool hasChecks(Region &region) {
  return region
      .walk([](Operation *op) {
        return checks::isCheck(op) ? WalkResult::interrupt()
                                   : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The operator of a sum that is the only reader of a result of `map`, per
/// result (null where none): a reduce of that result alone whose operator,
/// on scalars or elementwise on rows, is one addition of its two arguments.
/// Such a result need not be written row by row: the reduce gives the same
/// total (up to the order of additions) from partial sums of its rows.
static SmallVector<Region *> summingOperators(MapOp map) {
  SmallVector<Region *> sums;
  for (OpResult result : map->getResults()) {
    sums.push_back(nullptr);
    if (!result.hasOneUse())
      continue;
    auto reduce = dyn_cast<ReduceOp>(*result.getUsers().begin());
    if (!reduce || reduce.getInputs().size() != 1)
      continue;
    Region *op = scalarOperator(reduce);
    Operation *combine = op ? combiningOp(*op) : nullptr;
    if (!isa_and_nonnull<arith::AddFOp, arith::AddIOp>(combine))
      continue;
    // An addition with overflow flags (nsw, nuw) may not be regrouped.
    auto integer = dyn_cast<arith::AddIOp>(combine);
    if (integer &&
        integer.getOverflowFlags() != arith::IntegerOverflowFlags::none)
      continue;
    sums.back() = op;
  }
  return sums;
}

LogicalResult checkThreadKernel(MapOp map) {
  Shapes shapes(map);
  Block &body = map.getBody().front();
  if (failed(checkThreadBlock(body, map, shapes)))
    return failure();
  for (Value yielded : body.getTerminator()->getOperands())
    if (isTensor(yielded.getType()) && failed(shapes.of(yielded)))
      return unsupportedInThread(body.getTerminator(), map,
                                 "the shape of a yielded tensor must follow "
                                 "from the sizes of the tensors the map reads");
  return success();
}

void lowerThreadKernel(MapOp map) {
  ImplicitLocOpBuilder host(map.getLoc(), map);
  Buffers buffers;
  buffers.addFreeTensors(host, map.getBody());
  Block &body = map.getBody().front();
  SmallVector<Value> scalarInputs;
  for (Value input : map.getInputs()) {
    if (cast<RankedTensorType>(input.getType()).getRank() == 1)
      scalarInputs.push_back(input);
    else
      buffers.of(host, input);
  }
  ElementReader scalarRows(host, buffers, scalarInputs, map);
  Value n = scalarInputs.empty()
                ? Value(tensor::DimOp::create(host, map.getInputs()[0], 0))
                : scalarRows.size(host);
  Value blocks = blocksFor(host, n, kThreadBlockSize);

  // Results only a sum reads are summed by each warp (warpSums): every
  // launched thread then runs a row, those past the last one the last row
  // again, adding nothing; each has its own slots of scratch memory. Not
  // where the kernel checks what it reads: a thread whose check fails skips
  // the ops after it up to the next shuffle (soac-lower-kernel-checks),
  // which the write loops' shuffles would leave it unable to reach.
  SmallVector<Region *> sums(map->getNumResults(), nullptr);
  if (!hasChecks(map.getBody()) &&
      llvm::none_of(scalarRows.fusedMaps(), [](MapOp fused) {
        return hasChecks(fused.getBody());
      }))
    sums = summingOperators(map);
  bool warpSums = llvm::any_of(sums, [](Region *op) { return op; });
  Value threads =
      warpSums ? arith::MulIOp::create(host, blocks,
                                       indexConstant(host, kThreadBlockSize))
                     .getResult()
               : n;
  Shapes shapes(map);
  ThreadCode code(host, shapes, map, threads);
  SmallVector<Value> outputs;
  SmallVector<Type> types;
  DenseMap<Value, Region *> summedOutputs;
  for (auto [type, yielded, sum] :
       llvm::zip(map.getResultTypes(), body.getTerminator()->getOperands(),
                 sums)) {
    auto tensorType = cast<RankedTensorType>(type);
    // A summed result has a row per warp, ceil(n / 32), for its reduce.
    SmallVector<Value> sizes{
        sum ? ceilDiv(host, n, indexConstant(host, kWarpSize)) : n};
    if (isTensor(yielded.getType()))
      llvm::append_range(sizes, code.sizesOf(yielded));
    if (sum) {
      SmallVector<int64_t> shape(tensorType.getShape());
      shape.front() = ShapedType::kDynamic;
      tensorType = tensorType.clone(shape);
    }
    outputs.push_back(
        allocBuffer(host, tensorType, dynamicSizes(tensorType, sizes)));
    types.push_back(tensorType);
    if (sum)
      summedOutputs[outputs.back()] = sum;
  }

  launchKernel(
      host, blocks, {}, buffers,
      [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
        Value active = lessThan(b, ids.global, n);
        // Without sums, a thread past the last row does nothing; with them,
        // every thread of a warp reaches its shuffles (unless there are no
        // rows, which every thread sees alike).
        Value runs = warpSums ? arith::CmpIOp::create(
                                    b, arith::CmpIPredicate::ne, n,
                                    indexConstant(b, 0))
                                    .getResult()
                              : active;
        ifThen(b, runs, [&](ImplicitLocOpBuilder &ib) {
          Value i = ids.global;
          if (warpSums)
            i = minIndex(ib, i,
                         arith::SubIOp::create(ib, n, indexConstant(ib, 1)));
          code.threadIndex = ids.global;
          auto frame = std::make_shared<Frame>();
          SmallVector<Value> scalars = scalarRows.read(ib, i);
          size_t next = 0;
          for (auto [arg, input] :
               llvm::zip(body.getArguments(), map.getInputs())) {
            if (!isTensor(arg.getType())) {
              frame->scalars[arg] = scalars[next++];
              continue;
            }
            frame->views[arg] = *code.element(ib, code.whole(input), i).view;
          }
          code.run(ib, body, frame);
          std::vector<Entry> entries;
          for (Value yielded : body.getTerminator()->getOperands())
            entries.push_back(code.entry(frame, yielded));
          if (!warpSums) {
            code.write(ib, entries, outputs, {i});
            return;
          }
          Value lane = arith::RemUIOp::create(ib, ids.global,
                                              indexConstant(ib, kWarpSize));
          Value warp = arith::DivUIOp::create(ib, ids.global,
                                              indexConstant(ib, kWarpSize));
          code.write(
              ib, entries, outputs, {i}, {},
              [&](ImplicitLocOpBuilder &sb, Value scalar, Value output,
                  ArrayRef<Value> at) {
                Region *sum = summedOutputs.lookup(output);
                if (!sum) {
                  ifThen(sb, active, [&](ImplicitLocOpBuilder &tb) {
                    memref::StoreOp::create(tb, scalar, output, at);
                  });
                  return;
                }
                // Inactive lanes add -0.0 (x + -0.0 is x, even for -0.0).
                Type type = scalar.getType();
                Value zero =
                    isa<FloatType>(type)
                        ? arith::ConstantOp::create(
                              sb, type,
                              sb.getFloatAttr(
                                  type, APFloat::getZero(
                                            cast<FloatType>(type)
                                                .getFloatSemantics(),
                                            /*Negative=*/true)))
                              .getResult()
                        : arith::ConstantOp::create(sb, type,
                                                    sb.getZeroAttr(type))
                              .getResult();
                Value mine = arith::SelectOp::create(sb, active, scalar, zero);
                Value total = warpAllReduce(sb, Combiner(*sum, {zero}), lane,
                                            {mine})
                                  .front();
                // Lane 0 of a warp with rows writes the warp's row.
                Value writes = arith::AndIOp::create(
                    sb,
                    arith::CmpIOp::create(sb, arith::CmpIPredicate::eq, lane,
                                          indexConstant(sb, 0)),
                    active);
                ifThen(sb, writes, [&](ImplicitLocOpBuilder &tb) {
                  SmallVector<Value> row{warp};
                  llvm::append_range(row, at.drop_front());
                  memref::StoreOp::create(tb, total, output, row);
                });
              });
        });
      },
      kThreadBlockSize);
  replaceSoac(map, asTensors(host, outputs, types), &scalarRows);
}

} // namespace soac::kernels
