//===- SoacOps.cpp - soac operations and their verifiers ------------------===//
//
// Every diagnostic here names the operand or region argument by position and
// states both what was found and what was expected.
//
//===----------------------------------------------------------------------===//

#include "dialect/SoacOps.h"

#include "dialect/DerivativeSignature.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ShapedOpInterfaces.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace soac;

//===----------------------------------------------------------------------===//
// Operator regions in the custom assembly format
//===----------------------------------------------------------------------===//

/// The operator region of a SOAC, its `soac.yield` implicit when it yields
/// nothing. When the region does not parse, the values defined in it may
/// already be used (a forward reference elsewhere resolved to one of them),
/// and the parser destroys the region before those users: their uses are
/// dropped first, so that a parse error is only reported, never a crash.
static ParseResult parseBody(OpAsmParser &parser, Region &body) {
  if (failed(parser.parseRegion(body))) {
    for (Block &block : body)
      block.dropAllDefinedValueUses();
    return failure();
  }
  OpBuilder builder(parser.getContext());
  Location loc = parser.getEncodedSourceLoc(parser.getCurrentLocation());
  OpTrait::SingleBlockImplicitTerminator<YieldOp>::Impl<MapOp>::ensureTerminator(
      body, builder, loc);
  return success();
}

static void printBody(OpAsmPrinter &printer, Operation *, Region &body) {
  Operation *terminator =
      body.empty() ? nullptr : body.front().getTerminator();
  bool printTerminator = !terminator ||
                         !terminator->getAttrDictionary().empty() ||
                         terminator->getNumOperands() != 0;
  printer.printRegion(body, /*printEntryBlockArgs=*/true, printTerminator);
}

#define GET_OP_CLASSES
#include "dialect/SoacOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared rules
//===----------------------------------------------------------------------===//

Type soac::rowType(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  if (tensor.getRank() == 1)
    return tensor.getElementType();
  return RankedTensorType::get(tensor.getShape().drop_front(),
                               tensor.getElementType());
}

Operation *soac::combiningOp(Region &body) {
  Block &block = body.front();
  if (block.getNumArguments() != 2 ||
      !llvm::hasSingleElement(block.without_terminator()))
    return nullptr;
  Operation &op = block.front();
  Operation *terminator = block.getTerminator();
  if (op.getNumOperands() != 2 || op.getNumResults() != 1 ||
      op.getNumRegions() != 0 || terminator->getNumOperands() != 1 ||
      terminator->getOperand(0) != op.getResult(0))
    return nullptr;
  auto args = block.getArguments();
  bool direct = op.getOperand(0) == args[0] && op.getOperand(1) == args[1];
  bool swapped = op.getOperand(0) == args[1] && op.getOperand(1) == args[0];
  return direct || swapped ? &op : nullptr;
}

MapOp soac::copyMap(OpBuilder &b, MapOp map, ArrayRef<bool> keepInputs,
                    ArrayRef<bool> keepResults) {
  SmallVector<Value> inputs;
  for (auto [input, keep] : llvm::zip(map.getInputs(), keepInputs))
    if (keep)
      inputs.push_back(input);
  SmallVector<Type> types;
  for (auto [type, keep] : llvm::zip(map.getResultTypes(), keepResults))
    if (keep)
      types.push_back(type);
  auto copy = MapOp::create(b, map.getLoc(), types, inputs);
  Block &old = map.getBody().front();
  OpBuilder::InsertionGuard guard(b);
  Block *body = b.createBlock(&copy.getBody());
  IRMapping mapping;
  for (auto [arg, keep] : llvm::zip(old.getArguments(), keepInputs))
    if (keep)
      mapping.map(arg, body->addArgument(arg.getType(), arg.getLoc()));
  for (Operation &op : old.without_terminator())
    b.clone(op, mapping);
  SmallVector<Value> yielded;
  for (auto [value, keep] :
       llvm::zip(old.getTerminator()->getOperands(), keepResults))
    if (keep)
      yielded.push_back(mapping.lookupOrDefault(value));
  YieldOp::create(b, map.getLoc(), yielded);
  return copy;
}

LogicalResult soac::verifyDimIndices(Operation *root) {
  WalkResult walked = root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op != root && isa<MapOp, ReduceOp, ScanOp, ReduceByIndexOp>(op))
      return WalkResult::skip(); // its verifier checks its body
    auto dim = dyn_cast<ShapedDimOpInterface>(op);
    if (!dim)
      return WalkResult::advance();
    auto type = cast<ShapedType>(dim.getShapedValue().getType());
    OpFoldResult index = dim.getDimension();
    APInt constant;
    if (auto attr = dyn_cast<Attribute>(index)) {
      auto integer = dyn_cast<IntegerAttr>(attr);
      if (!integer)
        return WalkResult::advance();
      constant = integer.getValue();
    } else if (!matchPattern(cast<Value>(index), m_ConstantInt(&constant))) {
      return WalkResult::advance();
    }
    if (!type.hasRank() || (constant.sge(0) && constant.slt(type.getRank())))
      return WalkResult::advance();
    op->emitOpError() << "index " << constant.getSExtValue()
                      << " is out of range for its source of type " << type
                      << ": expected an index below its rank, "
                      << type.getRank();
    return WalkResult::interrupt();
  });
  return failure(walked.wasInterrupted());
}

namespace {

SmallVector<Type> rowTypes(ValueRange tensors) {
  return llvm::map_to_vector(tensors,
                             [](Value v) { return rowType(v.getType()); });
}

/// Checks that each tensor in `tensors` has rows (rank >= 1) and that their
/// static outer sizes agree. Returns the common outer size, or
/// ShapedType::kDynamic when none of them is static.
FailureOr<int64_t> verifyOuterSizes(Operation *op, ValueRange tensors,
                                    StringRef what) {
  int64_t outer = ShapedType::kDynamic;
  size_t source = 0;
  for (auto [i, value] : llvm::enumerate(tensors)) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getRank() == 0)
      return op->emitOpError() << what << " #" << i
                               << " must have rank >= 1 to have rows, got "
                               << type;
    int64_t size = type.getDimSize(0);
    if (ShapedType::isDynamic(size))
      continue;
    if (ShapedType::isDynamic(outer)) {
      outer = size;
      source = i;
    } else if (size != outer) {
      return op->emitOpError()
             << what << " #" << i << " has outer size " << size << ", but "
             << what << " #" << source << " has outer size " << outer;
    }
  }
  return outer;
}

bool sizesCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Checks that `result` has rows of type `row` and an outer size compatible
/// with `outer`, the outer size of the op's inputs.
LogicalResult verifyResultOfRows(Operation *op, size_t position, Type result,
                                 int64_t outer, Type row, StringRef rowSource) {
  auto tensor = cast<RankedTensorType>(result);
  if (tensor.getRank() == 0)
    return op->emitOpError() << "result #" << position
                             << " must have rank >= 1, got " << tensor;
  if (!sizesCompatible(tensor.getDimSize(0), outer))
    return op->emitOpError()
           << "result #" << position << " has outer size "
           << tensor.getDimSize(0) << ", but the inputs have outer size "
           << outer;
  if (rowType(tensor) != row)
    return op->emitOpError() << "result #" << position << " has rows of type "
                             << rowType(tensor) << ", but " << rowSource
                             << " #" << position << " has type " << row;
  return success();
}

/// Checks the body's block arguments against `expected` and the yielded types
/// against `yielded`. `region` names the body in messages ("body", "operator").
LogicalResult verifyBody(Operation *op, Block &body, TypeRange expected,
                         StringRef region, StringRef argumentsHint) {
  if (body.getNumArguments() != expected.size())
    return op->emitOpError()
           << region << " must take " << expected.size() << " arguments ("
           << argumentsHint << "), got " << body.getNumArguments();
  for (auto [i, arg, type] : llvm::enumerate(body.getArguments(), expected))
    if (arg.getType() != type)
      return op->emitOpError() << region << " argument #" << i << " has type "
                               << arg.getType() << ", expected " << type;
  return success();
}

LogicalResult verifyYield(Operation *op, TypeRange expected,
                          StringRef expectedHint) {
  auto yield = cast<YieldOp>(op->getRegion(0).front().getTerminator());
  if (yield.getValues().size() != expected.size())
    return yield.emitOpError()
           << "yields " << yield.getValues().size() << " values, but the "
           << op->getName() << " expects " << expected.size() << " ("
           << expectedHint << ")";
  for (auto [i, value, type] : llvm::enumerate(yield.getValues(), expected))
    if (value.getType() != type)
      return yield.emitOpError() << "value #" << i << " has type "
                                 << value.getType() << ", expected " << type;
  return success();
}

/// An associative operator over k values: 2k arguments (accumulators, then
/// values) of the neutral elements' types, yielding k values of those types.
LogicalResult verifyOperator(Operation *op, TypeRange elementTypes) {
  SmallVector<Type> argTypes(elementTypes);
  argTypes.append(elementTypes.begin(), elementTypes.end());
  std::string hint = std::to_string(elementTypes.size()) +
                     " accumulated values, then " +
                     std::to_string(elementTypes.size()) + " new values";
  if (failed(verifyBody(op, op->getRegion(0).front(), argTypes, "operator",
                        hint)))
    return failure();
  return verifyYield(op, elementTypes, "one per neutral element");
}

/// Checks that there is one neutral element per tensor and that it has the
/// type of that tensor's rows.
LogicalResult verifyNeutralElements(Operation *op, ValueRange tensors,
                                    ValueRange inits, StringRef what) {
  if (inits.size() != tensors.size())
    return op->emitOpError()
           << "has " << tensors.size() << " " << what << " tensors but "
           << inits.size() << " neutral elements; expected one per " << what;
  for (auto [i, tensor, init] : llvm::enumerate(tensors, inits))
    if (rowType(tensor.getType()) != init.getType())
      return op->emitOpError()
             << "neutral element #" << i << " has type " << init.getType()
             << ", but the rows of " << what << " #" << i << " have type "
             << rowType(tensor.getType());
  return success();
}

LogicalResult verifyIndices(Operation *op, Value indices) {
  auto type = cast<RankedTensorType>(indices.getType());
  Type element = type.getElementType();
  bool indexLike = element.isIndex() || element.isSignlessInteger(32) ||
                   element.isSignlessInteger(64);
  if (type.getRank() != 1 || !indexLike)
    return op->emitOpError()
           << "indices must be a 1-D tensor of index, i32 or i64, got "
           << type;
  return success();
}

/// Checks that the rows of `values` (one per index) fit the rows of `dest`.
LogicalResult verifyValuesForIndices(Operation *op, Value indices,
                                     ValueRange values, ValueRange dests) {
  FailureOr<int64_t> outer = verifyOuterSizes(op, values, "value tensor");
  if (failed(outer))
    return failure();
  int64_t numIndices = cast<RankedTensorType>(indices.getType()).getDimSize(0);
  if (!sizesCompatible(*outer, numIndices))
    return op->emitOpError() << "value tensors have outer size " << *outer
                             << ", but there are " << numIndices << " indices";
  for (auto [i, value, dest] : llvm::enumerate(values, dests))
    if (rowType(value.getType()) != rowType(dest.getType()))
      return op->emitOpError()
             << "rows of value tensor #" << i << " have type "
             << rowType(value.getType()) << ", but rows of dest #" << i
             << " have type " << rowType(dest.getType());
  return success();
}

LogicalResult verifyResultsMatch(Operation *op, TypeRange expected,
                                 StringRef source) {
  if (op->getNumResults() != expected.size())
    return op->emitOpError() << "has " << op->getNumResults()
                             << " results, expected " << expected.size()
                             << " (one per " << source << ")";
  for (auto [i, result, type] : llvm::enumerate(op->getResultTypes(), expected))
    if (result != type)
      return op->emitOpError() << "result #" << i << " has type " << result
                               << ", but " << source << " #" << i
                               << " has type " << type;
  return success();
}

LogicalResult requireInputs(Operation *op, ValueRange inputs) {
  if (inputs.empty())
    return op->emitOpError()
           << "needs at least one input (the outer size comes from the inputs)";
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// MapOp
//===----------------------------------------------------------------------===//

LogicalResult MapOp::verifyRegions() {
  if (failed(requireInputs(*this, getInputs())))
    return failure();
  FailureOr<int64_t> outer = verifyOuterSizes(*this, getInputs(), "input");
  if (failed(outer) ||
      failed(verifyBody(*this, getBody().front(), rowTypes(getInputs()), "body",
                        "one row per input")))
    return failure();
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  TypeRange yielded = yield.getValues().getTypes();
  if (yielded.size() != getNumResults())
    return yield.emitOpError()
           << "yields " << yielded.size() << " values, but the 'soac.map' has "
           << getNumResults() << " results";
  for (auto [i, result, row] : llvm::enumerate(getResultTypes(), yielded))
    if (failed(verifyResultOfRows(*this, i, result, *outer, row,
                                  "yielded value")))
      return failure();
  return verifyDimIndices(*this);
}

//===----------------------------------------------------------------------===//
// ReduceOp and ScanOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verifyRegions() {
  if (failed(requireInputs(*this, getInputs())) ||
      failed(verifyOuterSizes(*this, getInputs(), "input")) ||
      failed(verifyNeutralElements(*this, getInputs(), getInits(), "input")) ||
      failed(verifyOperator(*this, getInits().getTypes())))
    return failure();
  if (failed(verifyResultsMatch(*this, getInits().getTypes(),
                                "neutral element")))
    return failure();
  return verifyDimIndices(*this);
}

LogicalResult ScanOp::verifyRegions() {
  if (failed(requireInputs(*this, getInputs())))
    return failure();
  FailureOr<int64_t> outer = verifyOuterSizes(*this, getInputs(), "input");
  if (failed(outer) ||
      failed(verifyNeutralElements(*this, getInputs(), getInits(), "input")) ||
      failed(verifyOperator(*this, getInits().getTypes())))
    return failure();
  if (getNumResults() != getInits().size())
    return emitOpError() << "has " << getNumResults() << " results, expected "
                         << getInits().size() << " (one per input)";
  for (auto [i, result, init] :
       llvm::enumerate(getResultTypes(), getInits().getTypes()))
    if (failed(verifyResultOfRows(*this, i, result, *outer, init,
                                  "neutral element")))
      return failure();
  return verifyDimIndices(*this);
}

//===----------------------------------------------------------------------===//
// ScatterOp and ReduceByIndexOp
//===----------------------------------------------------------------------===//

LogicalResult ScatterOp::verify() {
  if (failed(verifyOuterSizes(*this, getDest(), "dest")) ||
      failed(verifyIndices(*this, getIndices())) ||
      failed(verifyValuesForIndices(*this, getIndices(), getValues(),
                                    getDest())))
    return failure();
  return verifyResultsMatch(*this, getDest().getType(), "dest");
}

LogicalResult ReduceByIndexOp::verifyRegions() {
  if (getDests().empty())
    return emitOpError() << "needs at least one dest";
  if (getValues().size() != getDests().size())
    return emitOpError() << "has " << getDests().size() << " dests but "
                         << getValues().size()
                         << " value tensors; expected one per dest";
  if (failed(verifyOuterSizes(*this, getDests(), "dest")) ||
      failed(verifyIndices(*this, getIndices())) ||
      failed(verifyValuesForIndices(*this, getIndices(), getValues(),
                                    getDests())) ||
      failed(verifyNeutralElements(*this, getDests(), getInits(), "dest")) ||
      failed(verifyOperator(*this, getInits().getTypes())))
    return failure();
  if (failed(verifyResultsMatch(*this, getDests().getTypes(), "dest")))
    return failure();
  return verifyDimIndices(*this);
}

//===----------------------------------------------------------------------===//
// IotaOp
//===----------------------------------------------------------------------===//

LogicalResult IotaOp::verify() {
  auto type = cast<RankedTensorType>(getResult().getType());
  Type element = type.getElementType();
  if (type.getRank() != 1)
    return emitOpError() << "result must be a 1-D tensor, got " << type;
  if (!element.isIndex() && !element.isSignlessInteger())
    return emitOpError() << "element type must be index or a signless integer, "
                            "got "
                         << element;
  bool dynamic = type.isDynamicDim(0);
  if (dynamic && !getSize())
    return emitOpError() << "needs a size operand for the dynamic size of "
                         << type;
  if (!dynamic && getSize())
    return emitOpError() << "has a size operand, but the size of " << type
                         << " is static";
  return success();
}

//===----------------------------------------------------------------------===//
// VjpOp and JvpOp
//===----------------------------------------------------------------------===//

namespace {

LogicalResult verifyWrtOrder(Operation *op, std::optional<ArrayRef<int64_t>> wrt) {
  if (!wrt)
    return success();
  for (auto [i, position] : llvm::enumerate(*wrt)) {
    if (position < 0)
      return op->emitOpError() << "wrt position " << position
                               << " is negative";
    if (i > 0 && position <= (*wrt)[i - 1])
      return op->emitOpError()
             << "wrt must list argument positions in strictly increasing "
                "order, but "
             << position << " follows " << (*wrt)[i - 1];
  }
  return success();
}

/// Resolves the callee and the differentiated argument positions, checking
/// that each position exists and has a differentiable type.
FailureOr<std::pair<FunctionOpInterface, SmallVector<int64_t>>>
resolveDerivative(Operation *op, FlatSymbolRefAttr callee,
                  std::optional<ArrayRef<int64_t>> wrt,
                  SymbolTableCollection &symbolTable) {
  auto fn =
      symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(op, callee);
  if (!fn)
    return op->emitOpError() << "callee " << callee
                             << " does not name a function";
  ArrayRef<Type> args = fn.getArgumentTypes();
  SmallVector<int64_t> positions = wrtPositions(wrt, args.size());
  for (int64_t position : positions) {
    if (position >= static_cast<int64_t>(args.size()))
      return op->emitOpError()
             << "wrt position " << position << " is out of range: " << callee
             << " has " << args.size() << " arguments";
    if (!isDifferentiableType(args[position]))
      return op->emitOpError()
             << "cannot differentiate " << callee << " with respect to argument #"
             << position << " of type " << args[position]
             << " (not a float or a tensor of floats); choose arguments with "
                "`wrt [...]`";
  }
  return std::make_pair(fn, positions);
}

LogicalResult verifySlots(Operation *op, FlatSymbolRefAttr callee,
                          StringRef kind, TypeRange actual,
                          ArrayRef<DerivativeSlot> expected, StringRef layout,
                          int64_t width) {
  if (actual.size() != expected.size())
    return op->emitOpError() << "has " << actual.size() << " " << kind
                             << "s, but differentiating " << callee
                             << " needs " << expected.size() << " (" << layout
                             << ")";
  for (auto [i, type, slot] : llvm::enumerate(actual, expected))
    if (type != slot.type)
      return op->emitOpError()
             << kind << " #" << i << " has type " << type << ", but "
             << callee << " implies " << slot.type << " for the "
             << slot.describe(width);
  return success();
}

/// Checks a derivative op's operands and results against the signature its
/// callee implies (DerivativeSignature.h).
template <typename DerivativeOp>
LogicalResult verifyDerivativeSymbolUses(DerivativeOp op, DerivativeKind kind,
                                         SymbolTableCollection &symbolTable) {
  auto resolved =
      resolveDerivative(op, op.getCalleeAttr(), op.getWrt(), symbolTable);
  if (failed(resolved))
    return failure();
  auto [fn, positions] = *resolved;
  int64_t width = op.getWidth().value_or(1);
  DerivativeSignature signature = getDerivativeSignature(
      kind, fn.getArgumentTypes(), fn.getResultTypes(), positions, width);
  if (failed(verifySlots(op, op.getCalleeAttr(), "operand",
                         op->getOperandTypes(), signature.inputs,
                         signature.inputLayout, width)))
    return failure();
  return verifySlots(op, op.getCalleeAttr(), "result", op->getResultTypes(),
                     signature.outputs, signature.outputLayout, width);
}

} // namespace

/// Each lane of a derivative in vector mode takes or gives at least one value
/// (a tangent, a cotangent or a gradient): a width beyond the op's operands
/// and results cannot match the callee, and is refused before the symbol
/// check builds one expected type per lane (2^31 lanes took forever).
template <typename DerivativeOp>
LogicalResult verifyWidth(DerivativeOp op) {
  int64_t width = op.getWidth().value_or(1);
  int64_t values = op->getNumOperands() + op->getNumResults();
  if (width > values)
    return op.emitOpError() << "has width " << width << ", more lanes than its "
                            << values << " operands and results can hold";
  return success();
}

LogicalResult VjpOp::verify() {
  if (failed(verifyWidth(*this)))
    return failure();
  return verifyWrtOrder(*this, getWrt());
}
LogicalResult JvpOp::verify() {
  if (failed(verifyWidth(*this)))
    return failure();
  return verifyWrtOrder(*this, getWrt());
}

LogicalResult VjpOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyDerivativeSymbolUses(*this, DerivativeKind::Vjp, symbolTable);
}

LogicalResult JvpOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyDerivativeSymbolUses(*this, DerivativeKind::Jvp, symbolTable);
}

//===----------------------------------------------------------------------===//
// CheckIndexOp
//===----------------------------------------------------------------------===//

/// A check of a constant index against a constant size that holds is the
/// index itself; one that fails stays, to fail at run time if it is reached.
/// A check of the index against the same size that runs before this one
/// whenever this one runs (earlier in this block, or in a block around it)
/// has done the check: this one is its result. soac-check-indices checks
/// each op's accesses, so an extract_slice and the insert_slice that puts
/// the slice back check one offset twice; with one checked offset, the two
/// are seen to be the same slice (convert-soac-to-loops and bufferization
/// then update it in place).
OpFoldResult CheckIndexOp::fold(FoldAdaptor adaptor) {
  auto index = dyn_cast_or_null<IntegerAttr>(adaptor.getIndex());
  auto size = dyn_cast_or_null<IntegerAttr>(adaptor.getSize());
  if (index && size && index.getValue().ult(size.getValue()))
    return getIndex();
  for (Operation *user : getIndex().getUsers()) {
    auto earlier = dyn_cast<CheckIndexOp>(user);
    if (!earlier || earlier == *this || earlier.getSize() != getSize())
      continue;
    Operation *here = earlier->getBlock()->findAncestorOpInBlock(*getOperation());
    if (here && earlier->isBeforeInBlock(here))
      return earlier.getResult();
  }
  return {};
}

Speculation::Speculatability CheckIndexOp::getSpeculatability() {
  return Speculation::NotSpeculatable;
}

//===----------------------------------------------------------------------===//
// CheckOp
//===----------------------------------------------------------------------===//

/// The message is a printf format (soac-lower-checks passes it to the
/// runtime with the values): one `%lld` per value, no other conversion.
LogicalResult CheckOp::verify() {
  StringRef message = getMessage();
  size_t conversions = 0;
  for (size_t at = message.find('%'); at != StringRef::npos;
       at = message.find('%', at)) {
    if (message.substr(at).starts_with("%%")) {
      at += 2;
    } else if (message.substr(at).starts_with("%lld")) {
      ++conversions;
      at += 4;
    } else {
      return emitOpError() << "message has a '%' at " << at
                           << " that is neither '%lld' nor '%%'";
    }
  }
  if (conversions != getValues().size())
    return emitOpError() << "message shows " << conversions
                         << " values ('%lld'), but the op has "
                         << getValues().size();
  if (conversions > 2)
    return emitOpError() << "shows " << conversions
                         << " values; at most 2 are supported";
  return success();
}

/// A check of a condition that holds does nothing.
LogicalResult CheckOp::canonicalize(CheckOp op, PatternRewriter &rewriter) {
  if (!matchPattern(op.getCondition(), m_One()))
    return failure();
  rewriter.eraseOp(op);
  return success();
}
