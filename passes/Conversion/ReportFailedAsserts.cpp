//===- ReportFailedAsserts.cpp - soac-report-failed-asserts ---------------===//
//
// A failed cf.assert aborts the process (convert-cf-to-llvm), which takes a
// Python interpreter down with it. On the CPU a failed check calls the
// runtime's soac_report_error(message) instead, which does not return: it
// stops a call made through soac_call_checked (as Python makes them), which
// returns the message to raise; elsewhere it prints it and aborts.
//
//===----------------------------------------------------------------------===//
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/Support/FormatVariadic.h"

namespace soac {
#define GEN_PASS_DEF_SOACREPORTFAILEDASSERTS
#include "passes/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kReportError = "soac_report_error";

/// `llvm.func @soac_report_error(!llvm.ptr)`, declared once.
LLVM::LLVMFuncOp reportFunction(ModuleOp module) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(kReportError))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  MLIRContext *context = module.getContext();
  auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                          {LLVM::LLVMPointerType::get(context)});
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), kReportError, type);
}

/// A private constant global holding `message` and a terminating NUL.
LLVM::GlobalOp messageGlobal(ModuleOp module, StringRef message,
                             unsigned index) {
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  std::string text = (message + llvm::StringRef("\0", 1)).str();
  auto type = LLVM::LLVMArrayType::get(IntegerType::get(module.getContext(), 8),
                                       text.size());
  return LLVM::GlobalOp::create(
      b, module.getLoc(), type, /*isConstant=*/true, LLVM::Linkage::Private,
      llvm::formatv("soac_failed_check_{0}", index).str(),
      b.getStringAttr(text));
}

struct SoacReportFailedAssertsPass
    : soac::impl::SoacReportFailedAssertsBase<SoacReportFailedAssertsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<cf::AssertOp> asserts;
    module.walk([&](cf::AssertOp check) {
      if (!check->getParentOfType<gpu::GPUModuleOp>() &&
          !check->getParentOfType<gpu::LaunchOp>())
        asserts.push_back(check);
    });
    if (asserts.empty())
      return;
    LLVM::LLVMFuncOp report = reportFunction(module);
    for (auto [index, check] : llvm::enumerate(asserts)) {
      LLVM::GlobalOp message = messageGlobal(module, check.getMsg(), index);
      ImplicitLocOpBuilder b(check.getLoc(), check);
      Value failed = arith::XOrIOp::create(
          b, check.getArg(), arith::ConstantIntOp::create(b, 1, 1));
      auto ifFailed = scf::IfOp::create(b, failed, /*withElseRegion=*/false);
      b.setInsertionPointToStart(ifFailed.thenBlock());
      Value address = LLVM::AddressOfOp::create(b, message);
      LLVM::CallOp::create(b, report, ValueRange{address});
      check.erase();
    }
  }
};

} // namespace
