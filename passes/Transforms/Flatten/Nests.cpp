//===- Nests.cpp - nests of a map body and map fission --------------------===//
//
// The analyses the soac-flatten patterns share, and splitMap, the fission of a
// map into two maps that distribution and isolation are made of.
//
//===----------------------------------------------------------------------===//

#include "passes/Transforms/Flatten/Flatten.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace soac::flatten {

namespace {

bool isSoac(Operation *op) {
  return isa<MapOp, ReduceOp, ScanOp, ScatterOp, ReduceByIndexOp>(op);
}

/// A statement holding parallelism: a SOAC, or an op (scf.for, scf.if, ...)
/// with a SOAC in its regions. soac.iota only enumerates and does not count.
bool isParallel(Operation *op) {
  if (isSoac(op))
    return true;
  if (op->getNumRegions() == 0)
    return false;
  return op->walk([](Operation *nested) {
             return isSoac(nested) ? WalkResult::interrupt()
                                   : WalkResult::advance();
           })
      .wasInterrupted();
}

/// True when `value` is defined in `body` itself (an argument or the result
/// of one of its statements, not of an op nested deeper).
bool definedIn(Value value, Block &body) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == &body;
  return value.getDefiningOp()->getBlock() == &body;
}

/// Calls `fn` on every value `op` or an op nested in it reads.
void forEachValueRead(Operation *op, function_ref<void(Value)> fn) {
  op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      fn(operand);
  });
}

bool isRegular(Value value, Block &body);

/// True when the index `size` is the same in every row of the map whose body
/// is `body`: defined outside it, a constant, or a size of a regular tensor
/// at such an index.
bool isUniformSize(Value size, Block &body) {
  if (definedOutside(size, cast<MapOp>(body.getParentOp())) ||
      matchPattern(size, m_Constant()))
    return true;
  auto dim = size.getDefiningOp<tensor::DimOp>();
  return dim && isUniformSize(dim.getIndex(), body) &&
         isRegular(dim.getSource(), body);
}

/// True when the value `value`, defined in `body` or in a region nested in
/// it, has the same shape in every row of the map whose body is `body`, so
/// that the rows of it can be stacked into a tensor: scalars, tensors of
/// static shape, values defined outside the map, rows of regular tensors (the
/// map's own rows, and the rows a nested map takes of regular inputs), the
/// results of maps over regular inputs yielding regular values and of scans
/// of regular inputs, and iotas, splats and empty tensors of sizes the same
/// in every row. (Not a reduce's: an operator may change the shape of what
/// it combines, as a concatenation does.) GMM's per-point body, for
/// one, computes a K x d matrix x - mu_k by a map over the means yielding a
/// map over the point's row: regular, though its inner size is dynamic.
bool isRegular(Value value, Block &body) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return !isa<TensorType>(value.getType()) &&
           TensorType::isValidElementType(value.getType());
  if (type.hasStaticShape() ||
      definedOutside(value, cast<MapOp>(body.getParentOp())))
    return true;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (arg.getOwner() == &body)
      return true;
    auto nested = dyn_cast<MapOp>(arg.getOwner()->getParentOp());
    return nested && isRegular(nested.getInputs()[arg.getArgNumber()], body);
  }
  Operation *def = value.getDefiningOp();
  unsigned result = cast<OpResult>(value).getResultNumber();
  auto sizesUniform = [&](ValueRange sizes) {
    return llvm::all_of(sizes,
                        [&](Value size) { return isUniformSize(size, body); });
  };
  return llvm::TypeSwitch<Operation *, bool>(def)
      .Case([&](ScanOp scan) { return isRegular(scan.getInputs()[result], body); })
      .Case([&](MapOp map) {
        Value yielded = map.getBody().front().getTerminator()->getOperand(result);
        return llvm::any_of(map.getInputs(),
                            [&](Value input) { return isRegular(input, body); }) &&
               isRegular(yielded, body);
      })
      .Case([&](IotaOp iota) { return isUniformSize(iota.getSize(), body); })
      .Case([&](tensor::SplatOp splat) {
        return sizesUniform(splat.getDynamicSizes());
      })
      .Case([&](tensor::EmptyOp empty) {
        return sizesUniform(empty.getDynamicSizes());
      })
      .Default([](Operation *) { return false; });
}

RankedTensorType rowsOf(int64_t outer, Type row) {
  SmallVector<int64_t> shape{outer};
  if (auto tensor = dyn_cast<RankedTensorType>(row)) {
    llvm::append_range(shape, tensor.getShape());
    return RankedTensorType::get(shape, tensor.getElementType());
  }
  return RankedTensorType::get(shape, row);
}

} // namespace

bool definedOutside(Value value, MapOp map) {
  return !map->isAncestor(value.getParentRegion()->getParentOp());
}

bool inCombiningOperator(MapOp map) {
  for (Operation *parent = map->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<ReduceOp, ScanOp, ReduceByIndexOp>(parent))
      return true;
  return false;
}

int64_t staticOuterSize(MapOp map) {
  for (Value v : llvm::concat<Value>(map.getInputs(), map.getResults())) {
    auto type = cast<RankedTensorType>(v.getType());
    if (!type.isDynamicDim(0))
      return type.getDimSize(0);
  }
  return ShapedType::kDynamic;
}

Value outerSizeValue(OpBuilder &b, MapOp map) {
  int64_t outer = staticOuterSize(map);
  if (!ShapedType::isDynamic(outer))
    return arith::ConstantIndexOp::create(b, map.getLoc(), outer);
  return tensor::DimOp::create(b, map.getLoc(), map.getInputs().front(), 0);
}

bool hasPureBody(MapOp map) {
  for (Operation &op : map.getBody().front().without_terminator())
    if (!isMemoryEffectFree(&op))
      return false;
  return true;
}

SmallVector<Nest> findNests(MapOp map) {
  Block &body = map.getBody().front();
  // The top statement of the nest each parallel statement belongs to. A map
  // joins the nest of its readers when they are all in one nest (a map feeding
  // a reduce is one pass over the row with it, as fusion makes it).
  DenseMap<Operation *, Operation *> topOf;
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (!isParallel(&op))
      continue;
    Operation *joined = nullptr;
    if (isa<MapOp>(op) && !op.use_empty()) {
      for (Operation *user : op.getUsers()) {
        auto found = topOf.find(body.findAncestorOpInBlock(*user));
        if (found == topOf.end() || (joined && joined != found->second)) {
          joined = nullptr;
          break;
        }
        joined = found->second;
      }
    }
    topOf[&op] = joined ? joined : &op;
  }
  SmallVector<Nest> nests;
  DenseMap<Operation *, size_t> position;
  for (Operation &op : body.without_terminator())
    if (topOf.lookup(&op) == &op) {
      position[&op] = nests.size();
      nests.push_back(Nest{&op, {}});
    }
  for (Operation &op : body.without_terminator())
    if (Operation *top = topOf.lookup(&op))
      nests[position[top]].ops.push_back(&op);
  return nests;
}

SmallVector<Operation *> backwardSlice(MapOp map, ArrayRef<Operation *> ops) {
  Block &body = map.getBody().front();
  DenseSet<Operation *> slice(ops.begin(), ops.end());
  SmallVector<Operation *> worklist(ops.begin(), ops.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    forEachValueRead(op, [&](Value v) {
      if (isa<OpResult>(v) && definedIn(v, body) &&
          slice.insert(v.getDefiningOp()).second)
        worklist.push_back(v.getDefiningOp());
    });
  }
  SmallVector<Operation *> ordered;
  for (Operation &op : body.without_terminator())
    if (slice.contains(&op))
      ordered.push_back(&op);
  return ordered;
}

LogicalResult splitMap(PatternRewriter &rewriter, MapOp map,
                       ArrayRef<Operation *> first) {
  Block &body = map.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  DenseSet<Operation *> inFirst(first.begin(), first.end());
  SmallVector<Operation *> firstOps, secondOps;
  for (Operation &op : body.without_terminator())
    (inFirst.contains(&op) ? firstOps : secondOps).push_back(&op);
  if (firstOps.empty() || secondOps.empty())
    return rewriter.notifyMatchFailure(map, "a part of the split is empty");

  // What each part reads from the body: row arguments, and for the second
  // part the values of the first (which cross as extra results).
  SetVector<BlockArgument> firstArgs, secondArgs;
  SetVector<Value> crossing;
  for (Operation *op : firstOps)
    forEachValueRead(op, [&](Value v) {
      if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == &body)
        firstArgs.insert(arg);
    });
  auto readBySecond = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == &body)
        secondArgs.insert(arg);
    } else if (inFirst.contains(v.getDefiningOp())) {
      crossing.insert(v);
    }
  };
  for (Operation *op : secondOps)
    forEachValueRead(op, readBySecond);
  // Results of the map: from the first part where it computes them. A value
  // the map yields has the type of its result; another crossing value must
  // have one shape in all rows.
  SmallVector<Value> firstYields(crossing.begin(), crossing.end());
  SmallVector<Type> firstTypes;
  int64_t outer = staticOuterSize(map);
  for (Value v : crossing) {
    auto yielded = llvm::find(yield.getValues(), v);
    if (yielded != yield.getValues().end()) {
      firstTypes.push_back(
          map.getResult(yielded - yield.getValues().begin()).getType());
      continue;
    }
    if (!isRegular(v, body))
      return rewriter.notifyMatchFailure(
          map, "a value crossing the split may have a different shape per row");
    firstTypes.push_back(rowsOf(outer, v.getType()));
  }
  SmallVector<int64_t> secondResults;
  for (auto [i, v] : llvm::enumerate(yield.getValues())) {
    if (isa<OpResult>(v) && inFirst.contains(v.getDefiningOp())) {
      if (!llvm::is_contained(firstYields, v)) {
        firstYields.push_back(v);
        firstTypes.push_back(map.getResult(i).getType());
      }
      continue;
    }
    readBySecond(v);
    secondResults.push_back(i);
  }

  Location loc = map.getLoc();
  rewriter.setInsertionPoint(map);
  // Builds a map over `args`' inputs running `ops`; `extra` are more inputs
  // whose rows stand for the values `extraValues`.
  auto buildPart = [&](ArrayRef<BlockArgument> args, ValueRange extra,
                       ArrayRef<Value> extraValues, ArrayRef<Operation *> ops,
                       ArrayRef<Value> yields, TypeRange types) {
    SmallVector<Value> inputs;
    SmallVector<Type> argTypes;
    for (BlockArgument arg : args) {
      inputs.push_back(map.getInputs()[arg.getArgNumber()]);
      argTypes.push_back(arg.getType());
    }
    for (Value v : extraValues)
      argTypes.push_back(v.getType());
    llvm::append_range(inputs, extra);
    if (inputs.empty()) {
      // A part reading no row still runs once per row.
      inputs.push_back(map.getInputs().front());
      argTypes.push_back(body.getArgument(0).getType());
    }
    auto part = MapOp::create(rewriter, loc, types, inputs);
    Block *block = rewriter.createBlock(
        &part.getBody(), {}, argTypes,
        SmallVector<Location>(argTypes.size(), loc));
    IRMapping mapping;
    for (auto [arg, newArg] : llvm::zip(args, block->getArguments()))
      mapping.map(arg, newArg);
    for (auto [v, newArg] : llvm::zip(
             extraValues, block->getArguments().drop_front(args.size())))
      mapping.map(v, newArg);
    for (Operation *op : ops)
      rewriter.clone(*op, mapping);
    YieldOp::create(rewriter, loc,
                    llvm::map_to_vector(yields, [&](Value v) {
                      return mapping.lookupOrDefault(v);
                    }));
    rewriter.setInsertionPoint(map);
    return part;
  };

  MapOp firstMap = buildPart(firstArgs.getArrayRef(), {}, {}, firstOps,
                             firstYields, firstTypes);
  SmallVector<Value> replacements(map.getNumResults());
  for (auto [i, v] : llvm::enumerate(yield.getValues())) {
    auto *found = llvm::find(firstYields, v);
    if (found != firstYields.end())
      replacements[i] = firstMap.getResult(found - firstYields.begin());
  }
  // The second part computes the other results; with none, its statements
  // are dead.
  if (!secondResults.empty()) {
    SmallVector<Value> crossingRows = llvm::map_to_vector(
        crossing, [&](Value v) -> Value {
          return firstMap.getResult(llvm::find(firstYields, v) -
                                    firstYields.begin());
        });
    SmallVector<Value> secondYields;
    SmallVector<Type> secondTypes;
    for (int64_t i : secondResults) {
      secondYields.push_back(yield.getValues()[i]);
      secondTypes.push_back(map.getResult(i).getType());
    }
    MapOp secondMap =
        buildPart(secondArgs.getArrayRef(), crossingRows,
                  crossing.getArrayRef(), secondOps, secondYields, secondTypes);
    for (auto [position, i] : llvm::enumerate(secondResults))
      replacements[i] = secondMap.getResult(position);
  }
  rewriter.replaceOp(map, replacements);
  return success();
}

} // namespace soac::flatten
