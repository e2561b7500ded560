//===- SoacDialect.cpp - the soac dialect ---------------------------------===//
#include "dialect/SoacDialect.h"
#include "dialect/SoacOps.h"

#include "mlir/Transforms/InliningUtils.h"

#include "dialect/SoacDialect.cpp.inc"

namespace {
/// SOACs have value semantics and no side effects: calls to functions using
/// them may be inlined (soac-lower-to-cpu inlines the functions autodiff
/// generates, so that the primal results a caller ignores become dead).
struct SoacInlinerInterface : mlir::DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(mlir::Operation *, mlir::Region *, bool,
                       mlir::IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(mlir::Region *, mlir::Region *, bool,
                       mlir::IRMapping &) const final {
    return true;
  }
};
} // namespace

void soac::SoacDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/SoacOps.cpp.inc"
      >();
  addInterfaces<SoacInlinerInterface>();
}

void soac::registerSoacDialects(mlir::DialectRegistry &registry) {
  registry.insert<SoacDialect>();
}
