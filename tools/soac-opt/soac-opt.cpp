//===- soac-opt.cpp - the soac pass driver --------------------------------===//
//
// mlir-opt with the soac dialect (and, as they come, its passes) added to the
// upstream dialects and passes.
//
//===----------------------------------------------------------------------===//

#include "dialect/SoacDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  soac::registerSoacPasses();
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR (then PTX).
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  soac::registerSoacDialects(registry);
  soac::registerSoacExtensions(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "soac optimizer driver: the soac dialect and passes\n",
      registry));
}
