//===- ResolveDims.cpp - soac-resolve-dims --------------------------------===//
//
// A tensor.dim of a loop's or a branch's result is replaced by the size the
// tensor was created with (by tensor.empty or tensor.splat), when every path
// through the loop or the branch keeps it. One-Shot Bufferize's value-bounds
// queries then stop there instead of comparing both branches of each scf.if
// and each loop's yielded size with its carried one, in each of their many
// queries.
//
//===----------------------------------------------------------------------===//
#include "passes/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace soac {
#define GEN_PASS_DEF_SOACRESOLVEDIMS
#include "passes/Conversion/Passes.h.inc"
} // namespace soac

using namespace mlir;

namespace {

/// Where a size comes from: an index value, or size `dim` of a tensor that
/// nothing here sees through (a function argument, a slice, a loop that
/// changes sizes).
struct Origin {
  Value value;
  int64_t dim = -1; // -1: `value` is the size itself

  bool operator==(const Origin &other) const {
    return value == other.value && dim == other.dim;
  }
};

class DimResolver {
public:
  /// Where size `dim` of the tensor `tensor` comes from.
  Origin origin(Value tensor, int64_t dim) {
    auto key = std::make_pair(tensor, dim);
    if (auto known = cache.find(key); known != cache.end())
      return known->second;
    Origin found = trace(tensor, dim);
    // An origin found while its loop was traced (the loop's carried value)
    // may since have been traced further.
    for (auto next = cache.find({found.value, found.dim});
         found.dim >= 0 && next != cache.end() && !(next->second == found);
         next = cache.find({found.value, found.dim}))
      found = next->second;
    cache[key] = found;
    return found;
  }

private:
  Origin trace(Value tensor, int64_t dim) {
    Origin opaque{tensor, dim};
    auto type = dyn_cast<RankedTensorType>(tensor.getType());
    if (!type || dim >= type.getRank() || !type.isDynamicDim(dim))
      return opaque; // static sizes fold by themselves
    if (auto arg = dyn_cast<BlockArgument>(tensor)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (auto loop = dyn_cast<scf::ForOp>(owner)) {
        if (arg.getArgNumber() < loop.getNumInductionVars())
          return opaque;
        return loopOrigin(loop, arg.getArgNumber() - loop.getNumInductionVars(),
                          dim, opaque);
      }
      if (auto forall = dyn_cast<scf::ForallOp>(owner)) {
        if (OpOperand *init = forall.getTiedLoopInit(arg))
          return origin(init->get(), dim);
      }
      return opaque;
    }
    Operation *op = tensor.getDefiningOp();
    unsigned r = cast<OpResult>(tensor).getResultNumber();
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return loopOrigin(loop, r, dim, opaque);
    if (auto forall = dyn_cast<scf::ForallOp>(op))
      return origin(forall.getOutputs()[r], dim);
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      if (branch.getElseRegion().empty())
        return opaque;
      Origin then = origin(branch.thenYield().getOperand(r), dim);
      Origin otherwise = origin(branch.elseYield().getOperand(r), dim);
      return then == otherwise && definedAbove(then.value, branch) ? then
                                                                   : opaque;
    }
    if (auto empty = dyn_cast<tensor::EmptyOp>(op))
      return Origin{empty.getDynamicSize(dim)};
    if (auto splat = dyn_cast<tensor::SplatOp>(op))
      return Origin{splat.getDynamicSizes()[type.getDynamicDimIndex(dim)]};
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
      return origin(insert.getDest(), dim);
    if (auto insert = dyn_cast<tensor::InsertOp>(op))
      return origin(insert.getDest(), dim);
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      return origin(dps.getTiedOpOperand(cast<OpResult>(tensor))->get(), dim);
    return opaque;
  }

  /// Size `dim` of carried value `k` of `loop` (its result or its
  /// iter_arg): the initial one's when every iteration keeps it.
  Origin loopOrigin(scf::ForOp loop, unsigned k, int64_t dim,
                    const Origin &opaque) {
    Value carried = loop.getRegionIterArgs()[k];
    // While the loop's own body is traced, its carried value is where
    // sizes stop (the question is whether the yield keeps it).
    auto key = std::make_pair(carried, dim);
    cache[key] = Origin{carried, dim};
    Value yielded = loop.getBody()->getTerminator()->getOperand(k);
    bool kept = origin(yielded, dim) == Origin{carried, dim};
    Value init = loop.getInitArgs()[k];
    Origin found = kept ? origin(init, dim) : opaque;
    cache[key] = kept ? found : Origin{carried, dim};
    return found;
  }

  /// Whether `value` is defined outside `op` (so it dominates what follows).
  static bool definedAbove(Value value, Operation *op) {
    return !op->isAncestor(value.getParentRegion()->getParentOp());
  }

  DenseMap<std::pair<Value, int64_t>, Origin> cache;
};

/// Whether `value` is visible at `user` (defined in an enclosing block,
/// before it).
bool dominates(Value value, Operation *user) {
  if (!value.getParentRegion()->isAncestor(user->getParentRegion()))
    return false;
  Operation *def = value.getDefiningOp();
  if (!def)
    return true; // an argument of an enclosing (single) block
  Operation *ancestor = def->getBlock()->findAncestorOpInBlock(*user);
  return ancestor && def->isBeforeInBlock(ancestor);
}

struct SoacResolveDims
    : soac::impl::SoacResolveDimsBase<SoacResolveDims> {
  void runOnOperation() override {
    SmallVector<tensor::DimOp> dims;
    getOperation()->walk([&](tensor::DimOp dim) { dims.push_back(dim); });
    DimResolver resolver;
    // The dims replaced so far, erased at the end: an origin found earlier
    // may be one of them (the size a tensor.empty or a tensor.splat was
    // created with), and then stands for its replacement.
    DenseMap<Value, Value> replaced;
    for (tensor::DimOp dim : dims) {
      std::optional<int64_t> index = dim.getConstantIndex();
      if (!index)
        continue;
      Origin found = resolver.origin(dim.getSource(), *index);
      while (replaced.count(found.value) && found.dim < 0)
        found.value = replaced.lookup(found.value);
      if (found == Origin{dim.getSource(), *index} ||
          !dominates(found.value, dim))
        continue;
      Value size = found.value;
      if (found.dim >= 0) {
        OpBuilder b(dim);
        size = tensor::DimOp::create(b, dim.getLoc(), found.value, found.dim);
      }
      dim.replaceAllUsesWith(size);
      replaced[dim.getResult()] = size;
    }
    for (tensor::DimOp dim : dims)
      if (replaced.count(dim.getResult()))
        dim.erase();
  }
};

} // namespace
