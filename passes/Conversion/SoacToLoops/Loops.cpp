//===- Loops.cpp - building blocks of the loops ---------------------------===//
#include "passes/Conversion/SoacToLoops/Loops.h"

#include "passes/Utils/Bodies.h"
#include "passes/Utils/Rows.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace soac::loops {

Value indexConstant(ImplicitLocOpBuilder &b, int64_t value) {
  return arith::ConstantIndexOp::create(b, value);
}

scf::ForOp markRowLoop(scf::ForOp loop) {
  loop->setAttr(kRowLoopAttr, UnitAttr::get(loop.getContext()));
  return loop;
}

bool isNestedInParallelOp(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<MapOp, ReduceOp, ScanOp, ReduceByIndexOp, linalg::GenericOp,
            scf::ForallOp, scf::ParallelOp>(parent) ||
        parent->hasAttr(kRowLoopAttr))
      return true;
  return false;
}

Value emptyTensor(ImplicitLocOpBuilder &b, RankedTensorType type, Value outer,
                  ValueRange innerSizes) {
  SmallVector<Value> dynamic;
  if (type.isDynamicDim(0))
    dynamic.push_back(outer);
  llvm::append_range(dynamic, innerSizes);
  return tensor::EmptyOp::create(b, type, dynamic);
}

SmallVector<Value> seededRows(ImplicitLocOpBuilder &b, ValueRange outputs,
                              ArrayRef<bool> seeded, Value i) {
  SmallVector<Value> rows;
  for (auto [out, isSeeded] : llvm::zip(outputs, seeded))
    rows.push_back(isSeeded ? extractRow(b, out, i) : Value());
  return rows;
}

SmallVector<Value> tabulateInto(ImplicitLocOpBuilder &b, Value n,
                                ValueRange outputs, ArrayRef<bool> seeded,
                                bool parallel, SeededBody body) {
  if (!parallel) {
    auto loop = markRowLoop(scf::ForOp::create(
        b, indexConstant(b, 0), n, indexConstant(b, 1), outputs,
        [&](OpBuilder &nested, Location loc, Value i, ValueRange outs) {
          ImplicitLocOpBuilder ib(loc, nested);
          SmallVector<Value> values =
              body(ib, i, seededRows(ib, outs, seeded, i));
          SmallVector<Value> updated;
          for (auto [value, out] : llvm::zip(values, outs))
            updated.push_back(tensor::InsertOp::create(ib, value, out, i));
          scf::YieldOp::create(ib, updated);
        }));
    return llvm::to_vector_of<Value>(loop.getResults());
  }
  SmallVector<AffineMap> maps(outputs.size(), b.getMultiDimIdentityMap(1));
  auto generic = linalg::GenericOp::create(
      b, outputs.getTypes(), ValueRange{}, outputs, maps,
      {utils::IteratorType::parallel},
      [&](OpBuilder &nested, Location loc, ValueRange elements) {
        ImplicitLocOpBuilder ib(loc, nested);
        Value i = linalg::IndexOp::create(ib, 0);
        SmallVector<Value> old;
        for (auto [element, isSeeded] : llvm::zip(elements, seeded))
          old.push_back(isSeeded ? element : Value());
        linalg::YieldOp::create(ib, body(ib, i, old));
      });
  return llvm::to_vector_of<Value>(generic.getResults());
}

SmallVector<Value> tabulate(ImplicitLocOpBuilder &b, Value n,
                            TypeRange resultTypes, bool parallel,
                            IndexedBody body) {
  SmallVector<Value> outputs = llvm::map_to_vector(resultTypes, [&](Type t) {
    return emptyTensor(b, cast<RankedTensorType>(t), n);
  });
  SmallVector<bool> seeded(outputs.size(), false);
  return tabulateInto(b, n, outputs, seeded, parallel,
                      [&](ImplicitLocOpBuilder &ib, Value i, ArrayRef<Value>) {
                        return body(ib, i);
                      });
}

SmallVector<Value> foldRange(ImplicitLocOpBuilder &b, Region &op,
                             const RowReader &rows, Value lo, Value hi,
                             ValueRange accumulators) {
  auto loop = markRowLoop(scf::ForOp::create(
      b, lo, hi, indexConstant(b, 1), accumulators,
      [&](OpBuilder &nested, Location loc, Value i, ValueRange accs) {
        ImplicitLocOpBuilder ib(loc, nested);
        SmallVector<Value> args(accs);
        llvm::append_range(args, rows.rowsAt(ib, i));
        scf::YieldOp::create(ib, inlineBody(ib, op, args, /*reassociate=*/true));
      }));
  return llvm::to_vector_of<Value>(loop.getResults());
}

SmallVector<Type> vectorTypes(TypeRange elementTypes) {
  return llvm::map_to_vector(elementTypes, [&](Type t) -> Type {
    return RankedTensorType::get({ShapedType::kDynamic}, t);
  });
}

bool allScalar(TypeRange types) {
  return llvm::none_of(types, llvm::IsaPred<RankedTensorType>);
}

std::string checkMessage(Location loc, StringRef what) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn() << ": ";
  os << what;
  return message;
}

void assertRowFits(ImplicitLocOpBuilder &b, Value row, Value dest) {
  auto rowTensor = dyn_cast<RankedTensorType>(row.getType());
  if (!rowTensor)
    return;
  auto destTensor = cast<RankedTensorType>(dest.getType());
  for (int64_t d = 0; d < rowTensor.getRank(); ++d) {
    if (!rowTensor.isDynamicDim(d) && !destTensor.isDynamicDim(d + 1))
      continue;
    Value same = arith::CmpIOp::create(
        b, arith::CmpIPredicate::eq, tensor::DimOp::create(b, row, d),
        tensor::DimOp::create(b, dest, d + 1));
    cf::AssertOp::create(
        b, same, checkMessage(b.getLoc(), "rows of different sizes"));
  }
}

void parallelInsertRows(ImplicitLocOpBuilder &b, ValueRange rows,
                        ValueRange outputs, Value i,
                        ArrayRef<SmallVector<OpFoldResult>> slotSizes) {
  SmallVector<Value> sources;
  SmallVector<SmallVector<OpFoldResult>> sizes;
  for (auto [row, slot] : llvm::zip(rows, slotSizes)) {
    SmallVector<OpFoldResult> rowSizes{b.getIndexAttr(1)};
    if (isa<RankedTensorType>(row.getType())) {
      llvm::append_range(rowSizes, slot);
    } else {
      // A scalar row goes in as a one-element tensor.
      row = tensor::FromElementsOp::create(
          b, RankedTensorType::get({1}, row.getType()), ValueRange{row});
    }
    sources.push_back(row);
    sizes.push_back(rowSizes);
  }
  for (auto [row, out] : llvm::zip(sources, outputs))
    assertRowFits(b, row, out);
  auto inParallel = scf::InParallelOp::create(b);
  b.setInsertionPointToStart(inParallel.getBody());
  for (auto [source, rowSizes, out] : llvm::zip(sources, sizes, outputs)) {
    int64_t rank = cast<RankedTensorType>(out.getType()).getRank();
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    offsets[0] = i;
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    tensor::ParallelInsertSliceOp::create(b, source, out, offsets, rowSizes,
                                          strides);
  }
}

SmallVector<Value> forallRows(ImplicitLocOpBuilder &b, Value n,
                              ValueRange outputs, ArrayRef<bool> seeded,
                              SeededBody body) {
  auto forall = scf::ForallOp::create(
      b, ArrayRef<OpFoldResult>{n}, outputs, std::nullopt,
      [&](OpBuilder &nested, Location loc, ValueRange args) {
        // args: the induction variable, then the shared outputs
        ImplicitLocOpBuilder ib(loc, nested);
        Value i = args[0];
        ValueRange shared = args.drop_front();
        SmallVector<Value> old = seededRows(ib, shared, seeded, i);
        // The slots' sizes, known before the rows are computed: a row
        // computed in its slot is checked against them first
        // (checkRowsComputedInPlace) instead of being written past it. A
        // seeded row goes back with the sizes it was read with.
        SmallVector<SmallVector<OpFoldResult>> slots;
        for (auto [out, oldRow] : llvm::zip(shared, old))
          slots.push_back(
              oldRow && isa<RankedTensorType>(oldRow.getType())
                  ? tensor::getMixedSizes(ib, loc, oldRow)
                  : llvm::to_vector(
                        ArrayRef(tensor::getMixedSizes(ib, loc, out))
                            .drop_front()));
        parallelInsertRows(ib, body(ib, i, old), shared, i, slots);
      });
  return llvm::to_vector_of<Value>(forall.getResults());
}

SmallVector<Value> tabulateTensorRows(ImplicitLocOpBuilder &b, Value n,
                                      ValueRange likeRows, IndexedBody body) {
  SmallVector<Value> outputs = llvm::map_to_vector(
      likeRows, [&](Value row) { return emptyRows(b, n, row); });
  SmallVector<bool> seeded(outputs.size(), false);
  return forallRows(b, n, outputs, seeded,
                    [&](ImplicitLocOpBuilder &ib, Value c, ArrayRef<Value>) {
                      return body(ib, c);
                    });
}

} // namespace soac::loops
