//===- SoacDialect.cpp - the soac dialect ---------------------------------===//
#include "dialect/SoacDialect.h"
#include "dialect/SoacOps.h"

#include "dialect/SoacDialect.cpp.inc"

void soac::SoacDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialect/SoacOps.cpp.inc"
      >();
}

void soac::registerSoacDialects(mlir::DialectRegistry &registry) {
  registry.insert<SoacDialect>();
}
