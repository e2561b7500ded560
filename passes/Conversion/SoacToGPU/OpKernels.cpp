//===- OpKernels.cpp - the kernels of each soac op ------------------------===//
//
// One lowering per op (OpKernels.h); SoacToGPU.cpp chooses among them. How
// tensors cross into kernels is in Kernel.h, warp and block primitives in
// BlockPrimitives.h, maps over rows in RowKernel.h and ThreadKernel.h.
//
//===----------------------------------------------------------------------===//

#include "passes/Conversion/SoacToGPU/OpKernels.h"

#include "passes/Utils/Bodies.h"
#include "passes/Conversion/SoacToGPU/BlockPrimitives.h"
#include "passes/Conversion/SoacToGPU/Kernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::kernels {

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Rows a thread reads at a time before it combines or computes any, so that
/// each thread has that many loads in flight: one at a time left a reduce at
/// half the device's bandwidth on an H200, and a map at 0.68 of its copy.
constexpr int64_t kLoadsInFlight = 4;

/// Consecutive rows each thread takes per tile where a block goes over its
/// rows in order (the rescan of a scan, the fold of an operator that does
/// not commute): it combines them alone, so that the block's scan or
/// reduction of the threads' values (two barriers) comes once per
/// kBlockSize x kTileRowsPerThread rows rather than per kBlockSize, with that
/// many loads in flight. One row per thread rescanned at 2.1 TB/s on an
/// H200, about half its copy rate.
constexpr int64_t kTileRowsPerThread = 4;

/// Ops of a map's body (and of the maps recomputed in its kernel) up to
/// which each thread computes kLoadsInFlight rows: the body is inlined once
/// per row, and a longer one is bound by its arithmetic rather than by
/// loads.
constexpr int64_t kUnrolledMapOps = 32;

/// A rank-1 buffer of `count` elements of `element`.
Value allocVector(ImplicitLocOpBuilder &host, Type element, Value count) {
  return memref::AllocOp::create(
      host, MemRefType::get({ShapedType::kDynamic}, element), count);
}

/// Blocks of the kernels folding `n` rows: one row per thread up to
/// `maxBlocks` blocks.
Value foldBlocks(ImplicitLocOpBuilder &host, Value n, int64_t maxBlocks) {
  return minIndex(host, blocksFor(host, n), indexConstant(host, maxBlocks));
}

Value product(ImplicitLocOpBuilder &b, ValueRange sizes) {
  Value result = indexConstant(b, 1);
  for (Value size : sizes)
    result = arith::MulIOp::create(b, result, size);
  return result;
}

/// The multi-index of element `flat` of an array of `sizes` (row-major).
SmallVector<Value> unflatten(ImplicitLocOpBuilder &b, Value flat,
                             ValueRange sizes) {
  SmallVector<Value> indices(sizes.size());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    indices[d] = d == 0 ? flat : Value(arith::RemUIOp::create(b, flat, sizes[d]));
    if (d > 0)
      flat = arith::DivUIOp::create(b, flat, sizes[d]);
  }
  return indices;
}

/// A new buffer shaped like `tensor`, for a copy of it that kernels make
/// (`tensor` is buffered for them to read, unless it is a splat, whose
/// value they store).
Value bufferForCopyOf(ImplicitLocOpBuilder &host, Buffers &buffers,
                      Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  // A splat is copied from its value (copyElement): no kernel fills it.
  if (!tensor.getDefiningOp<tensor::SplatOp>())
    buffers.of(host, tensor);
  return allocBuffer(host, type, dynamicSizes(type, sizesOf(host, tensor)));
}

/// Kernel side: element `e` (row-major, of `sizes`) of `tensor` stored at
/// the same place in `copy`; a splat's value where `tensor` is one (the
/// zeros a histogram of adjoints starts from).
void copyElement(ImplicitLocOpBuilder &b, Value tensor, Value copy,
                 ValueRange sizes, Value e) {
  SmallVector<Value> at = unflatten(b, e, sizes);
  auto splat = tensor.getDefiningOp<tensor::SplatOp>();
  Value element = splat ? splat.getInput()
                        : tensor::ExtractOp::create(b, tensor, at).getResult();
  memref::StoreOp::create(b, element, copy, at);
}

/// A new buffer holding a copy of `tensor` (one thread per element).
Value copyToNewBuffer(ImplicitLocOpBuilder &host, Buffers &buffers,
                      Value tensor) {
  Value copy = bufferForCopyOf(host, buffers, tensor);
  SmallVector<Value> sizes = sizesOf(host, tensor);
  Value count = product(host, sizes);
  launchKernel(host, blocksFor(host, count), {}, buffers,
               [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
                 ifThen(b, lessThan(b, ids.global, count),
                        [&](ImplicitLocOpBuilder &ib) {
                          copyElement(ib, tensor, copy, sizes, ids.global);
                        });
               });
  return copy;
}

/// A new buffer of `type`, of `sizes` (one per dimension), holding `value`
/// everywhere (one thread per element).
Value filledBuffer(ImplicitLocOpBuilder &host, RankedTensorType type,
                   ValueRange sizes, Value value) {
  Value out = allocBuffer(host, type, dynamicSizes(type, sizes));
  Value count = product(host, sizes);
  Buffers none;
  launchKernel(host, blocksFor(host, count), {}, none,
               [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
                 ifThen(b, lessThan(b, ids.global, count),
                        [&](ImplicitLocOpBuilder &ib) {
                          memref::StoreOp::create(
                              ib, value, out, unflatten(ib, ids.global, sizes));
                        });
               });
  return out;
}

/// The ops a kernel computing `map`'s rows inlines per row.
int64_t opsPerRow(MapOp map, const ElementReader &reader) {
  int64_t count = 0;
  auto add = [&](Region &body) { body.walk([&](Operation *) { ++count; }); };
  add(map.getBody());
  for (MapOp fused : reader.fusedMaps())
    add(fused.getBody());
  return count;
}

} // namespace

/// Each thread computes `perThread` rows, kBlockSize apart (the rows of a
/// warp are neighbours, so its loads and stores coalesce): it reads them
/// all (a row past the end reads the last row instead, and is not stored)
/// before it computes and stores any.
void lowerMap(MapOp map) {
  ImplicitLocOpBuilder host(map.getLoc(), map);
  Buffers buffers;
  buffers.addFreeTensors(host, map.getBody());
  ElementReader reader(host, buffers, map.getInputs(), map);
  Value n = reader.size(host);
  SmallVector<Value> outputs = llvm::map_to_vector(map.getResultTypes(), [&](Type t) {
    auto type = cast<RankedTensorType>(t);
    return allocBuffer(host, type, dynamicSizes(type, {n}));
  });
  int64_t perThread =
      opsPerRow(map, reader) <= kUnrolledMapOps ? kLoadsInFlight : 1;
  Value threads = ceilDiv(host, n, indexConstant(host, perThread));
  launchKernel(
      host, blocksFor(host, threads), {}, buffers,
      [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
        Value first = arith::AddIOp::create(
            b,
            arith::MulIOp::create(
                b, ids.block, indexConstant(b, perThread * kBlockSize)),
            ids.thread);
        ifThen(b, lessThan(b, first, n), [&](ImplicitLocOpBuilder &ib) {
          Value last = arith::SubIOp::create(ib, n, indexConstant(ib, 1));
          SmallVector<Value> rows{first};
          SmallVector<SmallVector<Value>> read{reader.read(ib, first)};
          for (int64_t k = 1; k < perThread; ++k) {
            rows.push_back(arith::AddIOp::create(
                ib, first, indexConstant(ib, k * kBlockSize)));
            read.push_back(reader.read(ib, minIndex(ib, rows.back(), last)));
          }
          auto compute = [&](ImplicitLocOpBuilder &cb, int64_t k) {
            SmallVector<Value> values = inlineBody(cb, map.getBody(), read[k]);
            for (auto [v, out] : llvm::zip(values, outputs))
              memref::StoreOp::create(cb, v, out, ValueRange{rows[k]});
          };
          compute(ib, 0);
          for (int64_t k = 1; k < perThread; ++k)
            ifThen(ib, lessThan(ib, rows[k], n),
                   [&](ImplicitLocOpBuilder &cb) { compute(cb, k); });
        });
      });
  replaceSoac(map, asTensors(host, outputs, map.getResultTypes()), &reader);
}

void lowerIota(IotaOp iota) {
  ImplicitLocOpBuilder host(iota.getLoc(), iota);
  auto type = cast<RankedTensorType>(iota.getType());
  Value n = type.isDynamicDim(0) ? iota.getSize()
                                 : indexConstant(host, type.getDimSize(0));
  Value out = allocBuffer(host, type, dynamicSizes(type, {n}));
  Buffers none;
  launchKernel(host, blocksFor(host, n), {}, none,
               [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
                 ifThen(b, lessThan(b, ids.global, n),
                        [&](ImplicitLocOpBuilder &ib) {
                          Value v = ids.global;
                          if (!type.getElementType().isIndex())
                            v = arith::IndexCastOp::create(
                                ib, type.getElementType(), v);
                          memref::StoreOp::create(ib, v, out,
                                                  ValueRange{ids.global});
                        });
               });
  replaceSoac(iota, asTensor(host, out, type), nullptr);
}

void lowerSplat(tensor::SplatOp splat) {
  ImplicitLocOpBuilder host(splat.getLoc(), splat);
  RankedTensorType type = splat.getType();
  SmallVector<Value> sizes;
  auto dynamic = splat.getDynamicSizes().begin();
  for (int64_t size : type.getShape())
    sizes.push_back(ShapedType::isDynamic(size) ? *dynamic++
                                                : indexConstant(host, size));
  Value out = filledBuffer(host, type, sizes, splat.getInput());
  Value filled = asTensor(host, out, type);
  splat.replaceAllUsesWith(filled);
  splat.erase();
}

namespace {

/// Row `j`'s values where `j < end`, else the neutral elements (the threads
/// of a block's last tile that have no row).
SmallVector<Value> readOrNeutral(ImplicitLocOpBuilder &b,
                                 const Combiner &combiner,
                                 const ElementReader &reader, Value j,
                                 Value end) {
  auto choice = scf::IfOp::create(
      b, lessThan(b, j, end),
      [&](OpBuilder &nested, Location loc) {
        ImplicitLocOpBuilder ib(loc, nested);
        scf::YieldOp::create(ib, reader.read(ib, j));
      },
      [&](OpBuilder &nested, Location loc) {
        scf::YieldOp::create(nested, loc, combiner.neutralElements());
      });
  return choice.getResults();
}

/// Thread `thread`'s rows of the tile of kBlockSize x kTileRowsPerThread
/// rows at `tile` (tile + thread k, ..., tile + thread k + k - 1), and their
/// values (the neutral elements from `end` on), all read before any is
/// combined.
struct ThreadRows {
  SmallVector<Value> rows;
  SmallVector<SmallVector<Value>> values;
};
ThreadRows readThreadRows(ImplicitLocOpBuilder &b, const Combiner &combiner,
                          const ElementReader &reader, Value tile,
                          Value thread, Value end) {
  Value first = arith::AddIOp::create(
      b, tile,
      arith::MulIOp::create(b, thread, indexConstant(b, kTileRowsPerThread)));
  ThreadRows mine;
  for (int64_t r = 0; r < kTileRowsPerThread; ++r) {
    mine.rows.push_back(arith::AddIOp::create(b, first, indexConstant(b, r)));
    mine.values.push_back(
        readOrNeutral(b, combiner, reader, mine.rows.back(), end));
  }
  return mine;
}

/// Folds rows first, first + step, ... below `end` (a commutative operator:
/// the order is free), kLoadsInFlight rows per iteration read before any is
/// combined, then the rows left over one at a time.
SmallVector<Value> foldInterleaved(ImplicitLocOpBuilder &b,
                                   const Combiner &combiner,
                                   const ElementReader &reader, Value first,
                                   Value end, Value step) {
  // Rows of this thread: ceil((end - first) / step) where first < end.
  Value remaining = arith::SubIOp::create(
      b, arith::MaxUIOp::create(b, end, first), first);
  Value rows = ceilDiv(b, remaining, step);
  Value groups =
      arith::DivUIOp::create(b, rows, indexConstant(b, kLoadsInFlight));
  Value groupStride = arith::MulIOp::create(
      b, step, indexConstant(b, kLoadsInFlight));
  auto unrolled = scf::ForOp::create(
      b, indexConstant(b, 0), groups, indexConstant(b, 1),
      combiner.neutralElements(),
      [&](OpBuilder &nested, Location loc, Value g, ValueRange carried) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value base = arith::AddIOp::create(
            ib, first, arith::MulIOp::create(ib, g, groupStride));
        SmallVector<SmallVector<Value>> loaded;
        for (int64_t k = 0; k < kLoadsInFlight; ++k)
          loaded.push_back(reader.read(
              ib, arith::AddIOp::create(
                      ib, base,
                      arith::MulIOp::create(ib, step, indexConstant(ib, k)))));
        SmallVector<Value> acc(carried);
        for (const SmallVector<Value> &values : loaded)
          acc = combiner.combine(ib, acc, values);
        scf::YieldOp::create(ib, acc);
      });
  Value rest = arith::AddIOp::create(
      b, first, arith::MulIOp::create(b, groups, groupStride));
  return foldRows(b, combiner, unrolled.getResults(), rest, end, step,
                  [&](ImplicitLocOpBuilder &ib, Value j) {
                    return reader.read(ib, j);
                  });
}

/// The rows [lo, hi) of a block folded in order, a tile of kBlockSize x
/// kTileRowsPerThread rows at a time: thread t folds its consecutive rows of
/// the tile (readThreadRows; a warp's loads stay within neighbouring lines,
/// where one contiguous range per thread made every load its own memory
/// transaction), and the block combines the threads' values of each tile
/// before the next.
SmallVector<Value> foldTiles(ImplicitLocOpBuilder &b, const Combiner &combiner,
                             const ElementReader &reader, Value thread,
                             Value lo, Value hi, ValueRange scratch) {
  auto loop = scf::ForOp::create(
      b, lo, hi, indexConstant(b, kBlockSize * kTileRowsPerThread),
      combiner.neutralElements(),
      [&](OpBuilder &nested, Location loc, Value tile, ValueRange carried) {
        ImplicitLocOpBuilder ib(loc, nested);
        ThreadRows mine = readThreadRows(ib, combiner, reader, tile, thread, hi);
        SmallVector<Value> acc = mine.values.front();
        for (size_t r = 1; r < mine.values.size(); ++r)
          acc = combiner.combine(ib, acc, mine.values[r]);
        SmallVector<Value> total =
            blockReduce(ib, combiner, thread, acc, scratch);
        scf::YieldOp::create(ib, combiner.combine(ib, carried, total));
      });
  return loop.getResults();
}

/// The rows [lo, hi) of a block folded and combined in the block (every
/// thread gets the total): interleaved between its threads when the
/// operator is commutative, else tile by tile.
SmallVector<Value> foldBlockRange(ImplicitLocOpBuilder &b,
                                  const Combiner &combiner,
                                  const ElementReader &reader, Value thread,
                                  Value lo, Value hi, ValueRange scratch) {
  if (!combiner.isCommutative())
    return foldTiles(b, combiner, reader, thread, lo, hi, scratch);
  SmallVector<Value> acc =
      foldInterleaved(b, combiner, reader, arith::AddIOp::create(b, lo, thread),
                      hi, indexConstant(b, kBlockSize));
  return blockReduce(b, combiner, thread, acc, scratch);
}

/// The block's share of all n rows folded and combined in the block (every
/// thread gets the total): with a commutative operator each thread folds
/// rows interleaved over the whole grid; otherwise each block folds its
/// contiguous range of rows tile by tile.
SmallVector<Value> foldBlockRows(ImplicitLocOpBuilder &b,
                                 const Combiner &combiner,
                                 const ThreadIds &ids, Value n, Value blocks,
                                 ValueRange scratch,
                                 const ElementReader &reader) {
  if (combiner.isCommutative()) {
    SmallVector<Value> acc =
        foldInterleaved(b, combiner, reader, ids.global, n, ids.count);
    return blockReduce(b, combiner, ids.thread, acc, scratch);
  }
  auto [lo, hi] = contiguousRange(b, ids.block, blocks, n);
  return foldTiles(b, combiner, reader, ids.thread, lo, hi, scratch);
}

/// Loads of element `j` of rank-1 buffers.
SmallVector<Value> loadAll(ImplicitLocOpBuilder &b, ValueRange buffers,
                           Value j) {
  return llvm::map_to_vector(buffers, [&](Value buffer) {
    return Value(memref::LoadOp::create(b, buffer, ValueRange{j}));
  });
}

void storeAll(ImplicitLocOpBuilder &b, ValueRange values, ValueRange buffers,
              Value j) {
  for (auto [v, buffer] : llvm::zip(values, buffers))
    memref::StoreOp::create(b, v, buffer, ValueRange{j});
}

/// What the kernels of a reduce or a scan share: the tensors they read, the
/// operator, the number of rows and of blocks folding them.
struct Fold {
  template <typename OpTy>
  Fold(ImplicitLocOpBuilder &host, OpTy op, int64_t maxBlocks)
      : buffers(withFreeTensors(host, op.getBody())),
        reader(host, buffers, op.getInputs(), op),
        combiner(op.getBody(), op.getInits()), n(reader.size(host)),
        blocks(foldBlocks(host, n, maxBlocks)) {}

  static Buffers withFreeTensors(ImplicitLocOpBuilder &host, Region &body) {
    Buffers buffers;
    buffers.addFreeTensors(host, body);
    return buffers;
  }

  Buffers buffers;
  ElementReader reader;
  Combiner combiner;
  Value n;
  Value blocks;
};

} // namespace

void lowerReduce(ReduceOp reduce, int64_t maxBlocks) {
  ImplicitLocOpBuilder host(reduce.getLoc(), reduce);
  Fold fold(host, reduce, maxBlocks);
  Buffers &buffers = fold.buffers;
  const ElementReader &reader = fold.reader;
  const Combiner &combiner = fold.combiner;
  Value n = fold.n, blocks = fold.blocks;
  SmallVector<Value> partials, totals;
  for (Value init : reduce.getInits()) {
    partials.push_back(allocVector(host, init.getType(), blocks));
    totals.push_back(allocVector(host, init.getType(), indexConstant(host, 1)));
  }
  // A reduce that fits one block (the rows of a time step: D-LSTM's 14)
  // writes its total from the first kernel, and the second is not launched.
  Value severalBlocks = arith::CmpIOp::create(
      host, arith::CmpIPredicate::ugt, blocks, indexConstant(host, 1));
  launchKernel(host, blocks, combiner.workgroupTypes(), buffers,
               [&](ImplicitLocOpBuilder &b, const ThreadIds &ids,
                   ValueRange scratch) {
                 SmallVector<Value> total = foldBlockRows(
                     b, combiner, ids, n, blocks, scratch, reader);
                 ifThen(b, isThreadZero(b, ids), [&](ImplicitLocOpBuilder &ib) {
                   SmallVector<Value> into;
                   for (auto [partial, result] : llvm::zip(partials, totals))
                     into.push_back(arith::SelectOp::create(
                         ib, severalBlocks, partial, result));
                   storeAll(ib, total, into, ids.block);
                 });
               });
  // One block combines the partial results, each thread a contiguous range.
  ifThen(host, severalBlocks, [&](ImplicitLocOpBuilder &combine) {
    launchKernel(combine, indexConstant(combine, 1), combiner.workgroupTypes(),
                 buffers,
                 [&](ImplicitLocOpBuilder &b, const ThreadIds &ids,
                     ValueRange scratch) {
                   auto [lo, hi] = contiguousRange(
                       b, ids.thread, indexConstant(b, kBlockSize), blocks);
                   SmallVector<Value> acc = foldRows(
                       b, combiner, combiner.neutralElements(), lo, hi,
                       indexConstant(b, 1),
                       [&](ImplicitLocOpBuilder &ib, Value j) {
                         return loadAll(ib, partials, j);
                       });
                   SmallVector<Value> total =
                       blockReduce(b, combiner, ids.thread, acc, scratch);
                   ifThen(b, isThreadZero(b, ids),
                          [&](ImplicitLocOpBuilder &ib) {
                            storeAll(ib, total, totals, indexConstant(ib, 0));
                          });
                 });
  });
  SmallVector<Value> results = loadAll(host, totals, indexConstant(host, 0));
  replaceSoac(reduce, results, &fold.reader);
}

/// A reduce over n rows of m elements each (the rows may have any rank) with
/// an elementwise operator: threads fold contiguous ranges of rows of one
/// element each (neighbouring threads read neighbouring elements), then one
/// thread per element combines the ranges in order.
void lowerColumnReduce(ReduceOp reduce, Region &op) {
  ImplicitLocOpBuilder host(reduce.getLoc(), reduce);
  Buffers buffers;
  buffers.addFreeTensors(host, op);
  Value rows = reduce.getInputs()[0];
  Value init = reduce.getInits()[0];
  buffers.of(host, rows);
  buffers.of(host, init);
  auto resultType = cast<RankedTensorType>(reduce.getResult(0).getType());
  Type element = resultType.getElementType();
  Value n = tensor::DimOp::create(host, rows, 0);
  SmallVector<Value> rowSizes = sizesOf(host, init);
  Value m = product(host, rowSizes);
  // Enough row ranges for 2^16 threads in all, at least one row each.
  Value one = indexConstant(host, 1);
  Value wanted = ceilDiv(host, indexConstant(host, 1 << 16),
                         arith::MaxUIOp::create(host, m, one));
  Value ranges = arith::MaxUIOp::create(
      host, minIndex(host, wanted, n), one);
  Value partials = memref::AllocOp::create(
      host, MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, element),
      ValueRange{ranges, m});
  Value out = allocBuffer(host, resultType, dynamicSizes(resultType, rowSizes));
  auto column = [&](ImplicitLocOpBuilder &b, ValueRange at) {
    return Combiner(op, {tensor::ExtractOp::create(b, init, at)});
  };
  Value work = arith::MulIOp::create(host, ranges, m);
  Value severalRanges =
      arith::CmpIOp::create(host, arith::CmpIPredicate::ugt, ranges, one);
  launchKernel(host, blocksFor(host, work), {}, buffers,
               [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
                 ifThen(b, lessThan(b, ids.global, work),
                        [&](ImplicitLocOpBuilder &ib) {
                          Value c = arith::DivUIOp::create(ib, ids.global, m);
                          Value j = arith::RemUIOp::create(ib, ids.global, m);
                          SmallVector<Value> at = unflatten(ib, j, rowSizes);
                          auto [lo, hi] = contiguousRange(ib, c, ranges, n);
                          Combiner combiner = column(ib, at);
                          Value acc = foldRows(
                              ib, combiner, combiner.neutralElements(), lo, hi,
                              indexConstant(ib, 1),
                              [&](ImplicitLocOpBuilder &rb, Value i) {
                                SmallVector<Value> element{i};
                                llvm::append_range(element, at);
                                return SmallVector<Value>{
                                    tensor::ExtractOp::create(rb, rows,
                                                              element)};
                              })[0];
                          // One range (few rows, or many elements per
                          // row) is the result: the second kernel is not
                          // launched.
                          ifThenElse(
                              ib, severalRanges,
                              [&](ImplicitLocOpBuilder &tb) {
                                memref::StoreOp::create(tb, acc, partials,
                                                        ValueRange{c, j});
                              },
                              [&](ImplicitLocOpBuilder &eb) {
                                memref::StoreOp::create(eb, acc, out, at);
                              });
                        });
               });
  ifThen(host, severalRanges, [&](ImplicitLocOpBuilder &combine) {
    launchKernel(combine, blocksFor(combine, m), {}, buffers,
                 [&](ImplicitLocOpBuilder &b, const ThreadIds &ids,
                     ValueRange) {
                   ifThen(b, lessThan(b, ids.global, m),
                          [&](ImplicitLocOpBuilder &ib) {
                            SmallVector<Value> at =
                                unflatten(ib, ids.global, rowSizes);
                            Combiner combiner = column(ib, at);
                            Value acc = foldRows(
                                ib, combiner, combiner.neutralElements(),
                                indexConstant(ib, 0), ranges,
                                indexConstant(ib, 1),
                                [&](ImplicitLocOpBuilder &rb, Value c) {
                                  return SmallVector<Value>{
                                      memref::LoadOp::create(
                                          rb, partials,
                                          ValueRange{c, ids.global})};
                                })[0];
                            memref::StoreOp::create(ib, acc, out, at);
                          });
                 });
  });
  replaceSoac(reduce, asTensor(host, out, resultType), nullptr);
}

/// A scan in three kernels: each block folds its contiguous range of rows;
/// one block scans the blocks' totals; each block rescans its range from its
/// offset. Both passes over the rows go a tile of neighbouring rows at a
/// time, so that a warp's loads and stores stay within neighbouring lines:
/// the first interleaves threads row by row (or, for an operator that does
/// not commute, gives each kTileRowsPerThread consecutive rows, foldTiles),
/// the rescan gives each thread kTileRowsPerThread consecutive rows.
void lowerScan(ScanOp scan, int64_t maxBlocks) {
  ImplicitLocOpBuilder host(scan.getLoc(), scan);
  Fold fold(host, scan, maxBlocks);
  Buffers &buffers = fold.buffers;
  const ElementReader &reader = fold.reader;
  const Combiner &combiner = fold.combiner;
  Value n = fold.n, blocks = fold.blocks;
  SmallVector<Value> blockTotals, blockOffsets, outputs;
  for (Value init : scan.getInits()) {
    blockTotals.push_back(allocVector(host, init.getType(), blocks));
    blockOffsets.push_back(allocVector(host, init.getType(), blocks));
  }
  for (Type t : scan.getResultTypes()) {
    auto type = cast<RankedTensorType>(t);
    outputs.push_back(allocBuffer(host, type, dynamicSizes(type, {n})));
  }
  // 1. The total of each block's rows.
  launchKernel(host, blocks, combiner.workgroupTypes(), buffers,
               [&](ImplicitLocOpBuilder &b, const ThreadIds &ids,
                   ValueRange scratch) {
                 auto [lo, hi] = contiguousRange(b, ids.block, blocks, n);
                 SmallVector<Value> total = foldBlockRange(
                     b, combiner, reader, ids.thread, lo, hi, scratch);
                 ifThen(b, isThreadZero(b, ids), [&](ImplicitLocOpBuilder &ib) {
                   storeAll(ib, total, blockTotals, ids.block);
                 });
               });
  // 2. Exclusive scan of the block totals, in one block.
  launchKernel(
      host, indexConstant(host, 1), combiner.workgroupTypes(), buffers,
      [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange scratch) {
        auto [lo, hi] = contiguousRange(b, ids.thread,
                                        indexConstant(b, kBlockSize), blocks);
        auto loadTotals = [&](ImplicitLocOpBuilder &ib, Value j) {
          return loadAll(ib, blockTotals, j);
        };
        SmallVector<Value> acc =
            foldRows(b, combiner, combiner.neutralElements(), lo, hi,
                     indexConstant(b, 1), loadTotals);
        SmallVector<Value> offset =
            blockExclusiveScan(b, combiner, ids.thread, acc, scratch).first;
        scf::ForOp::create(
            b, lo, hi, indexConstant(b, 1), offset,
            [&](OpBuilder &nested, Location loc, Value j, ValueRange running) {
              ImplicitLocOpBuilder ib(loc, nested);
              storeAll(ib, running, blockOffsets, j);
              scf::YieldOp::create(
                  ib, combiner.combine(ib, running, loadTotals(ib, j)));
            });
      });
  // 3. Each block rescans its rows a tile at a time (kTileRowsPerThread
  // consecutive rows per thread, readThreadRows): thread t scans its rows
  // alone, the block scans the threads' totals, and a row's value is the
  // block's offset, the tiles before it, the threads before it in its tile
  // and its thread's rows up to it.
  Value tileRows = indexConstant(host, kBlockSize * kTileRowsPerThread);
  launchKernel(
      host, blocks, combiner.workgroupTypes(), buffers,
      [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange scratch) {
        auto [lo, hi] = contiguousRange(b, ids.block, blocks, n);
        scf::ForOp::create(
            b, lo, hi, tileRows, loadAll(b, blockOffsets, ids.block),
            [&](OpBuilder &nested, Location loc, Value tile,
                ValueRange before) {
              ImplicitLocOpBuilder ib(loc, nested);
              ThreadRows mine =
                  readThreadRows(ib, combiner, reader, tile, ids.thread, hi);
              SmallVector<SmallVector<Value>> inThread{mine.values.front()};
              for (size_t r = 1; r < mine.values.size(); ++r)
                inThread.push_back(
                    combiner.combine(ib, inThread.back(), mine.values[r]));
              auto [inTile, tileTotal] = blockExclusiveScan(
                  ib, combiner, ids.thread, inThread.back(), scratch);
              SmallVector<Value> offset = combiner.combine(ib, before, inTile);
              for (auto [row, value] : llvm::zip(mine.rows, inThread))
                ifThen(ib, lessThan(ib, row, hi),
                       [&](ImplicitLocOpBuilder &tb) {
                         storeAll(tb, combiner.combine(tb, offset, value),
                                  outputs, row);
                       });
              scf::YieldOp::create(ib, combiner.combine(ib, before, tileTotal));
            });
      });
  replaceSoac(scan, asTensors(host, outputs, scan.getResultTypes()),
              &fold.reader);
}

namespace {

/// Elements a scatter or reduce_by_index writes (of its destination, and of
/// its values' rows) up to which one block of kBlockSize threads copies the
/// destination and updates it in one launch, a barrier between the two: a
/// loop's small histograms (the adjoints D-LSTM's gradient adds into, 4 x 14
/// bins, per time step) then cost one launch each instead of two.
constexpr int64_t kOneBlockElements = 16 * kBlockSize;

/// The elements of the rows of `values` (the rows of a scatter or
/// reduce_by_index), and the rows' indices into `dest`'s rows: `work` of
/// them, read by `update`. Scalar rows are read through an ElementReader
/// (recomputing a map that only this op reads).
class IndexedElements {
public:
  IndexedElements(ImplicitLocOpBuilder &host, Buffers &buffers, Operation *op,
                  Value dest, Value indices, Value values)
      : values(values),
        scalarRows(cast<RankedTensorType>(values.getType()).getRank() == 1),
        reader(host, buffers,
               scalarRows ? SmallVector<Value>{indices, values}
                          : SmallVector<Value>{indices},
               op) {
    if (!scalarRows)
      buffers.of(host, values);
    bins = tensor::DimOp::create(host, dest, 0);
    // (Sizes of scalar rows are not taken: `values` may be a map this op
    // recomputes.)
    if (!scalarRows) {
      rowSizes = sizesOf(host, values);
      rowSizes.erase(rowSizes.begin());
    }
    rowElements = product(host, rowSizes);
    work = arith::MulIOp::create(host, reader.size(host), rowElements);
  }

  /// Kernel side: element `w` of the `work`; for an index in range,
  /// `update` gets the index, the element's position in its row (`within`),
  /// its position in `dest` flattened (`flat`) and its value.
  void visit(ImplicitLocOpBuilder &b, Value w,
             function_ref<void(ImplicitLocOpBuilder &, Value index,
                               ValueRange within, Value flat, Value value)>
                 update) const {
    Value p = arith::DivUIOp::create(b, w, rowElements);
    Value e = arith::RemUIOp::create(b, w, rowElements);
    SmallVector<Value> read = reader.read(b, p);
    auto [index, inRange] = checkedIndex(b, read[0], bins);
    ifThen(b, inRange, [&](ImplicitLocOpBuilder &ib) {
      SmallVector<Value> within = unflatten(ib, e, rowSizes);
      Value value = read.back();
      if (!scalarRows) {
        SmallVector<Value> from{p};
        llvm::append_range(from, within);
        value = tensor::ExtractOp::create(ib, values, from);
      }
      Value flat = arith::AddIOp::create(
          ib, arith::MulIOp::create(ib, index, rowElements), e);
      update(ib, index, within, flat, value);
    });
  }

  Value values;
  bool scalarRows;
  ElementReader reader;
  Value bins, rowElements, work;
  SmallVector<Value> rowSizes;
};

/// `out` (a new buffer of `dest`'s shape) gets a copy of `dest`, then
/// `update` runs on each of `elements`. Up to kOneBlockElements of each, one
/// block does both, waiting at a barrier in between; else a kernel copies and
/// one thread per element updates in a second.
void copyThenUpdate(
    ImplicitLocOpBuilder &host, const Buffers &buffers, Value dest, Value out,
    const IndexedElements &elements,
    function_ref<void(ImplicitLocOpBuilder &, Value index, ValueRange within,
                      Value flat, Value value)>
        update) {
  SmallVector<Value> sizes = sizesOf(host, dest);
  Value count = product(host, sizes);
  auto copy = [&](ImplicitLocOpBuilder &b, Value e) {
    copyElement(b, dest, out, sizes, e);
  };
  Value limit = indexConstant(host, kOneBlockElements);
  Value small = arith::AndIOp::create(
      host, arith::CmpIOp::create(host, arith::CmpIPredicate::ule, count, limit),
      arith::CmpIOp::create(host, arith::CmpIPredicate::ule, elements.work,
                            limit));
  Value step = indexConstant(host, kBlockSize);
  ifThenElse(
      host, small,
      [&](ImplicitLocOpBuilder &then) {
        launchKernel(
            then, indexConstant(then, 1), {}, buffers,
            [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
              forEachIndexIn(b, ids.thread, count, step, copy);
              gpu::BarrierOp::create(b);
              forEachIndexIn(b, ids.thread, elements.work, step,
                             [&](ImplicitLocOpBuilder &ib, Value w) {
                               elements.visit(ib, w, update);
                             });
            });
      },
      [&](ImplicitLocOpBuilder &otherwise) {
        launchKernel(otherwise, blocksFor(otherwise, count), {}, buffers,
                     [&](ImplicitLocOpBuilder &b, const ThreadIds &ids,
                         ValueRange) {
                       ifThen(b, lessThan(b, ids.global, count),
                              [&](ImplicitLocOpBuilder &ib) {
                                copy(ib, ids.global);
                              });
                     });
        launchKernel(otherwise, blocksFor(otherwise, elements.work), {},
                     buffers,
                     [&](ImplicitLocOpBuilder &b, const ThreadIds &ids,
                         ValueRange) {
                       ifThen(b, lessThan(b, ids.global, elements.work),
                              [&](ImplicitLocOpBuilder &ib) {
                                elements.visit(ib, ids.global, update);
                              });
                     });
      });
}

} // namespace

void lowerScatter(ScatterOp scatter) {
  ImplicitLocOpBuilder host(scatter.getLoc(), scatter);
  Buffers buffers;
  Value dest = scatter.getDest();
  Value out = bufferForCopyOf(host, buffers, dest);
  IndexedElements elements(host, buffers, scatter, dest, scatter.getIndices(),
                           scatter.getValues());
  copyThenUpdate(host, buffers, dest, out, elements,
                 [&](ImplicitLocOpBuilder &b, Value index, ValueRange within,
                     Value, Value value) {
                   SmallVector<Value> to{index};
                   llvm::append_range(to, within);
                   memref::StoreOp::create(b, value, out, to);
                 });
  replaceSoac(scatter, asTensor(host, out, scatter.getType()),
              &elements.reader);
}

/// One atomic per element of each value: rows of values are combined with
/// dest's rows element by element, in a rank-1 view of a copy of dest.
void lowerReduceByIndex(ReduceByIndexOp histogram) {
  ImplicitLocOpBuilder host(histogram.getLoc(), histogram);
  Region &op = *scalarOperator(histogram);
  Buffers buffers;
  buffers.addFreeTensors(host, op);
  Value dest = histogram.getDests()[0];
  auto destType = cast<RankedTensorType>(dest.getType());
  Value out = bufferForCopyOf(host, buffers, dest);
  Value flat = out;
  if (destType.getRank() > 1) {
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, destType.getRank()));
    // The flat size is dynamic when any size is (the op's own type inference
    // makes tensor<0x?xf32> a static 0, which its verifier then refuses).
    int64_t size = destType.hasStaticShape() ? destType.getNumElements()
                                             : ShapedType::kDynamic;
    flat = memref::CollapseShapeOp::create(
        host, MemRefType::get({size}, destType.getElementType()), out,
        ArrayRef<ReassociationIndices>{all});
  }
  IndexedElements elements(host, buffers, histogram, dest,
                           histogram.getIndices(), histogram.getValues()[0]);
  copyThenUpdate(
      host, buffers, dest, out, elements,
      [&](ImplicitLocOpBuilder &b, Value, ValueRange, Value at, Value value) {
        atomicCombine(b, op, flat, at, value);
      });
  replaceSoac(histogram, asTensor(host, out, histogram.getResult(0).getType()),
              &elements.reader);
}

/// Several destinations whose operator mixes them (an argmin): copies of
/// the destinations, a lock per bin (zeroed by a kernel of its own), then
/// one thread per value updating every destination's bin under its lock.
void lowerLockedReduceByIndex(ReduceByIndexOp histogram) {
  ImplicitLocOpBuilder host(histogram.getLoc(), histogram);
  Region &op = histogram.getBody();
  Buffers buffers;
  buffers.addFreeTensors(host, op);
  SmallVector<Value> outs;
  for (Value dest : histogram.getDests())
    outs.push_back(copyToNewBuffer(host, buffers, dest));
  Value bins = tensor::DimOp::create(host, histogram.getDests()[0], 0);
  Value locks = filledBuffer(
      host, RankedTensorType::get({ShapedType::kDynamic}, host.getI32Type()),
      {bins}, arith::ConstantIntOp::create(host, 0, 32));
  SmallVector<Value> read{histogram.getIndices()};
  llvm::append_range(read, histogram.getValues());
  ElementReader reader(host, buffers, read, histogram);
  Value count = reader.size(host);
  launchKernel(
      host, blocksFor(host, count), {}, buffers,
      [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
        ifThen(b, lessThan(b, ids.global, count), [&](ImplicitLocOpBuilder &ib) {
          SmallVector<Value> elements = reader.read(ib, ids.global);
          auto [index, inRange] = checkedIndex(ib, elements[0], bins);
          ifThen(ib, inRange, [&](ImplicitLocOpBuilder &jb) {
            lockedCombine(jb, op, outs, locks, index,
                          ArrayRef<Value>(elements).drop_front());
          });
        });
      });
  replaceSoac(histogram,
              asTensors(host, outs, histogram.getResultTypes()), &reader);
}

} // namespace soac::kernels
