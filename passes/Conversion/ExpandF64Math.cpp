//===- ExpandF64Math.cpp - exp, log, tanh as f64 arithmetic ---------------===//
//
// LLVM lowers math.exp/log/tanh to calls of libm, one element at a time: a
// loop containing one is not vectorized, so everything else in the loop
// runs one element at a time too. Written as arithmetic (range
// reduction, a polynomial, a scaling by a power of two built from its bits)
// they vectorize with the loop. The reductions follow the classic ones of
// Cody and Waite (exp) and of the atanh series (log); the polynomials are
// Taylor series long enough that truncation is far below an ulp, so the
// error is that of the rounding of a few operations: against numpy's
// functions over 16 million samples, exp 2 ulp, log 1, tanh 4
// (test_expanded_math.py checks these bounds and the special values). f32 is computed in f64 and rounded back.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

#include <limits>

namespace soac {
#define GEN_PASS_DEF_SOACEXPANDF64MATH
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

constexpr double kLog2E = 1.4426950408889634074;
// ln 2 in two parts: the high one has 21 trailing zero bits, so k · high is
// exact for every exponent k of a double.
constexpr double kLn2High = 6.93147180369123816490e-01;
constexpr double kLn2Low = 1.90821492927058770002e-10;

/// A scalar `element`, or a vector of them shaped like `type` when it is a
/// vector.
Type withElement(Type type, Type element) {
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(element);
  return element;
}

/// Element-wise arithmetic on f64 or a vector of f64 (`type`), with the i64
/// (or vector of i64) of the same shape for bit manipulation.
class F64Arith {
public:
  F64Arith(ImplicitLocOpBuilder &b, Type type)
      : b(b), type(type), intType(withElement(type, b.getI64Type())) {}

  Value constant(double value) {
    return constantOf(type, b.getF64FloatAttr(value));
  }
  Value integer(int64_t value) {
    return constantOf(intType, b.getI64IntegerAttr(value));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, x, y); }
  Value cmp(arith::CmpFPredicate predicate, Value x, Value y) {
    return arith::CmpFOp::create(b, predicate, x, y);
  }
  Value select(Value condition, Value x, Value y) {
    return arith::SelectOp::create(b, condition, x, y);
  }
  /// x clamped to [low, high]; NaN becomes `low` (the callers put NaN back
  /// at the end: a NaN must not reach a float-to-integer conversion).
  Value clamp(Value x, double low, double high) {
    Value above = arith::MaxNumFOp::create(b, x, constant(low));
    return arith::MinNumFOp::create(b, above, constant(high));
  }
  /// c[0] + c[1]·x + c[2]·x² + ..., by Estrin's scheme: pairs c[i] +
  /// c[i+1]·x, then pairs of pairs with x², and so on, so that the chain of
  /// dependent operations is about log2(n) multiply-adds long instead of n
  /// (the scalar copies of a loop, which do not run side by side, wait on
  /// that chain). Each multiply-add may be fused (`contract`).
  Value polynomial(Value x, ArrayRef<double> coefficients) {
    auto contract = arith::FastMathFlagsAttr::get(
        b.getContext(), arith::FastMathFlags::contract);
    SmallVector<Value> terms = llvm::map_to_vector(
        coefficients, [&](double c) { return constant(c); });
    Value power = x;
    while (terms.size() > 1) {
      SmallVector<Value> paired;
      for (size_t i = 0; i < terms.size(); i += 2)
        paired.push_back(
            i + 1 == terms.size()
                ? terms[i]
                : Value(arith::AddFOp::create(
                      b, terms[i],
                      arith::MulFOp::create(b, power, terms[i + 1], contract),
                      contract)));
      terms = std::move(paired);
      if (terms.size() > 1)
        power = arith::MulFOp::create(b, power, power);
    }
    return terms.front();
  }
  /// 2^k for an integer k (i64) in [-1022, 1023], from its bits.
  Value powerOfTwo(Value k) {
    Value biased = arith::AddIOp::create(b, k, integer(1023));
    Value bits = arith::ShLIOp::create(b, biased, integer(52));
    return arith::BitcastOp::create(b, type, bits);
  }
  /// x with NaN where `original` is NaN.
  Value keepNaN(Value original, Value x) {
    return select(cmp(arith::CmpFPredicate::UNO, original, original), original,
                  x);
  }

  ImplicitLocOpBuilder &b;
  Type type;
  Type intType;

private:
  Value constantOf(Type of, TypedAttr scalar) {
    if (auto vector = dyn_cast<VectorType>(of))
      return arith::ConstantOp::create(b,
                                       DenseElementsAttr::get(vector, scalar));
    return arith::ConstantOp::create(b, scalar);
  }
};

/// x = k·ln 2 + r with |r| <= ln 2 / 2: k (rounded to even, as f64) and
/// e^r - 1, by its Taylor series to r^13 (the first term left out is below
/// 2^-57 of the result).
std::pair<Value, Value> reduceExponential(F64Arith &a, Value x) {
  Value k = math::RoundEvenOp::create(a.b, a.mul(x, a.constant(kLog2E)));
  Value r = a.sub(a.sub(x, a.mul(k, a.constant(kLn2High))),
                  a.mul(k, a.constant(kLn2Low)));
  SmallVector<double> inverseFactorials; // 1/1!, 1/2!, ..., 1/13!
  double factorial = 1;
  for (int n = 1; n <= 13; ++n)
    inverseFactorials.push_back(1 / (factorial *= n));
  Value expm1 = a.mul(r, a.polynomial(r, inverseFactorials));
  return {k, expm1};
}

Value expandExp(F64Arith &a, Value x) {
  // Beyond these bounds e^x is +inf or 0 in f64; the scaling below gets
  // there by itself, so clamping only keeps k small.
  Value clamped = a.clamp(x, -746.0, 710.0);
  auto [k, expm1] = reduceExponential(a, clamped);
  Value mantissa = a.add(a.constant(1.0), expm1);
  // 2^k in two factors, each a normal double for k in [-1076, 1024], so
  // that results near overflow and in the subnormal range come out right.
  Value kInt = arith::FPToSIOp::create(a.b, a.intType, k);
  Value half = arith::ShRSIOp::create(a.b, kInt, a.integer(1));
  Value rest = arith::SubIOp::create(a.b, kInt, half);
  Value result =
      a.mul(a.mul(mantissa, a.powerOfTwo(half)), a.powerOfTwo(rest));
  return a.keepNaN(x, result);
}

Value expandLog(F64Arith &a, Value x) {
  ImplicitLocOpBuilder &b = a.b;
  // Subnormal inputs are scaled by 2^54 first, then their exponent lowered.
  Value subnormal =
      a.cmp(arith::CmpFPredicate::OLT, x, a.constant(0x1p-1022));
  Value normal = a.select(subnormal, a.mul(x, a.constant(0x1p54)), x);
  Value bias = a.select(subnormal, a.integer(1023 + 54), a.integer(1023));
  Value bits = arith::BitcastOp::create(b, a.intType, normal);
  Value exponentBits = arith::ShRUIOp::create(b, bits, a.integer(52));
  Value exponent = arith::SubIOp::create(b, exponentBits, bias);
  Value mantissaBits =
      arith::AndIOp::create(b, bits, a.integer(0x000fffffffffffffLL));
  // x = 2^e · m with m in [√2/2, √2): mantissas above √2's are halved.
  Value aboveSqrt2 = arith::CmpIOp::create(
      b, arith::CmpIPredicate::ugt, mantissaBits, a.integer(0x6a09e667f3bcdLL));
  Value halfExponent = a.select(aboveSqrt2, a.integer(0x3fe0000000000000LL),
                                a.integer(0x3ff0000000000000LL));
  Value m = arith::BitcastOp::create(
      b, a.type, arith::OrIOp::create(b, mantissaBits, halfExponent));
  Value e = arith::SIToFPOp::create(
      b, a.type,
      arith::AddIOp::create(
          b, exponent,
          arith::ExtUIOp::create(b, a.intType, aboveSqrt2)));
  // log(1 + f) = 2·atanh(s), s = f / (2 + f), |s| < 0.172:
  // f - s·f + s·R with R = Σ 2·s^2k / (2k + 1), written as in fdlibm so
  // that the large term f is added last.
  Value f = a.sub(m, a.constant(1.0));
  Value halfSquare = a.mul(a.constant(0.5), a.mul(f, f));
  Value s = a.div(f, a.add(a.constant(2.0), f));
  Value z = a.mul(s, s);
  SmallVector<double> series; // 2/3, 2/5, ..., 2/23
  for (int k = 1; k <= 11; ++k)
    series.push_back(2.0 / (2 * k + 1));
  Value r = a.mul(z, a.polynomial(z, series));
  Value small = a.add(a.mul(s, a.add(halfSquare, r)),
                      a.mul(e, a.constant(kLn2Low)));
  Value result = a.add(a.mul(e, a.constant(kLn2High)),
                       a.sub(f, a.sub(halfSquare, small)));
  // 0 -> -inf, +inf -> +inf, negative or NaN -> NaN.
  double inf = std::numeric_limits<double>::infinity();
  Value finitePositive = arith::AndIOp::create(
      b, a.cmp(arith::CmpFPredicate::OGT, x, a.constant(0.0)),
      a.cmp(arith::CmpFPredicate::OLT, x, a.constant(inf)));
  Value special = a.select(
      a.cmp(arith::CmpFPredicate::OEQ, x, a.constant(0.0)), a.constant(-inf),
      a.select(a.cmp(arith::CmpFPredicate::OEQ, x, a.constant(inf)),
               a.constant(inf),
               a.constant(std::numeric_limits<double>::quiet_NaN())));
  return a.select(finitePositive, result, special);
}

Value expandTanh(F64Arith &a, Value x) {
  // tanh |x| = t / (t + 2) with t = e^(2|x|) - 1, which keeps small
  // arguments exact (no 1 - e^-2|x|); above 22, tanh rounds to 1 and so
  // does t / (t + 2).
  Value magnitude = math::AbsFOp::create(a.b, x);
  Value twice = a.mul(a.constant(2.0), a.clamp(magnitude, 0.0, 22.0));
  auto [k, expm1] = reduceExponential(a, twice);
  // e^(k ln2 + r) - 1 = 2^k (e^r - 1) + (2^k - 1), k in [0, 64].
  Value scale = a.powerOfTwo(arith::FPToSIOp::create(a.b, a.intType, k));
  Value t = a.add(a.mul(scale, expm1), a.sub(scale, a.constant(1.0)));
  Value large = a.div(t, a.add(t, a.constant(2.0)));
  // Below 0.17, where that quotient's roundings reached 3 ulp, the
  // odd Taylor series (terms to x^21, the next below 2^-60 of the result).
  static constexpr double kTanhSeries[] = {
      -1.0 / 3,
      2.0 / 15,
      -17.0 / 315,
      62.0 / 2835,
      -1382.0 / 155925,
      21844.0 / 6081075,
      -929569.0 / 638512875,
      6404582.0 / 10854718875,
      -443861162.0 / 1856156927625,
      18888466084.0 / 194896477400625};
  Value square = a.mul(magnitude, magnitude);
  Value small = a.add(magnitude, a.mul(a.mul(magnitude, square),
                                       a.polynomial(square, kTanhSeries)));
  Value chosen = a.select(
      a.cmp(arith::CmpFPredicate::OLT, magnitude, a.constant(0.17)), small,
      large);
  return a.keepNaN(x, math::CopySignOp::create(a.b, chosen, x));
}

/// The expansion of `op` when it is exp, log or tanh of f64 or f32.
Value (*expansionOf(Operation *op))(F64Arith &, Value) {
  if (op->getNumResults() != 1)
    return nullptr;
  // Scalars and vectors only: the pass runs after bufferization, and a
  // math op on a tensor (elementwise) is left as it is.
  Type type = op->getResult(0).getType();
  if (!isa<FloatType, VectorType>(type))
    return nullptr;
  Type element = getElementTypeOrSelf(type);
  if (!element.isF64() && !element.isF32())
    return nullptr;
  if (isa<math::ExpOp>(op))
    return expandExp;
  if (isa<math::LogOp>(op))
    return expandLog;
  if (isa<math::TanhOp>(op))
    return expandTanh;
  return nullptr;
}

/// `op` expanded in f64: an f32 argument is widened first and the result
/// rounded back, which is about as exact as f32 results can be (the f64
/// result's error is far below half an f32 ulp).
Value expand(Operation *op, ImplicitLocOpBuilder &b) {
  Value argument = op->getOperand(0);
  Type type = argument.getType();
  Type wide = withElement(type, b.getF64Type());
  if (wide != type)
    argument = arith::ExtFOp::create(b, wide, argument);
  F64Arith arithmetic(b, wide);
  Value result = expansionOf(op)(arithmetic, argument);
  if (wide != type)
    result = arith::TruncFOp::create(b, type, result);
  return result;
}

struct SoacExpandF64MathPass
    : soac::impl::SoacExpandF64MathBase<SoacExpandF64MathPass> {
  void runOnOperation() override {
    // Each op is replaced where it is, and nothing else is touched: a
    // greedy rewrite would also fold every constant of the function and
    // move it to the function's entry, out of the OpenMP regions that use
    // it, in code that calls none of these functions.
    SmallVector<Operation *> functions;
    getOperation()->walk([&](Operation *op) {
      if (expansionOf(op))
        functions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : functions) {
      rewriter.setInsertionPoint(op);
      ImplicitLocOpBuilder b(op->getLoc(), rewriter);
      rewriter.replaceOp(op, expand(op, b));
    }
  }
};

} // namespace
