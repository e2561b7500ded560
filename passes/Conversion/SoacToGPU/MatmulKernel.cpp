//===- MatmulKernel.cpp - soac.matmul as a tiled GPU kernel ---------------===//
//
// C = op(A) · op(B), C of m x n, the inner size k. Block b computes the
// tile of C at rows 64 (b / tilesN) and columns 64 (b % tilesN). Thread
// t = 16 ty + tx of the block accumulates C[row + ty + 16 r][col + tx +
// 16 c] for r, c in 0..3: a warp's 32 threads read 16 different columns
// of the staged B (no bank conflicts) and store 16 consecutive columns of
// C; the staged rows are padded by one so that staging along k is free of
// conflicts too. For each slice of 16 values of k, the 256 threads stage 64 x 16
// values of op(A) and of op(B), four each, zeros past the edges (so the
// multiply-adds need no bounds), between two barriers.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToGPU/MatmulKernel.h"

#include "passes/Conversion/SoacToGPU/Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::kernels {
namespace {

constexpr int64_t kTile = 64;  // rows and columns of C per block
constexpr int64_t kDepth = 16; // values of k staged per slice
constexpr int64_t kSide = 16;  // threads per side of the block
constexpr int64_t kPerThread = kTile / kSide; // results per side per thread
// A staged slice's rows (one value of k each) are kTile + 1 apart: an
// operand read along k (A not transposed) is staged by 16 lanes at
// consecutive k, which at a stride of kTile would all hit one bank.
constexpr int64_t kStride = kTile + 1;
static_assert(kSide * kSide == kBlockSize, "one thread per 4 x 4 results");
static_assert(kTile * kDepth % kBlockSize == 0, "whole loads per thread");

/// One operand read as op(X): element (outer, inner) of op(X), where
/// `outer` is a row of C (for A) or a column of C (for B) and `inner` is
/// a value of k.
struct Operand {
  Value tensor;
  bool outerFirst; // op(X)'s outer index is X's first

  Value read(ImplicitLocOpBuilder &b, Value outer, Value inner) const {
    return outerFirst
               ? tensor::ExtractOp::create(b, tensor, ValueRange{outer, inner})
               : tensor::ExtractOp::create(b, tensor, ValueRange{inner, outer});
  }
};

Value multiplyAdd(ImplicitLocOpBuilder &b, Value acc, Value x, Value y) {
  if (isa<FloatType>(acc.getType()))
    return arith::AddFOp::create(b, acc,
                                 arith::MulFOp::create(b, x, y).getResult());
  return arith::AddIOp::create(b, acc,
                               arith::MulIOp::create(b, x, y).getResult());
}

Value andAll(ImplicitLocOpBuilder &b, Value x, Value y) {
  return arith::AndIOp::create(b, x, y);
}

/// Stages the slice of `operand` at `k0` into `staged` (kDepth rows of
/// kTile, kStride apart): element e of the slice by thread t is e = t + kBlockSize r.
/// Consecutive threads take consecutive elements of X's contiguous
/// dimension, so a warp's loads coalesce.
void stage(ImplicitLocOpBuilder &b, const Operand &operand, Value staged,
           Value thread, Value base, Value outerSize, Value k0, Value k,
           Value zero) {
  for (int64_t r = 0; r < kTile * kDepth / kBlockSize; ++r) {
    Value e = arith::AddIOp::create(b, thread,
                                    indexConstant(b, r * kBlockSize));
    // X's contiguous dimension is op(X)'s inner one when its outer one
    // comes first.
    Value inner, outer;
    if (operand.outerFirst) {
      inner = arith::RemUIOp::create(b, e, indexConstant(b, kDepth));
      outer = arith::DivUIOp::create(b, e, indexConstant(b, kDepth));
    } else {
      outer = arith::RemUIOp::create(b, e, indexConstant(b, kTile));
      inner = arith::DivUIOp::create(b, e, indexConstant(b, kTile));
    }
    Value row = arith::AddIOp::create(b, base, outer);
    Value kk = arith::AddIOp::create(b, k0, inner);
    Value inside = andAll(b, lessThan(b, row, outerSize), lessThan(b, kk, k));
    auto value = scf::IfOp::create(
        b, inside,
        [&](OpBuilder &thenBuilder, Location loc) {
          ImplicitLocOpBuilder tb(loc, thenBuilder);
          scf::YieldOp::create(tb, operand.read(tb, row, kk));
        },
        [&](OpBuilder &elseBuilder, Location loc) {
          scf::YieldOp::create(elseBuilder, loc, zero);
        });
    Value slot = arith::AddIOp::create(
        b, arith::MulIOp::create(b, inner, indexConstant(b, kStride)), outer);
    memref::StoreOp::create(b, value.getResult(0), staged, slot);
  }
}

} // namespace

void lowerMatmul(MatmulOp op) {
  ImplicitLocOpBuilder host(op.getLoc(), op);
  bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  Value lhs = op.getLhs(), rhs = op.getRhs();
  auto [m, k, kRhs, n] = op.buildSizes(host);
  // The verifier compared static inner sizes; dynamic ones are compared
  // here, before a kernel reads past the shorter operand.
  if (op.getLhs().getType().isDynamicDim(tl ? 0 : 1) ||
      op.getRhs().getType().isDynamicDim(tr ? 1 : 0))
    CheckOp::create(host,
                    arith::CmpIOp::create(host, arith::CmpIPredicate::eq, k,
                                          kRhs),
                    "'soac.matmul': the operands' inner sizes differ: %lld "
                    "and %lld",
                    ValueRange{k, kRhs});
  RankedTensorType type = op.getResult().getType();
  Type element = type.getElementType();
  Value output = allocBuffer(host, type, dynamicSizes(type, {m, n}));
  Buffers buffers;
  buffers.of(host, lhs);
  buffers.of(host, rhs);
  Value tile = indexConstant(host, kTile);
  // At least one tile per side: block / tilesN must not divide by zero.
  Value one = indexConstant(host, 1);
  Value tilesM = arith::MaxUIOp::create(host, ceilDiv(host, m, tile), one);
  Value tilesN = arith::MaxUIOp::create(host, ceilDiv(host, n, tile), one);
  Value blocks = arith::MulIOp::create(host, tilesM, tilesN);
  Type staged = workgroupType(element, kStride * kDepth);
  Operand a{lhs, !tl}, bOperand{rhs, tr};

  launchKernel(
      host, blocks, {staged, staged}, buffers,
      [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange shared) {
        Value stagedA = shared[0], stagedB = shared[1];
        Value side = indexConstant(b, kSide);
        Value ty = arith::DivUIOp::create(b, ids.thread, side);
        Value tx = arith::RemUIOp::create(b, ids.thread, side);
        Value rowBase = arith::MulIOp::create(
            b, arith::DivUIOp::create(b, ids.block, tilesN),
            indexConstant(b, kTile));
        Value colBase = arith::MulIOp::create(
            b, arith::RemUIOp::create(b, ids.block, tilesN),
            indexConstant(b, kTile));
        Value zero =
            arith::ConstantOp::create(b, element, b.getZeroAttr(element));
        SmallVector<Value> zeros(kPerThread * kPerThread, zero);
        auto slices = scf::ForOp::create(
            b, indexConstant(b, 0), ceilDiv(b, k, indexConstant(b, kDepth)),
            indexConstant(b, 1), zeros,
            [&](OpBuilder &nested, Location loc, Value slice,
                ValueRange sums) {
              ImplicitLocOpBuilder sb(loc, nested);
              Value k0 =
                  arith::MulIOp::create(sb, slice, indexConstant(sb, kDepth));
              stage(sb, a, stagedA, ids.thread, rowBase, m, k0, k, zero);
              stage(sb, bOperand, stagedB, ids.thread, colBase, n, k0, k,
                    zero);
              gpu::BarrierOp::create(sb);
              auto steps = scf::ForOp::create(
                  sb, indexConstant(sb, 0), indexConstant(sb, kDepth),
                  indexConstant(sb, 1), sums,
                  [&](OpBuilder &inner, Location innerLoc, Value kk,
                      ValueRange acc) {
                    ImplicitLocOpBuilder ib(innerLoc, inner);
                    Value at = arith::MulIOp::create(
                        ib, kk, indexConstant(ib, kStride));
                    SmallVector<Value> x, y;
                    for (int64_t r = 0; r < kPerThread; ++r) {
                      Value offset = indexConstant(ib, r * kSide);
                      x.push_back(memref::LoadOp::create(
                          ib, stagedA,
                          ValueRange{arith::AddIOp::create(
                              ib, at, arith::AddIOp::create(ib, ty, offset))}));
                      y.push_back(memref::LoadOp::create(
                          ib, stagedB,
                          ValueRange{arith::AddIOp::create(
                              ib, at, arith::AddIOp::create(ib, tx, offset))}));
                    }
                    SmallVector<Value> next;
                    for (int64_t r = 0; r < kPerThread; ++r)
                      for (int64_t c = 0; c < kPerThread; ++c)
                        next.push_back(multiplyAdd(
                            ib, acc[r * kPerThread + c], x[r], y[c]));
                    scf::YieldOp::create(ib, next);
                  });
              // Every thread is done with the slice before the next one
              // overwrites it.
              gpu::BarrierOp::create(sb);
              scf::YieldOp::create(sb, steps.getResults());
            });
        for (int64_t r = 0; r < kPerThread; ++r)
          for (int64_t c = 0; c < kPerThread; ++c) {
            Value i = arith::AddIOp::create(
                b, rowBase,
                arith::AddIOp::create(b, ty, indexConstant(b, r * kSide)));
            Value j = arith::AddIOp::create(
                b, colBase,
                arith::AddIOp::create(b, tx, indexConstant(b, c * kSide)));
            ifThen(b, andAll(b, lessThan(b, i, m), lessThan(b, j, n)),
                   [&](ImplicitLocOpBuilder &tb) {
                     memref::StoreOp::create(
                         tb, slices.getResult(r * kPerThread + c), output,
                         ValueRange{i, j});
                   });
          }
      });
  replaceSoac(op, asTensors(host, {output}, {type}), nullptr);
}

} // namespace soac::kernels
