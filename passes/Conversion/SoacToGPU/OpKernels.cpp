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

/// A rank-1 buffer of `count` elements of `element`.
Value allocVector(ImplicitLocOpBuilder &host, Type element, Value count) {
  return memref::AllocOp::create(
      host, MemRefType::get({ShapedType::kDynamic}, element), count);
}

/// Blocks of the kernels folding `n` rows: one row per thread up to
/// kFoldBlocks blocks.
Value foldBlocks(ImplicitLocOpBuilder &host, Value n) {
  return minIndex(host, blocksFor(host, n), indexConstant(host, kFoldBlocks));
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

/// A new buffer holding a copy of `tensor` (one thread per element).
Value copyToNewBuffer(ImplicitLocOpBuilder &host, Buffers &buffers,
                      Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> sizes = sizesOf(host, tensor);
  Value copy = allocBuffer(host, type, dynamicSizes(type, sizes));
  buffers.of(host, tensor);
  Value count = product(host, sizes);
  launchKernel(host, blocksFor(host, count), {}, buffers,
               [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
                 ifThen(b, lessThan(b, ids.global, count),
                        [&](ImplicitLocOpBuilder &ib) {
                          SmallVector<Value> at =
                              unflatten(ib, ids.global, sizes);
                          Value v = tensor::ExtractOp::create(ib, tensor, at);
                          memref::StoreOp::create(ib, v, copy, at);
                        });
               });
  return copy;
}


} // namespace

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
  launchKernel(host, blocksFor(host, n), {}, buffers,
               [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
                 ifThen(b, lessThan(b, ids.global, n),
                        [&](ImplicitLocOpBuilder &ib) {
                          SmallVector<Value> rows = reader.read(ib, ids.global);
                          SmallVector<Value> values =
                              inlineBody(ib, map.getBody(), rows);
                          for (auto [v, out] : llvm::zip(values, outputs))
                            memref::StoreOp::create(ib, v, out,
                                                    ValueRange{ids.global});
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
  Value n = indexConstant(host, 1);
  for (Value size : sizes)
    n = arith::MulIOp::create(host, n, size);
  Value out = allocBuffer(host, type, splat.getDynamicSizes());
  Value value = splat.getInput();
  Buffers none;
  launchKernel(
      host, blocksFor(host, n), {}, none,
      [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
        ifThen(b, lessThan(b, ids.global, n), [&](ImplicitLocOpBuilder &ib) {
          // The element's indices, from the flat id (row-major).
          SmallVector<Value> indices(sizes.size());
          Value rest = ids.global;
          for (int64_t d = sizes.size() - 1; d >= 0; --d) {
            indices[d] = arith::RemUIOp::create(ib, rest, sizes[d]);
            rest = arith::DivUIOp::create(ib, rest, sizes[d]);
          }
          memref::StoreOp::create(ib, value, out, indices);
        });
      });
  Value filled = asTensor(host, out, type);
  splat.replaceAllUsesWith(filled);
  splat.erase();
}

namespace {

/// Each thread folds its rows of `n` (interleaved when the operator allows,
/// else a contiguous range), then the block combines the threads' values.
SmallVector<Value> foldBlockRows(ImplicitLocOpBuilder &b,
                                 const Combiner &combiner,
                                 const ThreadIds &ids, Value n,
                                 ValueRange scratch,
                                 const ElementReader &reader) {
  auto read = [&](ImplicitLocOpBuilder &ib, Value j) {
    return reader.read(ib, j);
  };
  SmallVector<Value> acc;
  if (combiner.isCommutative()) {
    acc = foldRows(b, combiner, combiner.neutralElements(), ids.global, n,
                   ids.count, read);
  } else {
    auto [lo, hi] = contiguousRange(b, ids.global, ids.count, n);
    acc = foldRows(b, combiner, combiner.neutralElements(), lo, hi,
                   indexConstant(b, 1), read);
  }
  return blockReduce(b, combiner, ids.thread, acc, scratch);
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
  Fold(ImplicitLocOpBuilder &host, OpTy op)
      : buffers(withFreeTensors(host, op.getBody())),
        reader(host, buffers, op.getInputs(), op),
        combiner(op.getBody(), op.getInits()), n(reader.size(host)),
        blocks(foldBlocks(host, n)) {}

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

void lowerReduce(ReduceOp reduce) {
  ImplicitLocOpBuilder host(reduce.getLoc(), reduce);
  Fold fold(host, reduce);
  Buffers &buffers = fold.buffers;
  const ElementReader &reader = fold.reader;
  const Combiner &combiner = fold.combiner;
  Value n = fold.n, blocks = fold.blocks;
  SmallVector<Value> partials, totals;
  for (Value init : reduce.getInits()) {
    partials.push_back(allocVector(host, init.getType(), blocks));
    totals.push_back(allocVector(host, init.getType(), indexConstant(host, 1)));
  }
  launchKernel(host, blocks, combiner.workgroupTypes(), buffers,
               [&](ImplicitLocOpBuilder &b, const ThreadIds &ids,
                   ValueRange scratch) {
                 SmallVector<Value> total =
                     foldBlockRows(b, combiner, ids, n, scratch, reader);
                 ifThen(b, isThreadZero(b, ids), [&](ImplicitLocOpBuilder &ib) {
                   storeAll(ib, total, partials, ids.block);
                 });
               });
  // One block combines the partial results, each thread a contiguous range.
  launchKernel(host, indexConstant(host, 1), combiner.workgroupTypes(), buffers,
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
                 ifThen(b, isThreadZero(b, ids), [&](ImplicitLocOpBuilder &ib) {
                   storeAll(ib, total, totals, indexConstant(ib, 0));
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
                          memref::StoreOp::create(ib, acc, partials,
                                                  ValueRange{c, j});
                        });
               });
  launchKernel(host, blocksFor(host, m), {}, buffers,
               [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
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
                                return SmallVector<Value>{memref::LoadOp::create(
                                    rb, partials, ValueRange{c, ids.global})};
                              })[0];
                          memref::StoreOp::create(ib, acc, out, at);
                        });
               });
  replaceSoac(reduce, asTensor(host, out, resultType), nullptr);
}

void lowerScan(ScanOp scan) {
  ImplicitLocOpBuilder host(scan.getLoc(), scan);
  Fold fold(host, scan);
  Buffers &buffers = fold.buffers;
  const ElementReader &reader = fold.reader;
  const Combiner &combiner = fold.combiner;
  Value n = fold.n, blocks = fold.blocks;
  // Each thread's fold of its rows, kept for the rescan so that the input
  // is read twice, not three times.
  Value threads = arith::MulIOp::create(host, blocks,
                                        indexConstant(host, kBlockSize));
  SmallVector<Value> threadTotals, blockTotals, blockOffsets, outputs;
  for (Value init : scan.getInits()) {
    threadTotals.push_back(allocVector(host, init.getType(), threads));
    blockTotals.push_back(allocVector(host, init.getType(), blocks));
    blockOffsets.push_back(allocVector(host, init.getType(), blocks));
  }
  for (Type t : scan.getResultTypes()) {
    auto type = cast<RankedTensorType>(t);
    outputs.push_back(allocBuffer(host, type, dynamicSizes(type, {n})));
  }
  auto read = [&](ImplicitLocOpBuilder &ib, Value j) {
    return reader.read(ib, j);
  };
  // 1. Each thread folds its contiguous range of rows; the total of each
  // block's rows.
  launchKernel(host, blocks, combiner.workgroupTypes(), buffers,
               [&](ImplicitLocOpBuilder &b, const ThreadIds &ids,
                   ValueRange scratch) {
                 auto [lo, hi] = contiguousRange(b, ids.global, ids.count, n);
                 SmallVector<Value> acc =
                     foldRows(b, combiner, combiner.neutralElements(), lo, hi,
                              indexConstant(b, 1), read);
                 storeAll(b, acc, threadTotals, ids.global);
                 SmallVector<Value> total =
                     blockReduce(b, combiner, ids.thread, acc, scratch);
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
  // 3. Each thread rescans its rows from its block's and its own offset.
  launchKernel(
      host, blocks, combiner.workgroupTypes(), buffers,
      [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange scratch) {
        auto [lo, hi] = contiguousRange(b, ids.global, ids.count, n);
        SmallVector<Value> acc = loadAll(b, threadTotals, ids.global);
        SmallVector<Value> inBlock =
            blockExclusiveScan(b, combiner, ids.thread, acc, scratch).first;
        SmallVector<Value> start = combiner.combine(
            b, loadAll(b, blockOffsets, ids.block), inBlock);
        scf::ForOp::create(
            b, lo, hi, indexConstant(b, 1), start,
            [&](OpBuilder &nested, Location loc, Value j, ValueRange running) {
              ImplicitLocOpBuilder ib(loc, nested);
              SmallVector<Value> next =
                  combiner.combine(ib, running, read(ib, j));
              storeAll(ib, next, outputs, j);
              scf::YieldOp::create(ib, next);
            });
      });
  replaceSoac(scan, asTensors(host, outputs, scan.getResultTypes()),
              &fold.reader);
}

namespace {

/// `index` (any integer type) as an index, and whether it is in [0, size).
std::pair<Value, Value> checkedIndex(ImplicitLocOpBuilder &b, Value index,
                                     Value size) {
  if (!index.getType().isIndex())
    index = arith::IndexCastOp::create(b, b.getIndexType(), index);
  // Negative indices are huge as unsigned numbers: one comparison.
  return {index, lessThan(b, index, size)};
}

/// Launches one thread per element of each row of `values` (the rows of a
/// scatter or reduce_by_index), reading the rows' indices into `dest`'s rows
/// with `indices`. For the elements whose index is in range, `update` gets
/// the index, the element's position in its row (`within`), its position
/// in `dest` flattened (`flat`) and its value. Scalar rows are read through an
/// ElementReader (recomputing a map that only this op reads).
ElementReader launchPerIndexedElement(
    ImplicitLocOpBuilder &host, Buffers &buffers, Operation *op, Value dest,
    Value indices, Value values,
    function_ref<void(ImplicitLocOpBuilder &, Value index, ValueRange within,
                      Value flat, Value value)>
        update) {
  bool scalarRows = cast<RankedTensorType>(values.getType()).getRank() == 1;
  SmallVector<Value> readTensors{indices};
  if (scalarRows)
    readTensors.push_back(values);
  else
    buffers.of(host, values);
  ElementReader reader(host, buffers, readTensors, op);
  Value count = reader.size(host);
  Value bins = tensor::DimOp::create(host, dest, 0);
  // (Sizes of scalar rows are not taken: `values` may be a map this op
  // recomputes.)
  SmallVector<Value> rowSizes;
  if (!scalarRows) {
    rowSizes = sizesOf(host, values);
    rowSizes.erase(rowSizes.begin());
  }
  Value rowElements = product(host, rowSizes);
  Value work = arith::MulIOp::create(host, count, rowElements);
  launchKernel(
      host, blocksFor(host, work), {}, buffers,
      [&](ImplicitLocOpBuilder &b, const ThreadIds &ids, ValueRange) {
        ifThen(b, lessThan(b, ids.global, work), [&](ImplicitLocOpBuilder &ib) {
          Value p = arith::DivUIOp::create(ib, ids.global, rowElements);
          Value e = arith::RemUIOp::create(ib, ids.global, rowElements);
          SmallVector<Value> read = reader.read(ib, p);
          auto [index, inRange] = checkedIndex(ib, read[0], bins);
          ifThen(ib, inRange, [&](ImplicitLocOpBuilder &jb) {
            SmallVector<Value> within = unflatten(jb, e, rowSizes);
            Value value = read.back();
            if (!scalarRows) {
              SmallVector<Value> from{p};
              llvm::append_range(from, within);
              value = tensor::ExtractOp::create(jb, values, from);
            }
            Value flat = arith::AddIOp::create(
                jb, arith::MulIOp::create(jb, index, rowElements), e);
            update(jb, index, within, flat, value);
          });
        });
      });
  return reader;
}

} // namespace

void lowerScatter(ScatterOp scatter) {
  ImplicitLocOpBuilder host(scatter.getLoc(), scatter);
  Buffers buffers;
  Value out = copyToNewBuffer(host, buffers, scatter.getDest());
  ElementReader reader = launchPerIndexedElement(
      host, buffers, scatter, scatter.getDest(), scatter.getIndices(),
      scatter.getValues(),
      [&](ImplicitLocOpBuilder &b, Value index, ValueRange within, Value,
          Value value) {
        SmallVector<Value> to{index};
        llvm::append_range(to, within);
        memref::StoreOp::create(b, value, out, to);
      });
  replaceSoac(scatter, asTensor(host, out, scatter.getType()), &reader);
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
  Value out = copyToNewBuffer(host, buffers, dest);
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
  ElementReader reader = launchPerIndexedElement(
      host, buffers, histogram, dest, histogram.getIndices(),
      histogram.getValues()[0],
      [&](ImplicitLocOpBuilder &b, Value, ValueRange, Value at, Value value) {
        atomicCombine(b, op, flat, at, value);
      });
  replaceSoac(histogram, asTensor(host, out, histogram.getResult(0).getType()),
              &reader);
}

} // namespace soac::kernels
