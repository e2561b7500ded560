//===- SoacGeneralHistogram.cpp - reduce_by_index with any operator -------===//
//
// h = reduce_by_index dest ⊙ ne is vs, for any associative and commutative
// operator ⊙ on k scalars (Bruun et al., IFL23; Futhark's Rev/Hist.hs):
// the values are sorted by bin (a stable sort, so each bin's values are
// contiguous); with l the ⊙ of the values before a in its bin and r of
// those after it (exclusive segmented scans from both ends),
// h[bin] = d ⊙ l ⊙ a ⊙ r, so ā is the pull-back of h̄[bin] through
// a ↦ ((d ⊙ l) ⊙ a) ⊙ r. dest̄ is the pull-back of h̄ through d ↦ d ⊙ H,
// with H the histogram of the values from the neutral element. Values out
// of range sort after every bin and get no adjoint. O(n log bins) work.
//
//===----------------------------------------------------------------------===//

#include "passes/AutoDiff/Reverse/SoacRules.h"

#include "passes/AutoDiff/Interfaces/Builders.h"
#include "passes/AutoDiff/Reverse/SortByKey.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::autodiff {
namespace {

/// The operator of a segmented scan on (flag, k values): a set flag starts
/// a new segment, (f1, x) ⊕ (f2, y) = (f1 | f2, f2 ? y : x ⊙ y), with
/// y ⊙ x instead when `flipped` (scans of the reversed rows).
SmallVector<Value> segmented(AdjointBuilder &a, ImplicitLocOpBuilder &ib,
                             Block &op, ValueRange v, bool flipped) {
  unsigned k = op.getNumArguments() / 2;
  Value f1 = v[0], f2 = v[k + 1];
  ValueRange x = v.slice(1, k), y = v.slice(k + 2, k);
  SmallVector<Value> args(flipped ? y : x);
  llvm::append_range(args, flipped ? x : y);
  SmallVector<Value> combined = a.cloneBlock(ib, op, args);
  Value restart = arith::CmpIOp::create(
      ib, arith::CmpIPredicate::ne, f2, arith::ConstantIndexOp::create(ib, 0));
  SmallVector<Value> out{arith::OrIOp::create(ib, f1, f2)};
  for (unsigned c = 0; c < k; ++c)
    out.push_back(arith::SelectOp::create(ib, restart, y[c], combined[c]));
  return out;
}

Value asFlag(ImplicitLocOpBuilder &b, Value condition) {
  return arith::SelectOp::create(b, condition,
                                 arith::ConstantIndexOp::create(b, 1),
                                 arith::ConstantIndexOp::create(b, 0));
}

SmallVector<Value> concat(ValueRange x, ValueRange y) {
  SmallVector<Value> all(x);
  llvm::append_range(all, y);
  return all;
}

} // namespace

LogicalResult reverseGeneralHistogram(ReduceByIndexOp histogram,
                                      AdjointBuilder &a) {
  ImplicitLocOpBuilder &b = a.builder();
  Block &op = histogram.getBody().front();
  unsigned k = histogram.getDests().size();
  bool scalarRows = llvm::all_of(histogram.getDests().getTypes(), [](Type t) {
    return cast<RankedTensorType>(t).getRank() == 1;
  });
  if (!scalarRows || !a.activeFreeValues(histogram).empty())
    return histogram.emitOpError()
           << "has an operator whose reverse-mode rule is not implemented: "
              "supported are + (any rows, per component), operators applied "
              "elementwise to tensor rows, and any associative operator on "
              "scalars that reads no differentiated value from outside";
  Value indices = a.primal(histogram.getIndices());
  SmallVector<Value> dests = a.primals(histogram.getDests());
  SmallVector<Value> values = a.primals(histogram.getValues());
  SmallVector<Value> inits = a.primals(histogram.getInits());
  SmallVector<Value> bars;
  for (auto [result, dest] : llvm::zip(histogram.getResults(), dests))
    bars.push_back(a.adjoint(result) ? a.adjoint(result) : a.zerosLike(dest));
  Value bins = outerSize(b, dests.front()), n = outerSize(b, indices);
  Value zero = arith::ConstantIndexOp::create(b, 0);
  Value one = arith::ConstantIndexOp::create(b, 1);
  Value last = arith::SubIOp::create(b, n, one);
  auto indexTensor =
      RankedTensorType::get({ShapedType::kDynamic}, b.getIndexType());
  Value iota = IotaOp::create(b, indexTensor, n);

  // Sorted by bin; out-of-range values get the key `bins`, after all bins.
  Value keys = buildMap(b, indices, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
    Value index = i[0];
    if (!index.getType().isIndex())
      index = arith::IndexCastOp::create(ib, ib.getIndexType(), index);
    Value inRange =
        arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, index, bins);
    return SmallVector<Value>{arith::SelectOp::create(ib, inRange, index, bins)};
  })[0];
  SortedKeys sorted = sortByKey(b, keys, bins);
  SmallVector<Value> sortedValues = buildMap(
      b, sorted.permutation, [&](ImplicitLocOpBuilder &ib, ValueRange p) {
        return llvm::map_to_vector(
            values, [&](Value v) { return extractRow(ib, v, p[0]); });
      });
  // Where each bin's segment starts and ends (flags 0/1).
  SmallVector<Value> bounds =
      buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
        Value key = extractRow(ib, sorted.keys, i[0]);
        Value first = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, i[0], zero);
        Value lastRow = arith::CmpIOp::create(ib, arith::CmpIPredicate::eq, i[0], last);
        Value previous = arith::SelectOp::create(
            ib, first, i[0], arith::SubIOp::create(ib, i[0], one));
        Value next = arith::SelectOp::create(
            ib, lastRow, i[0], arith::AddIOp::create(ib, i[0], one));
        auto differs = [&](Value at) {
          return arith::CmpIOp::create(ib, arith::CmpIPredicate::ne, key,
                                       extractRow(ib, sorted.keys, at));
        };
        return SmallVector<Value>{
            asFlag(ib, arith::OrIOp::create(ib, first, differs(previous))),
            asFlag(ib, arith::OrIOp::create(ib, lastRow, differs(next)))};
      });
  // Inclusive segmented scans: of the sorted values, and of them reversed
  // with the operator flipped (suffixes).
  SmallVector<Value> neutral = concat(zero, inits);
  SmallVector<Value> prefixes = buildScan(
      b, concat(bounds[0], sortedValues), neutral,
      [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        return segmented(a, ib, op, v, /*flipped=*/false);
      });
  SmallVector<Value> reversed =
      buildMap(b, iota, [&](ImplicitLocOpBuilder &ib, ValueRange i) {
        Value mirror = arith::SubIOp::create(ib, last, i[0]);
        return llvm::map_to_vector(concat(bounds[1], sortedValues), [&](Value v) {
          return extractRow(ib, v, mirror);
        });
      });
  SmallVector<Value> suffixes =
      buildScan(b, reversed, neutral, [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        return segmented(a, ib, op, v, /*flipped=*/true);
      });

  // ā per sorted value, pulled back through ((d ⊙ l) ⊙ a) ⊙ r.
  bool failedSweep = false;
  SmallVector<Value> sortedAdjoints = buildMap(
      b, concat({iota, sorted.keys}, sortedValues),
      [&](ImplicitLocOpBuilder &ib, ValueRange row) {
        Value i = row[0], bin = row[1];
        ValueRange own = row.drop_front(2);
        Value inRange =
            arith::CmpIOp::create(ib, arith::CmpIPredicate::ult, bin, bins);
        auto pulled = scf::IfOp::create(ib, own.getTypes(), inRange, true, true);
        OpBuilder::InsertionGuard guard(ib);
        ib.setInsertionPointToStart(pulled.elseBlock());
        scf::YieldOp::create(ib, llvm::map_to_vector(own, [&](Value v) {
                               return buildZerosLike(ib, v);
                             }));
        ib.setInsertionPointToStart(pulled.thenBlock());
        auto isSet = [&](Value flags) {
          return arith::CmpIOp::create(ib, arith::CmpIPredicate::ne,
                                       extractRow(ib, flags, i), zero);
        };
        Value starts = isSet(bounds[0]), ends = isSet(bounds[1]);
        // positions read only when the flag is clear (kept in range)
        Value before = arith::SelectOp::create(ib, starts, i,
                                               arith::SubIOp::create(ib, i, one));
        Value after = arith::SelectOp::create(
            ib, ends, zero,
            arith::SubIOp::create(ib, arith::SubIOp::create(ib, last, i), one));
        SmallVector<Value> d, l, r, seeds;
        for (unsigned c = 0; c < k; ++c) {
          d.push_back(extractRow(ib, dests[c], bin));
          seeds.push_back(extractRow(ib, bars[c], bin));
          l.push_back(arith::SelectOp::create(
              ib, starts, inits[c], extractRow(ib, prefixes[c + 1], before)));
          r.push_back(arith::SelectOp::create(
              ib, ends, inits[c], extractRow(ib, suffixes[c + 1], after)));
        }
        SmallVector<Value> dl = a.cloneBlock(ib, op, concat(d, l));
        SmallVector<Value> dla = concat(dl, own);
        SmallVector<Value> t = a.cloneBlock(ib, op, dla);
        FailureOr<SmallVector<Value>> throughRight =
            a.pullBack(ib, op, concat(t, r), seeds);
        FailureOr<SmallVector<Value>> throughLeft =
            failed(throughRight)
                ? throughRight
                : a.pullBack(ib, op, dla,
                             ArrayRef<Value>(*throughRight).take_front(k));
        if (failed(throughLeft)) {
          failedSweep = true;
          scf::YieldOp::create(ib, own);
        } else {
          scf::YieldOp::create(ib, ArrayRef<Value>(*throughLeft).drop_front(k));
        }
        return llvm::to_vector_of<Value>(pulled.getResults());
      });
  if (failedSweep)
    return failure();
  for (unsigned c = 0; c < k; ++c) {
    Value original = histogram.getValues()[c];
    if (!a.isActive(original))
      continue;
    // back to the original order (a permutation: no two writes collide)
    Value zeros = a.zerosLike(values[c]);
    a.accumulate(original, ScatterOp::create(b, zeros.getType(), zeros,
                                             sorted.permutation,
                                             sortedAdjoints[c]));
  }

  if (llvm::none_of(histogram.getDests(), [&](Value d) { return a.isActive(d); }))
    return success();
  SmallVector<Value> neutralBins = buildMap(
      b, Value(IotaOp::create(b, indexTensor, bins)),
      [&](ImplicitLocOpBuilder &, ValueRange) { return inits; });
  SmallVector<Value> binTotals = buildHistogram(
      b, neutralBins, indices, values, inits,
      [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        return a.cloneBlock(ib, op, v);
      });
  SmallVector<Value> destAdjoints = buildMap(
      b, concat(concat(dests, binTotals), bars),
      [&](ImplicitLocOpBuilder &ib, ValueRange v) {
        FailureOr<SmallVector<Value>> pulled = a.pullBack(
            ib, op, v.take_front(2 * k), v.drop_front(2 * k));
        if (failed(pulled)) {
          failedSweep = true;
          return SmallVector<Value>(v.take_front(k));
        }
        return SmallVector<Value>(ArrayRef<Value>(*pulled).take_front(k));
      });
  if (failedSweep)
    return failure();
  for (auto [original, adjoint] : llvm::zip(histogram.getDests(), destAdjoints))
    a.accumulate(original, adjoint);
  return success();
}

} // namespace soac::autodiff
