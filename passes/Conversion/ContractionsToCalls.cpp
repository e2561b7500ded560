//===- ContractionsToCalls.cpp - soac-contractions-to-calls ---------------===//
//
// A matrix product is worth a tuned kernel: blocked for the caches, packed,
// with register tiles of vector FMAs. The runtime (runtime/soac_matmul.c)
// calls the BLAS that Python registers at load time (numpy's OpenBLAS) and
// has plain loops otherwise; this pass makes every f32/f64 linalg.matmul on
// buffers a call of it, passing each operand's strides so that views are
// never copied.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"

namespace soac {
#define GEN_PASS_DEF_SOACCONTRACTIONSTOCALLS
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

/// Which operands the product reads transposed, if its maps are those of
/// op(A)·op(B) (MatmulToLinalg.cpp builds no others, but a module may).
std::optional<std::pair<bool, bool>> transposes(linalg::MatmulOp matmul) {
  SmallVector<AffineMap> maps = matmul.getIndexingMapsArray();
  MLIRContext *context = matmul.getContext();
  AffineExpr m, n, k;
  bindDims(context, m, n, k);
  auto map = [&](AffineExpr row, AffineExpr column) {
    return AffineMap::get(3, 0, {row, column}, context);
  };
  if (maps.size() != 3 || maps[2] != map(m, n))
    return std::nullopt;
  bool tl = maps[0] == map(k, m), tr = maps[1] == map(n, k);
  if ((!tl && maps[0] != map(m, k)) || (!tr && maps[1] != map(k, n)))
    return std::nullopt;
  return std::make_pair(tl, tr);
}

/// The zero fill of `output` right before `matmul`, which the call makes
/// redundant.
linalg::FillOp zeroFillBefore(linalg::MatmulOp matmul, Value output) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(matmul->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() ||
      fill.getDpsInitOperand(0)->get() != output)
    return nullptr;
  Value value = fill.getDpsInputOperand(0)->get();
  if (!matchPattern(value, m_AnyZeroFloat()))
    return nullptr;
  return fill;
}

/// Appends (aligned pointer, offset, stride 0, stride 1) of a 2-D buffer.
void appendOperand(ImplicitLocOpBuilder &b, Value buffer,
                   SmallVectorImpl<Value> &arguments) {
  auto metadata = memref::ExtractStridedMetadataOp::create(b, buffer);
  arguments.push_back(memref::ExtractAlignedPointerAsIndexOp::create(
      b, metadata.getBaseBuffer()));
  arguments.push_back(metadata.getOffset());
  llvm::append_range(arguments, metadata.getStrides());
}

func::FuncOp declareKernel(ModuleOp module, StringRef name, unsigned arity) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  SmallVector<Type> inputs(arity, b.getIndexType());
  auto kernel = func::FuncOp::create(b, module.getLoc(), name,
                                     b.getFunctionType(inputs, {}));
  kernel.setPrivate();
  return kernel;
}

struct SoacContractionsToCallsPass
    : soac::impl::SoacContractionsToCallsBase<SoacContractionsToCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::MatmulOp> products;
    module.walk([&](linalg::MatmulOp matmul) {
      if (matmul.hasPureBufferSemantics())
        products.push_back(matmul);
    });
    for (linalg::MatmulOp matmul : products) {
      std::optional<std::pair<bool, bool>> flags = transposes(matmul);
      Value lhs = matmul.getDpsInputOperand(0)->get();
      Value rhs = matmul.getDpsInputOperand(1)->get();
      Value out = matmul.getDpsInitOperand(0)->get();
      Type element = cast<MemRefType>(out.getType()).getElementType();
      if (!flags || !(element.isF32() || element.isF64()) ||
          cast<MemRefType>(lhs.getType()).getElementType() != element ||
          cast<MemRefType>(rhs.getType()).getElementType() != element)
        continue;
      auto [tl, tr] = *flags;
      linalg::FillOp fill = zeroFillBefore(matmul, out);
      ImplicitLocOpBuilder b(matmul.getLoc(), matmul);
      SmallVector<Value> arguments{
          arith::ConstantIndexOp::create(b, tl),
          arith::ConstantIndexOp::create(b, tr),
          memref::DimOp::create(b, out, 0), memref::DimOp::create(b, out, 1),
          memref::DimOp::create(b, lhs, tl ? 0 : 1)};
      for (Value operand : {lhs, rhs, out})
        appendOperand(b, operand, arguments);
      arguments.push_back(arith::ConstantIndexOp::create(b, fill ? 1 : 0));
      func::FuncOp kernel =
          declareKernel(module, element.isF32() ? "soac_matmul_f32"
                                                : "soac_matmul_f64",
                        arguments.size());
      func::CallOp::create(b, kernel, arguments);
      if (fill)
        fill.erase();
      matmul.erase();
    }
  }
};

} // namespace
