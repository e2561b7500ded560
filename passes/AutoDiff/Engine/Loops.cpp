//===- Loops.cpp - scf.for helpers for the loop rules ---------------------===//
#include "passes/AutoDiff/Engine/Loops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace soac::autodiff {

Value castInteger(ImplicitLocOpBuilder &b, Value value, Type type) {
  if (value.getType() == type)
    return value;
  return arith::IndexCastOp::create(b, type, value);
}

Value tripCount(ImplicitLocOpBuilder &b, Value lb, Value ub, Value step) {
  Value zero =
      arith::ConstantOp::create(b, lb.getType(), b.getZeroAttr(lb.getType()));
  Value span = arith::MaxSIOp::create(b, arith::SubIOp::create(b, ub, lb), zero);
  return castInteger(b, arith::CeilDivSIOp::create(b, span, step),
                     b.getIndexType());
}

Value inductionValue(ImplicitLocOpBuilder &b, Value lb, Value step, Value k) {
  return arith::AddIOp::create(
      b, lb, arith::MulIOp::create(b, castInteger(b, k, lb.getType()), step));
}

void stripMine(scf::ForOp loop, int64_t levels) {
  if (levels < 2)
    return;
  ImplicitLocOpBuilder b(loop.getLoc(), loop);
  Value lb = loop.getLowerBound(), step = loop.getStep();
  Value trips = tripCount(b, lb, loop.getUpperBound(), step);
  // block = max(1, ceil(trips^(1/levels)))
  Type f64 = b.getF64Type();
  Value root = math::PowFOp::create(
      b, arith::UIToFPOp::create(b, f64, castInteger(b, trips, b.getI64Type())),
      arith::ConstantOp::create(b, f64, b.getFloatAttr(f64, 1.0 / levels)));
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value block = arith::MaxUIOp::create(
      b, castInteger(b, arith::FPToUIOp::create(b, b.getI64Type(),
                                                math::CeilOp::create(b, root)),
                     b.getIndexType()),
      one);
  Value blocks = arith::CeilDivUIOp::create(b, trips, block);
  Value zero = arith::ConstantIndexOp::create(b, 0);
  auto outer = scf::ForOp::create(
      b, zero, blocks, one, loop.getInitArgs(),
      [&](OpBuilder &nested, Location loc, Value o, ValueRange carried) {
        ImplicitLocOpBuilder ob(loc, nested);
        Value start = arith::MulIOp::create(ob, o, block);
        Value count = arith::MinUIOp::create(
            ob, block, arith::SubIOp::create(ob, trips, start));
        auto inner = scf::ForOp::create(
            ob, zero, count, one, carried,
            [&](OpBuilder &innerBuilder, Location innerLoc, Value j,
                ValueRange state) {
              ImplicitLocOpBuilder ib(innerLoc, innerBuilder);
              IRMapping mapping;
              mapping.map(loop.getInductionVar(),
                          inductionValue(ib, lb, step,
                                         arith::AddIOp::create(ib, start, j)));
              mapping.map(loop.getRegionIterArgs(), state);
              for (Operation &op : loop.getBody()->without_terminator())
                ib.clone(op, mapping);
              scf::YieldOp::create(
                  ib, llvm::map_to_vector(
                          loop.getBody()->getTerminator()->getOperands(),
                          [&](Value v) { return mapping.lookupOrDefault(v); }));
            });
        scf::YieldOp::create(ob, inner.getResults());
      });
  loop.replaceAllUsesWith(outer.getResults());
  loop.erase();
  stripMine(outer, levels - 1);
}

} // namespace soac::autodiff
