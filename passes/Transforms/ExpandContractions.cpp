//===- ExpandContractions.cpp - soac-expand-contractions ------------------===//
//
// soac.matmul as the SOACs every lowering knows: a map over C's rows of a
// map over its columns of a reduce (+) of products. The GPU lowering runs
// products this way (one thread per row of C, a thread kernel); the CPU
// lowering keeps them as contractions and calls a tuned kernel instead.
//
//===----------------------------------------------------------------------===//
#include "passes/Transforms/Passes.h"

#include "dialect/SoacOps.h"
#include "passes/AutoDiff/Interfaces/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace soac {
#define GEN_PASS_DEF_SOACEXPANDCONTRACTIONS
#include "passes/Transforms/Passes.h.inc"
} // namespace soac

using namespace mlir;
using namespace soac;
using autodiff::buildMap;
using autodiff::buildReduce;
using autodiff::castToType;

namespace {

Value iota(ImplicitLocOpBuilder &b, Value size) {
  auto type = RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  return IotaOp::create(b, type, size);
}

Value combine(ImplicitLocOpBuilder &b, Value x, Value y, bool multiply) {
  if (isa<FloatType>(x.getType()))
    return multiply ? Value(arith::MulFOp::create(b, x, y))
                    : Value(arith::AddFOp::create(b, x, y));
  return multiply ? Value(arith::MulIOp::create(b, x, y))
                  : Value(arith::AddIOp::create(b, x, y));
}

void expand(MatmulOp op) {
  ImplicitLocOpBuilder b(op.getLoc(), op);
  Value lhs = op.getLhs(), rhs = op.getRhs();
  bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  MatmulOp::Sizes sizes = op.buildSizes(b);
  Value m = sizes.m, k = sizes.kLhs, n = sizes.n;
  Type element = op.getType().getElementType();
  Value zero = arith::ConstantOp::create(b, element, b.getZeroAttr(element));
  Value rows = iota(b, m), columns = iota(b, n), inner = iota(b, k);
  auto entry = [&](ImplicitLocOpBuilder &ib, Value i,
                   Value j) -> SmallVector<Value> {
    Value products =
        buildMap(ib, inner, [&](ImplicitLocOpBuilder &pb, ValueRange p) {
          Value x = tensor::ExtractOp::create(
              pb, lhs, tl ? ValueRange{p[0], i} : ValueRange{i, p[0]});
          Value y = tensor::ExtractOp::create(
              pb, rhs, tr ? ValueRange{j, p[0]} : ValueRange{p[0], j});
          return SmallVector<Value>{combine(pb, x, y, /*multiply=*/true)};
        })[0];
    return buildReduce(ib, products, zero,
                       [&](ImplicitLocOpBuilder &rb, ValueRange acc) {
                         return SmallVector<Value>{
                             combine(rb, acc[0], acc[1], /*multiply=*/false)};
                       });
  };
  Value result =
      buildMap(b, rows, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
        return buildMap(ib, columns, [&](ImplicitLocOpBuilder &jb,
                                         ValueRange j) {
          return entry(jb, i[0], j[0]);
        });
      })[0];
  op.replaceAllUsesWith(castToType(b, result, op.getType()));
  op.erase();
}

struct SoacExpandContractionsPass
    : soac::impl::SoacExpandContractionsBase<SoacExpandContractionsPass> {
  using SoacExpandContractionsBase::SoacExpandContractionsBase;

  void runOnOperation() override {
    SmallVector<MatmulOp> products;
    getOperation().walk([&](MatmulOp op) {
      Operation *parent = op->getParentOp();
      while (parent && !isa_and_nonnull<SoacDialect>(parent->getDialect()))
        parent = parent->getParentOp();
      if (parent || !nestedOnly)
        products.push_back(op);
    });
    for (MatmulOp op : products)
      expand(op);
  }
};

} // namespace
