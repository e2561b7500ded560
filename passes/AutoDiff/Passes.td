//===- Passes.td - soac-autodiff ---------------------------*- tablegen -*-===//
//
// The derivative ops expanded into generated functions (AutoDiff.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_AUTODIFF_PASSES_TD
#define SOAC_PASSES_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def SoacAutodiff : Pass<"soac-autodiff", "mlir::ModuleOp"> {
  let summary = "Expand soac.vjp into functions computing reverse-mode derivatives";
  let description = [{
    Replaces each `soac.vjp @f(args..., cotangents...) wrt [...]` by a call to
    a generated private function `@f__vjp_wrt_<positions>` returning `@f`'s
    results and the gradients of the `wrt` arguments. Functions called by `@f`
    are differentiated the same way, on demand. A soac.vjp inside a
    differentiated function is expanded in turn (up to a fixed depth).

    No tape: the generated function re-executes the forward code of each
    scope (function body, SOAC body, branch) when its return sweep enters it,
    then runs the rules of its ops in reverse order. Each op's rule comes from
    its `ReverseModeOpInterface` (attached to arith, math, tensor, func, scf
    and soac ops); an op without a rule is an error at its location.
    canonicalize and cse afterwards remove the re-executed code nothing uses.
    A map's run in that forward code also yields, per row, the values of
    its body's math functions (exp, tanh, log, ...) and of nested SOACs that
    do more than arithmetic, which its adjoint map reads (with the values
    the body yields) instead of computing them again.

    Loops keep one checkpoint of their carried values per iteration,
    recorded by the loop's run in the re-executed forward code (which then
    runs the loop once). With
    `checkpoint-levels=k` (every loop) or `soac.checkpoint_levels = k : i64`
    on an scf.for, the loop is first strip-mined into k nested loops of about
    N^(1/k) iterations each: memory about k·N^(1/k) checkpoints instead of N,
    for re-executing the inner levels once more.

    With `width k` (vector mode) a derivative has k lanes. Up to 8 lanes
    share one body; a derivative of more lanes calls the one of 8 lanes
    once per chunk of 8 (`no_inline`, the last chunk padded with copies of
    its last lane), so that its code stays the size of 8 lanes at any width.

    ```mlir
    // before
    %r:2 = soac.vjp @square(%x, %seed) : (f32, f32) -> (f32, f32)
    // after
    %r:2 = call @square__vjp_wrt_0(%x, %seed) : (f32, f32) -> (f32, f32)
    func.func private @square__vjp_wrt_0(%x: f32, %seed: f32) -> (f32, f32) {
      %y = arith.mulf %x, %x : f32          // re-executed forward code
      %a = arith.mulf %seed, %x : f32       // the rule of mulf, twice
      %b = arith.mulf %seed, %x : f32
      %g = arith.addf %a, %b : f32
      return %y, %g : f32, f32
    }
    ```
  }];
  let options = [
    Option<"checkpointLevels", "checkpoint-levels", "int64_t", /*default=*/"1",
           "Strip-mine every scf.for of a differentiated function into this "
           "many levels of checkpoints (1: one checkpoint per iteration)">,
    Option<"mixedMode", "mixed-mode", "bool", /*default=*/"false",
           "Differentiate every soac.map whose body maps scalars to scalars "
           "in mixed mode: its partials by forward mode, in the adjoint map, "
           "with no reverse sweep of the body (a map's `soac.mixed_mode` "
           "bool attribute overrides this)">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::func::FuncDialect",
    "mlir::math::MathDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect", "soac::SoacDialect",
  ];
}

#endif // SOAC_PASSES_AUTODIFF_PASSES_TD
