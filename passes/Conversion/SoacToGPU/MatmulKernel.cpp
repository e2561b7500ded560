//===- MatmulKernel.cpp - soac.matmul as a tiled GPU kernel ---------------===//
//
// C = op(A) · op(B), C of m x n, the inner size k. Block b computes the
// tile of C at rows 64 (t / tilesN) and columns 64 (t % tilesN), t = b %
// tiles, over split b / tiles of the slices of k: a product of few tiles
// (a weight's gradient, summed over a batch) splits k among blocks
// (InnerSplits), whose results a second kernel adds up in split order. For
// each slice of 16 values of k, the 256 threads stage 64 x 16 values of op(A)
// and of op(B), four each, zeros past the edges (so the multiply-adds need
// no bounds), between two barriers; each thread then accumulates its 16
// results of the tile in registers, in one of two ways (ThreadTile):
//
// - On the ordinary cores, thread t = 16 ty + tx accumulates C[row + ty +
//   16 r][col + tx + 16 c] for r, c in 0..3: a warp's 32 threads read 16
//   different columns of the staged B (no bank conflicts) and store 16
//   consecutive columns of C; the staged rows are padded by one so that
//   staging along k is free of conflicts too.
// - On the tensor cores (float64, sm_80 and later), each warp computes a
//   16 x 32 part of the tile as 2 x 4 products of 8 x 8 by mma.sync
//   m8n8k4, four values of k at a time. In PTX's fragment layout lane l
//   holds A[l / 4][l % 4] and B[l % 4][l / 4] of an 8 x 4 and a 4 x 8
//   operand and C[l / 4][2 (l % 4) + v], v in 0..1, of the 8 x 8 result.
//   A half-warp's 16 fragment loads then read four values of k at four
//   rows each: the staged rows are padded by four, so that they fall in 16
//   different banks (staging along k has 4-way conflicts instead: 4 stores
//   a slice against 24 fragment loads).
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToGPU/MatmulKernel.h"

#include "passes/Conversion/SoacToGPU/Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::kernels {
namespace {

constexpr int64_t kTile = 64;  // rows and columns of C per block
constexpr int64_t kDepth = 16; // values of k staged per slice
constexpr int64_t kResultsPerThread = kTile * kTile / kBlockSize;
// Blocks a product launches at least, where its inner size has the slices
// for it (InnerSplits): about one per multiprocessor of a large GPU.
constexpr int64_t kTargetBlocks = 128;
constexpr int64_t kMinSlicesPerSplit = 4;
static_assert(kTile * kDepth % kBlockSize == 0, "whole loads per thread");

// The ordinary cores: a thread's results are 4 x 4, kSide apart.
constexpr int64_t kSide = 16; // threads per side of the block
constexpr int64_t kPerThread = kTile / kSide; // results per side per thread
static_assert(kSide * kSide == kBlockSize, "one thread per 4 x 4 results");

// The tensor cores: mma.sync m8n8k4 on float64, warps 4 down by 2 across.
constexpr int64_t kMma = 8;     // rows and columns of one product
constexpr int64_t kMmaDepth = 4; // values of k of one product
constexpr int64_t kWarpsDown = 4, kWarpsAcross = 2;
constexpr int64_t kMmaRows = kTile / kWarpsDown / kMma;      // per warp: 2
constexpr int64_t kMmaColumns = kTile / kWarpsAcross / kMma; // per warp: 4
static_assert(kWarpsDown * kWarpsAcross == kWarpsPerBlock, "a part per warp");
static_assert(kMmaRows * kMmaColumns * 2 == kResultsPerThread,
              "two results per lane and product");
static_assert(kDepth % kMmaDepth == 0, "whole products per slice");

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

/// x + y and acc + x * y in the product's element type.
Value addElements(ImplicitLocOpBuilder &b, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, x, y);
  return arith::AddIOp::create(b, x, y);
}

Value multiplyAdd(ImplicitLocOpBuilder &b, Value acc, Value x, Value y) {
  Value product = isa<FloatType>(x.getType())
                      ? arith::MulFOp::create(b, x, y).getResult()
                      : arith::MulIOp::create(b, x, y).getResult();
  return addElements(b, acc, product);
}

Value andAll(ImplicitLocOpBuilder &b, Value x, Value y) {
  return arith::AndIOp::create(b, x, y);
}

/// Index arithmetic with a constant.
Value addIndex(ImplicitLocOpBuilder &b, Value x, int64_t y) {
  return arith::AddIOp::create(b, x, indexConstant(b, y));
}

Value mulIndex(ImplicitLocOpBuilder &b, Value x, int64_t y) {
  return arith::MulIOp::create(b, x, indexConstant(b, y));
}

/// Stages the slice of `operand` at `k0` into `staged` (kDepth rows of
/// kTile, `stride` apart): element e of the slice by thread t is e = t +
/// kBlockSize r. Consecutive threads take consecutive elements of X's
/// contiguous dimension, so a warp's loads coalesce.
void stage(ImplicitLocOpBuilder &b, const Operand &operand, Value staged,
           int64_t stride, Value thread, Value base, Value outerSize,
           Value k0, Value k, Value zero) {
  for (int64_t r = 0; r < kTile * kDepth / kBlockSize; ++r) {
    Value e = addIndex(b, thread, r * kBlockSize);
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
    Value slot = arith::AddIOp::create(b, mulIndex(b, inner, stride), outer);
    memref::StoreOp::create(b, value.getResult(0), staged, slot);
  }
}

/// How a block's threads share the tile's results and compute them from
/// the staged slices: kResultsPerThread each, on the ordinary cores or on
/// the tensor cores (see the file's header).
struct ThreadTile {
  bool tensorCores;

  /// Elements between two staged rows (values of k) of a slice.
  int64_t stride() const { return tensorCores ? kTile + 4 : kTile + 1; }
  /// Values of k one step consumes.
  int64_t depth() const { return tensorCores ? kMmaDepth : 1; }

  /// (row, column) in the tile of thread `thread`'s result `r`.
  std::pair<Value, Value> position(ImplicitLocOpBuilder &b, Value thread,
                                   int64_t r) const {
    if (!tensorCores) {
      Side side(b, thread);
      return {addIndex(b, side.row, r / kPerThread * kSide),
              addIndex(b, side.column, r % kPerThread * kSide)};
    }
    // r = 2 (kMmaColumns i + j) + v: lane l's value v of product (i, j),
    // at C[group][2 inGroup + v] of it.
    Warp warp(b, thread);
    int64_t product = r / 2, v = r % 2;
    Value row = addIndex(b, warp.group, product / kMmaColumns * kMma);
    Value column = addIndex(b, mulIndex(b, warp.inGroup, 2),
                            product % kMmaColumns * kMma + v);
    return {arith::AddIOp::create(b, warp.firstRow, row),
            arith::AddIOp::create(b, warp.firstColumn, column)};
  }

  /// `acc` after the multiply-adds of the staged values of k from `kk`
  /// (depth() of them).
  SmallVector<Value> step(ImplicitLocOpBuilder &b, Value stagedA,
                          Value stagedB, Value thread, Value kk,
                          ValueRange acc) const {
    Value at = mulIndex(b, kk, stride());
    auto load = [&](Value staged, Value offset, int64_t plus) -> Value {
      return memref::LoadOp::create(
          b, staged,
          ValueRange{addIndex(b, arith::AddIOp::create(b, at, offset), plus)});
    };
    SmallVector<Value> next;
    if (!tensorCores) {
      Side side(b, thread);
      SmallVector<Value> x, y;
      for (int64_t r = 0; r < kPerThread; ++r) {
        x.push_back(load(stagedA, side.row, r * kSide));
        y.push_back(load(stagedB, side.column, r * kSide));
      }
      for (int64_t r = 0; r < kPerThread; ++r)
        for (int64_t c = 0; c < kPerThread; ++c)
          next.push_back(multiplyAdd(b, acc[r * kPerThread + c], x[r], y[c]));
      return next;
    }
    // Lane l's fragments: staged row kk + inGroup (its value of k), at row
    // (of A) or column (of B) `group` of each 8 x 8 product.
    Warp warp(b, thread);
    Value fragmentAt = arith::AddIOp::create(
        b, mulIndex(b, warp.inGroup, stride()), warp.group);
    Value aAt = arith::AddIOp::create(b, fragmentAt, warp.firstRow);
    Value bAt = arith::AddIOp::create(b, fragmentAt, warp.firstColumn);
    SmallVector<Value> a, bFragments;
    for (int64_t i = 0; i < kMmaRows; ++i)
      a.push_back(load(stagedA, aAt, i * kMma));
    for (int64_t j = 0; j < kMmaColumns; ++j)
      bFragments.push_back(load(stagedB, bAt, j * kMma));
    Type f64 = b.getF64Type();
    auto pair = LLVM::LLVMStructType::getLiteral(b.getContext(), {f64, f64});
    for (int64_t i = 0; i < kMmaRows; ++i)
      for (int64_t j = 0; j < kMmaColumns; ++j) {
        int64_t first = 2 * (i * kMmaColumns + j);
        auto product = NVVM::MmaOp::create(
            b, pair, ValueRange{a[i]}, ValueRange{bFragments[j]},
            acc.slice(first, 2), ArrayRef<int64_t>{kMma, kMma, kMmaDepth},
            std::nullopt, std::nullopt,
            std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::f64,
                                          NVVM::MMATypes::f64},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t v = 0; v < 2; ++v)
          next.push_back(LLVM::ExtractValueOp::create(b, product, v));
      }
    return next;
  }

private:
  /// A thread's place on the ordinary cores' kSide x kSide grid.
  struct Side {
    Value row, column;
    Side(ImplicitLocOpBuilder &b, Value thread)
        : row(arith::DivUIOp::create(b, thread, indexConstant(b, kSide))),
          column(arith::RemUIOp::create(b, thread, indexConstant(b, kSide))) {}
  };

  /// A thread's lane in PTX's terms (its group of 4 lanes, its place in
  /// it) and the part of the tile its warp computes.
  struct Warp {
    Value group, inGroup, firstRow, firstColumn;
    Warp(ImplicitLocOpBuilder &b, Value thread) {
      Value size = indexConstant(b, kWarpSize);
      Value warp = arith::DivUIOp::create(b, thread, size);
      Value lane = arith::RemUIOp::create(b, thread, size);
      group = arith::DivUIOp::create(b, lane, indexConstant(b, 4));
      inGroup = arith::RemUIOp::create(b, lane, indexConstant(b, 4));
      firstRow = mulIndex(
          b, arith::DivUIOp::create(b, warp, indexConstant(b, kWarpsAcross)),
          kTile / kWarpsDown);
      firstColumn = mulIndex(
          b, arith::RemUIOp::create(b, warp, indexConstant(b, kWarpsAcross)),
          kTile / kWarpsAcross);
    }
  };
};

/// How a product's slices of k are split among blocks of the same tile:
/// a product of few tiles (a weight's gradient: a small result summed over
/// a batch) would otherwise run few blocks, each over the whole of k. The
/// splits are chosen on the host so that tiles x splits reaches
/// kTargetBlocks, each split at least kMinSlicesPerSplit slices (a split
/// costs a pass over its partial results); an empty result is not split.
struct InnerSplits {
  Value slices; // ceil(k / kDepth)
  Value count;  // splits, at least one

  InnerSplits(ImplicitLocOpBuilder &host, Value tiles, Value k,
              Value results) {
    Value one = indexConstant(host, 1);
    slices = ceilDiv(host, k, indexConstant(host, kDepth));
    Value wanted = ceilDiv(host, indexConstant(host, kTargetBlocks), tiles);
    Value most =
        ceilDiv(host, slices, indexConstant(host, kMinSlicesPerSplit));
    Value splits =
        arith::MaxUIOp::create(host, minIndex(host, wanted, most), one);
    // Split by contiguousRange: only ceil(slices / ceil(slices / splits))
    // of the splits have slices.
    Value each =
        arith::MaxUIOp::create(host, ceilDiv(host, slices, splits), one);
    count = arith::MaxUIOp::create(host, ceilDiv(host, slices, each), one);
    Value empty = arith::CmpIOp::create(host, arith::CmpIPredicate::eq,
                                        results, indexConstant(host, 0));
    count = arith::SelectOp::create(host, empty, one, count);
  }

  /// The slices [first, last) of split `part`.
  std::pair<Value, Value> of(ImplicitLocOpBuilder &b, Value part) const {
    return contiguousRange(b, part, count, slices);
  }
};

} // namespace

void lowerMatmul(MatmulOp op, bool tensorCores) {
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
  // mma.sync takes float64 operands at full precision; the tensor cores'
  // other types round their operands (tf32) or are narrower.
  ThreadTile threads{tensorCores && element.isF64()};
  Value output = allocBuffer(host, type, dynamicSizes(type, {m, n}));
  Buffers buffers;
  buffers.of(host, lhs);
  buffers.of(host, rhs);
  Value tile = indexConstant(host, kTile);
  // At least one tile per side: block / tilesN must not divide by zero.
  Value one = indexConstant(host, 1);
  Value tilesM = arith::MaxUIOp::create(host, ceilDiv(host, m, tile), one);
  Value tilesN = arith::MaxUIOp::create(host, ceilDiv(host, n, tile), one);
  Value tiles = arith::MulIOp::create(host, tilesM, tilesN);
  Value results = arith::MulIOp::create(host, m, n);
  InnerSplits split(host, tiles, k, results);
  Value inParts =
      arith::CmpIOp::create(host, arith::CmpIPredicate::ugt, split.count, one);
  // Split results: each split's, then their sums in split order (the same
  // on every run, unlike atomic additions into C). Unsplit, none.
  auto partsType = RankedTensorType::get(
      {ShapedType::kDynamic, ShapedType::kDynamic, ShapedType::kDynamic},
      element);
  Value parts = allocBuffer(
      host, partsType,
      {arith::SelectOp::create(host, inParts, split.count,
                               indexConstant(host, 0)),
       m, n});
  Type staged = workgroupType(element, threads.stride() * kDepth);
  Operand a{lhs, !tl}, bOperand{rhs, tr};

  // Block b sums the slices of split b / tiles of tile b % tiles.
  launchKernel(
      host, arith::MulIOp::create(host, tiles, split.count), {staged, staged},
      buffers,
      [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange shared) {
        Value stagedA = shared[0], stagedB = shared[1];
        Value part = arith::DivUIOp::create(b, ids.block, tiles);
        Value block = arith::RemUIOp::create(b, ids.block, tiles);
        Value rowBase =
            mulIndex(b, arith::DivUIOp::create(b, block, tilesN), kTile);
        Value colBase =
            mulIndex(b, arith::RemUIOp::create(b, block, tilesN), kTile);
        Value zero =
            arith::ConstantOp::create(b, element, b.getZeroAttr(element));
        SmallVector<Value> zeros(kResultsPerThread, zero);
        auto [first, last] = split.of(b, part);
        auto slices = scf::ForOp::create(
            b, first, last, indexConstant(b, 1), zeros,
            [&](OpBuilder &nested, Location loc, Value slice,
                ValueRange sums) {
              ImplicitLocOpBuilder sb(loc, nested);
              Value k0 = mulIndex(sb, slice, kDepth);
              stage(sb, a, stagedA, threads.stride(), ids.thread, rowBase, m,
                    k0, k, zero);
              stage(sb, bOperand, stagedB, threads.stride(), ids.thread,
                    colBase, n, k0, k, zero);
              gpu::BarrierOp::create(sb);
              auto steps = scf::ForOp::create(
                  sb, indexConstant(sb, 0), indexConstant(sb, kDepth),
                  indexConstant(sb, threads.depth()), sums,
                  [&](OpBuilder &inner, Location innerLoc, Value kk,
                      ValueRange acc) {
                    ImplicitLocOpBuilder ib(innerLoc, inner);
                    scf::YieldOp::create(
                        ib, threads.step(ib, stagedA, stagedB, ids.thread, kk,
                                         acc));
                  });
              // Every thread is done with the slice before the next one
              // overwrites it.
              gpu::BarrierOp::create(sb);
              scf::YieldOp::create(sb, steps.getResults());
            });
        for (int64_t r = 0; r < kResultsPerThread; ++r) {
          auto [row, column] = threads.position(b, ids.thread, r);
          Value i = arith::AddIOp::create(b, rowBase, row);
          Value j = arith::AddIOp::create(b, colBase, column);
          ifThen(b, andAll(b, lessThan(b, i, m), lessThan(b, j, n)),
                 [&](ImplicitLocOpBuilder &tb) {
                   Value sum = slices.getResult(r);
                   ifThenElse(
                       tb, inParts,
                       [&](ImplicitLocOpBuilder &pb) {
                         memref::StoreOp::create(pb, sum, parts,
                                                 ValueRange{part, i, j});
                       },
                       [&](ImplicitLocOpBuilder &cb) {
                         memref::StoreOp::create(cb, sum, output,
                                                 ValueRange{i, j});
                       });
                 });
        }
      });
  ifThen(host, inParts, [&](ImplicitLocOpBuilder &sums) {
    launchKernel(
        sums, blocksFor(sums, results), {}, buffers,
        [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
          ifThen(b, lessThan(b, ids.global, results),
                 [&](ImplicitLocOpBuilder &tb) {
                   Value i = arith::DivUIOp::create(tb, ids.global, n);
                   Value j = arith::RemUIOp::create(tb, ids.global, n);
                   Value zero = arith::ConstantOp::create(
                       tb, element, tb.getZeroAttr(element));
                   auto sum = scf::ForOp::create(
                       tb, indexConstant(tb, 0), split.count,
                       indexConstant(tb, 1), ValueRange{zero},
                       [&](OpBuilder &nested, Location loc, Value part,
                           ValueRange acc) {
                         ImplicitLocOpBuilder lb(loc, nested);
                         Value x = memref::LoadOp::create(
                             lb, parts, ValueRange{part, i, j});
                         scf::YieldOp::create(lb, addElements(lb, acc[0], x));
                       });
                   memref::StoreOp::create(tb, sum.getResult(0), output,
                                           ValueRange{i, j});
                 });
        });
  });
  replaceSoac(op, asTensors(host, {output}, {type}), nullptr);
}

} // namespace soac::kernels
