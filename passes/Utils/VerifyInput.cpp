//===- VerifyInput.cpp - verification that never aborts ------------------===//
#include "passes/Utils/VerifyInput.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>
#include <limits>

using namespace mlir;

namespace soac {

namespace {

/// The reassociation of a tensor.collapse_shape or tensor.expand_shape:
/// indices below the expanded rank. Ops whose operands, results or
/// attribute are not as ODS says are left to the verifier, which reports
/// them before it reads the indices.
LogicalResult checkReassociation(Operation *op) {
  bool collapse = op->getName().getStringRef() == "tensor.collapse_shape";
  Type expanded = collapse ? (op->getNumOperands() ? op->getOperand(0).getType()
                                                   : Type())
                           : (op->getNumResults() ? op->getResult(0).getType()
                                                  : Type());
  auto type = dyn_cast_or_null<RankedTensorType>(expanded);
  auto groups = op->getAttrOfType<ArrayAttr>("reassociation");
  if (!type || !groups)
    return success();
  for (auto [g, group] : llvm::enumerate(groups)) {
    auto indices = dyn_cast<ArrayAttr>(group);
    if (!indices)
      return success();
    for (Attribute index : indices) {
      auto value = dyn_cast<IntegerAttr>(index);
      if (!value)
        return success();
      int64_t d = value.getValue().getSExtValue();
      if (d < 0 || d >= type.getRank())
        return op->emitOpError()
               << "has index " << d << " in reassociation group " << g
               << ", outside the " << type.getRank()
               << " dimensions of its expanded type " << type;
    }
  }
  return success();
}

/// One operand of a tensor.from_elements per element of its result type.
LogicalResult checkElementCount(Operation *op) {
  auto type = op->getNumResults()
                  ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                  : nullptr;
  if (!type || !type.hasStaticShape())
    return success(); // the verifier says so
  uint64_t elements = 1;
  for (int64_t size : type.getShape())
    elements = llvm::SaturatingMultiply<uint64_t>(elements, size);
  if (elements == op->getNumOperands())
    return success();
  return op->emitOpError() << "has " << op->getNumOperands()
                           << " elements, but its type " << type << " holds "
                           << elements;
}

/// The dimension a tensor.concat joins along: one of its result's.
LogicalResult checkConcatDimension(Operation *op) {
  auto type = op->getNumResults()
                  ? dyn_cast<RankedTensorType>(op->getResult(0).getType())
                  : nullptr;
  auto dim = op->getAttrOfType<IntegerAttr>("dim");
  if (!type || !dim)
    return success(); // the verifier says so
  int64_t d = dim.getValue().getSExtValue();
  if (d >= 0 && d < type.getRank())
    return success();
  return op->emitOpError() << "concatenates along dimension " << d
                           << ", outside the " << type.getRank()
                           << " dimensions of its result type " << type;
}

} // namespace

LogicalResult verifyInput(Operation *root) {
  WalkResult checked = root->walk([](Operation *op) {
    StringRef name = op->getName().getStringRef();
    LogicalResult ok = success();
    if (name == "tensor.collapse_shape" || name == "tensor.expand_shape")
      ok = checkReassociation(op);
    else if (name == "tensor.from_elements")
      ok = checkElementCount(op);
    else if (name == "tensor.concat")
      ok = checkConcatDimension(op);
    return failed(ok) ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (checked.wasInterrupted())
    return failure();
  return verify(root);
}

LogicalResult checkTextBeforeParsing(MLIRContext *context, StringRef text,
                                     StringRef sourceName) {
  constexpr StringLiteral kOp = "tensor.from_elements";
  for (size_t at = text.find(kOp); at != StringRef::npos;
       at = text.find(kOp, at + kOp.size())) {
    // The generic form ("tensor.from_elements"(...)) parses one result type
    // whatever its size: its verifier's check comes after (verifyInput).
    // Names in quotes or comments are no ops.
    StringRef before = text.take_front(at);
    size_t lineStart = before.rfind('\n');
    StringRef lineBefore =
        before.drop_front(lineStart == StringRef::npos ? 0 : lineStart + 1);
    if (before.ends_with("\"") || before.ends_with("'") ||
        lineBefore.contains("//"))
      continue;
    // The first tensor type after the op's colon: its result type.
    size_t colon = text.find(':', at);
    size_t type =
        colon == StringRef::npos ? colon : text.find("tensor<", colon);
    if (type == StringRef::npos)
      break;
    StringRef dims = text.drop_front(type + strlen("tensor<"));
    uint64_t elements = 1;
    bool dynamic = false;
    while (!dims.empty() && llvm::isDigit(dims.front())) {
      uint64_t size = 0;
      if (dims.consumeInteger(10, size))
        size = std::numeric_limits<uint64_t>::max();
      elements = llvm::SaturatingMultiply(elements, size);
      if (!dims.consume_front("x"))
        break;
      dynamic |= dims.starts_with("?");
    }
    if (dynamic || elements <= text.size())
      continue;
    unsigned line = before.count('\n') + 1;
    unsigned column = lineBefore.size() + 1;
    return emitError(FileLineColLoc::get(context, sourceName, line, column))
           << "'tensor.from_elements' has a result of " << elements
           << " elements, more than its text can list operands for: it needs "
              "one operand per element";
  }
  return success();
}

} // namespace soac
