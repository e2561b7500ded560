//===- soac-opt.cpp - the soac pass driver --------------------------------===//
//
// mlir-opt with the soac dialect and passes added to the upstream dialects
// and passes. Input is parsed with verification off and verified by
// soac::verifyInput, as the first pass: some of MLIR's verifiers assert on
// input they should report (passes/Utils/VerifyInput.h).
//
//===----------------------------------------------------------------------===//

#include "dialect/SoacDialect.h"
#include "passes/Passes.h"
#include "passes/Utils/VerifyInput.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

namespace {

/// What the parser would have verified, with soac's checks first.
struct VerifyInputPass
    : mlir::PassWrapper<VerifyInputPass, mlir::OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(VerifyInputPass)

  llvm::StringRef getArgument() const override { return "soac-verify-input"; }

  void runOnOperation() override {
    if (failed(soac::verifyInput(getOperation())))
      return signalPassFailure();
    // Unchanged: the pass manager need not verify it again.
    markAllAnalysesPreserved();
  }
};

/// `config` with the input verified by VerifyInputPass instead of the
/// parser, unless verification on parsing was turned off.
mlir::MlirOptMainConfig verifyingInput(mlir::MlirOptMainConfig config) {
  if (!config.shouldVerifyOnParsing())
    return config;
  mlir::MlirOptMainConfig requested = config;
  config.verifyOnParsing(false).setPassPipelineSetupFn(
      [requested](mlir::PassManager &pm) {
        pm.addPass(std::make_unique<VerifyInputPass>());
        return requested.setupPassPipeline(pm);
      });
  return config;
}

} // namespace

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

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "soac optimizer driver: the soac dialect and passes\n",
      registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // Listings print and return: upstream's driver does them.
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(mlir::MlirOptMain(
        argc, argv, inputFilename, outputFilename, registry));

  // Stack traces on crashes, as upstream's driver sets up after parsing the
  // options.
  llvm::InitLLVM init(argc, argv);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  std::unique_ptr<llvm::ToolOutputFile> output =
      input ? mlir::openOutputFile(outputFilename, &error) : nullptr;
  if (!output) {
    llvm::errs() << error << "\n";
    return EXIT_FAILURE;
  }
  {
    // Text MLIR's parser would abort on, refused before it reads it (the
    // error shows its line, as the parser's would). The context only
    // carries the diagnostic: no dialects, no threads.
    mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
    llvm::SourceMgr source;
    source.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(input->getMemBufferRef(),
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    mlir::SourceMgrDiagnosticHandler handler(source, &context);
    if (failed(soac::checkTextBeforeParsing(
            &context, input->getBuffer(), input->getBufferIdentifier())))
      return EXIT_FAILURE;
  }
  if (failed(mlir::MlirOptMain(output->os(), std::move(input), registry,
                               verifyingInput(config))))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
