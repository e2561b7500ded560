//===- ElementwiseOperators.cpp - SOACs whose operator maps rows ----------===//
//
// reduce ⊙ ne xs with ⊙ = map ⊕ over rows is, at every position p within the
// rows, reduce ⊕ ne[p] xs[:, p] (likewise scan and reduce_by_index). The
// reverse rule builds that scalar SOAC once as a detached function (the
// "program"), and in a map nest over the positions of the rows pulls each
// position's cotangents back through it with the engine, so that every
// scalar rule (+, *, min, max, any operator) serves rows of any rank. The
// columns read per position and the adjoints written back are transposes:
// O(n · row size) work and memory, like the primal.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Reverse/ElementwiseOperators.h"

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

/// The scalar operator inside an elementwise component: the innermost map
/// body and its arguments standing for the accumulator's and the value's
/// elements.
struct ScalarOperator {
  Block *body = nullptr;
  Value accumulator, value;
};

std::optional<ScalarOperator> findScalarOperator(Region &region, unsigned j) {
  Block *block = &region.front();
  unsigned k = block->getNumArguments() / 2;
  Value accumulator = block->getArgument(j), value = block->getArgument(k + j);
  Value result = block->getTerminator()->getOperand(j);
  if (!isa<RankedTensorType>(accumulator.getType()))
    return std::nullopt;
  // Down the map nest, following which body argument is which row.
  while (isa<RankedTensorType>(accumulator.getType())) {
    auto map = result.getDefiningOp<MapOp>();
    if (!map || map->getBlock() != block || map.getNumResults() != 1 ||
        map.getInputs().size() != 2)
      return std::nullopt;
    Value first = map.getInputs()[0], second = map.getInputs()[1];
    bool flipped = first == value && second == accumulator;
    if (!flipped && !(first == accumulator && second == value))
      return std::nullopt;
    block = &map.getBody().front();
    accumulator = block->getArgument(flipped ? 1 : 0);
    value = block->getArgument(flipped ? 0 : 1);
    result = block->getTerminator()->getOperand(0);
  }
  if (isa<RankedTensorType>(result.getType()))
    return std::nullopt;
  // The scalar operator is cloned on its own: it may read only constants.
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(*block->getParent(), captured);
  for (Value free : captured)
    if (!matchPattern(free, m_Constant()))
      return std::nullopt;
  return ScalarOperator{block, accumulator, value};
}

/// The scalar operator as the body of a new SOAC: the arguments are the
/// accumulator and the value (the BodyBuilder convention).
SmallVector<Value> cloneScalarOperator(ImplicitLocOpBuilder &b,
                                       const ScalarOperator &op,
                                       ValueRange args) {
  IRMapping mapping;
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(*op.body->getParent(), captured);
  for (Value constant : captured)
    mapping.map(constant, b.clone(*constant.getDefiningOp())->getResult(0));
  mapping.map(op.accumulator, args[0]);
  mapping.map(op.value, args[1]);
  for (Operation &inner : op.body->without_terminator())
    b.clone(inner, mapping);
  return {mapping.lookupOrDefault(op.body->getTerminator()->getOperand(0))};
}

/// A detached function holding the scalar SOAC, differentiated with respect
/// to all its float arguments wherever a position is pulled back.
class ScalarProgram {
public:
  using SoacBuilder =
      function_ref<Value(ImplicitLocOpBuilder &, ValueRange args)>;

  ScalarProgram(Location loc, TypeRange argTypes, Type resultType,
                SoacBuilder build) {
    OpBuilder detached(loc.getContext());
    function = func::FuncOp::create(
        detached, loc, "elementwise_position",
        detached.getFunctionType(argTypes, resultType));
    Block *entry = function->addEntryBlock();
    ImplicitLocOpBuilder b(loc, entry, entry->end());
    func::ReturnOp::create(b, build(b, entry->getArguments()));
    SmallVector<int64_t> wrt;
    for (auto [i, type] : llvm::enumerate(argTypes))
      if (isDifferentiableType(type))
        wrt.push_back(i);
    activity = std::make_unique<Activity>(*function, wrt);
  }

  /// The adjoints of the arguments (null for integer ones) given `seeds` for
  /// the result, the program run on `args`, built with `at`.
  FailureOr<SmallVector<Value>> pullBack(ImplicitLocOpBuilder &at,
                                         SymbolTableCollection &symbols,
                                         ValueRange args, Value seed) {
    Block &body = function->getBody().front();
    AdjointBuilder scope(at, *activity, body, nullptr, symbols);
    for (auto [arg, value] : llvm::zip(body.getArguments(), args))
      scope.mapPrimal(arg, value);
    scope.reexecute(body);
    scope.accumulate(body.getTerminator()->getOperand(0), seed);
    if (failed(scope.sweep(body)))
      return failure();
    return llvm::map_to_vector(body.getArguments(), [&](Value arg) {
      return scope.isActive(arg) ? scope.adjointOrZero(arg) : Value();
    });
  }

private:
  OwningOpRef<func::FuncOp> function;
  std::unique_ptr<Activity> activity;
};

/// A map nest over the positions 0..sizes[d]-1 whose innermost body is
/// `body(positions)`: results have `sizes` as their outer dimensions.
using PositionBody = function_ref<SmallVector<Value>(ImplicitLocOpBuilder &,
                                                     ArrayRef<Value>)>;
SmallVector<Value> tabulate(ImplicitLocOpBuilder &b, ArrayRef<Value> sizes,
                            PositionBody body,
                            SmallVector<Value> positions = {}) {
  auto indexTensor =
      RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, sizes.front());
  return buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
    SmallVector<Value> inner(positions);
    inner.push_back(i[0]);
    if (sizes.size() == 1)
      return body(ib, inner);
    return tabulate(ib, sizes.drop_front(), body, inner);
  });
}

/// The sizes of dimensions `from`.. of `tensor`.
SmallVector<Value> sizesFrom(ImplicitLocOpBuilder &b, Value tensor,
                             unsigned from) {
  SmallVector<Value> sizes;
  auto type = cast<RankedTensorType>(tensor.getType());
  for (int64_t d = from; d < type.getRank(); ++d)
    sizes.push_back(tensor::DimOp::create(b, tensor, d));
  return sizes;
}

/// How the program reads one operand of the SOAC at a position p of the
/// rows: `Column` is t[:, p] (a 1-D tensor), `Element` is t[p] (a row-shaped
/// operand: a neutral element, the result of a reduce), `Whole` is t itself
/// (the indices of a histogram). `original` (null for seeds and indices) is
/// the SOAC's operand whose adjoint receives the program argument's.
enum class Slice { Column, Element, Whole };
struct Sliced {
  Value primal;
  Slice how;
  Value original = nullptr;
};

Value sliceAt(ImplicitLocOpBuilder &b, const Sliced &s,
              ArrayRef<Value> position) {
  if (s.how == Slice::Whole)
    return s.primal;
  if (s.how == Slice::Element)
    return tensor::ExtractOp::create(b, s.primal, position);
  return tabulate(b, outerSize(b, s.primal),
                  [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> i) {
                    SmallVector<Value> at{i[0]};
                    llvm::append_range(at, position);
                    return SmallVector<Value>{
                        tensor::ExtractOp::create(ib, s.primal, at)};
                  })[0];
}

/// Per position p of the rows (`rowSizes`), the program's pull-back of
/// `seed` (sliced at p) run on `args` (sliced at p); the adjoints of the
/// arguments with an active `original` are put back together (columns
/// transposed back) and accumulated.
LogicalResult pullBackPerPosition(AdjointBuilder &a, ScalarProgram &program,
                                  ArrayRef<Sliced> args, Sliced seed,
                                  ArrayRef<Value> rowSizes) {
  ImplicitLocOpBuilder &b = a.builder();
  SmallVector<unsigned> wanted;
  for (auto [i, arg] : llvm::enumerate(args))
    if (arg.original && a.isActive(arg.original))
      wanted.push_back(i);
  if (wanted.empty())
    return success();
  bool failedSweep = false;
  SmallVector<Value> perPosition = tabulate(
      b, rowSizes, [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> position) {
        SmallVector<Value> sliced = llvm::map_to_vector(
            args, [&](const Sliced &s) { return sliceAt(ib, s, position); });
        FailureOr<SmallVector<Value>> adjoints = program.pullBack(
            ib, a.symbolTables(), sliced, sliceAt(ib, seed, position));
        if (failed(adjoints)) {
          failedSweep = true;
          return llvm::map_to_vector(wanted,
                                     [&](unsigned i) { return sliced[i]; });
        }
        return llvm::map_to_vector(wanted,
                                   [&](unsigned i) { return (*adjoints)[i]; });
      });
  if (failedSweep)
    return failure();
  for (auto [i, adjoint] : llvm::zip(wanted, perPosition)) {
    const Sliced &arg = args[i];
    if (arg.how == Slice::Column) {
      // [rows..., n] back to [n, rows...]
      SmallVector<Value> sizes{outerSize(b, arg.primal)};
      llvm::append_range(sizes, rowSizes);
      adjoint = tabulate(b, sizes,
                         [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> at) {
                           SmallVector<Value> from(at.drop_front());
                           from.push_back(at.front());
                           return SmallVector<Value>{
                               tensor::ExtractOp::create(ib, adjoint, from)};
                         })[0];
    }
    a.accumulate(arg.original, adjoint);
  }
  return success();
}

Type elementOf(Value tensor) {
  return cast<RankedTensorType>(tensor.getType()).getElementType();
}

RankedTensorType vectorOf(Type element) {
  return RankedTensorType::get({ShapedType::kDynamic}, element);
}

} // namespace

bool isElementwiseComponent(Region &region, unsigned j) {
  return findScalarOperator(region, j).has_value();
}

LogicalResult reverseElementwise(ReduceOp reduce, unsigned j,
                                 AdjointBuilder &a) {
  Value bar = a.adjoint(reduce.getResult(j));
  if (!bar)
    return success();
  ScalarOperator op = *findScalarOperator(reduce.getBody(), j);
  Value x = reduce.getInputs()[j], init = reduce.getInits()[j];
  Type element = elementOf(a.primal(x));
  ScalarProgram program(
      reduce.getLoc(), {vectorOf(element), element}, element,
      [&](ImplicitLocOpBuilder &b, ValueRange args) {
        return buildReduce(b, args[0], args[1],
                           [&](ImplicitLocOpBuilder &ib, ValueRange v) {
                             return cloneScalarOperator(ib, op, v);
                           })[0];
      });
  return pullBackPerPosition(
      a, program,
      {{a.primal(x), Slice::Column, x}, {a.primal(init), Slice::Element, init}},
      {bar, Slice::Element}, sizesFrom(a.builder(), a.primal(x), 1));
}

LogicalResult reverseElementwise(ScanOp scan, unsigned j, AdjointBuilder &a) {
  Value bar = a.adjoint(scan.getResult(j));
  if (!bar)
    return success();
  ScalarOperator op = *findScalarOperator(scan.getBody(), j);
  Value x = scan.getInputs()[j], init = scan.getInits()[j];
  Type element = elementOf(a.primal(x));
  ScalarProgram program(
      scan.getLoc(), {vectorOf(element), element}, vectorOf(element),
      [&](ImplicitLocOpBuilder &b, ValueRange args) {
        return buildScan(b, args[0], args[1],
                         [&](ImplicitLocOpBuilder &ib, ValueRange v) {
                           return cloneScalarOperator(ib, op, v);
                         })[0];
      });
  return pullBackPerPosition(
      a, program,
      {{a.primal(x), Slice::Column, x}, {a.primal(init), Slice::Element, init}},
      {bar, Slice::Column}, sizesFrom(a.builder(), a.primal(x), 1));
}

LogicalResult reverseElementwise(ReduceByIndexOp histogram, unsigned j,
                                 AdjointBuilder &a) {
  Value bar = a.adjoint(histogram.getResult(j));
  if (!bar)
    return success();
  ScalarOperator op = *findScalarOperator(histogram.getBody(), j);
  Value dest = histogram.getDests()[j], values = histogram.getValues()[j];
  Value init = histogram.getInits()[j];
  Value indices = a.primal(histogram.getIndices());
  Type element = elementOf(a.primal(dest));
  ScalarProgram program(
      histogram.getLoc(),
      {vectorOf(element), indices.getType(), vectorOf(element), element},
      vectorOf(element), [&](ImplicitLocOpBuilder &b, ValueRange args) {
        return buildHistogram(b, args[0], args[1], args[2], args[3],
                              [&](ImplicitLocOpBuilder &ib, ValueRange v) {
                                return cloneScalarOperator(ib, op, v);
                              })[0];
      });
  return pullBackPerPosition(a, program,
                             {{a.primal(dest), Slice::Column, dest},
                              {indices, Slice::Whole},
                              {a.primal(values), Slice::Column, values},
                              {a.primal(init), Slice::Element, init}},
                             {bar, Slice::Column},
                             sizesFrom(a.builder(), a.primal(dest), 1));
}

} // namespace soac::autodiff
