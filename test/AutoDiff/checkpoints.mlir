// A loop keeps one checkpoint per iteration; soac.checkpoint_levels = 2 (or the
// pass option checkpoint-levels) first strip-mines it into blocks of about
// N^(1/levels) iterations, so that each level of the backward sweep keeps about
// N^(1/levels) checkpoints.
// RUN: soac-opt %s --soac-autodiff --canonicalize | FileCheck %s
// RUN: soac-opt %s --soac-autodiff=checkpoint-levels=3 --canonicalize | FileCheck %s --check-prefix=THREE

// CHECK-LABEL: func.func @marked
// CHECK: %[[ROOT:.*]] = math.powf %{{.*}}, %cst{{.*}} : f64
// CHECK: %[[UP:.*]] = math.ceil %[[ROOT]]
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: math.sin
// CHECK-LABEL: func.func @plain
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: math.sin

// THREE-LABEL: func.func @plain
// THREE: scf.for
// THREE: scf.for
// THREE: scf.for
// THREE: math.sin
func.func @marked(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%v = %x) -> (f64) {
    %s = math.sin %v : f64
    scf.yield %s : f64
  } {soac.checkpoint_levels = 2 : i64}
  return %r : f64
}

func.func @plain(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%v = %x) -> (f64) {
    %s = math.sin %v : f64
    scf.yield %s : f64
  }
  return %r : f64
}

func.func @grads(%x: f64, %n: index) -> (f64, f64) {
  %one = arith.constant 1.0 : f64
  %a:2 = soac.vjp @marked(%x, %n, %one) wrt [0] : (f64, index, f64) -> (f64, f64)
  %b:2 = soac.vjp @plain(%x, %n, %one) wrt [0] : (f64, index, f64) -> (f64, f64)
  return %a#1, %b#1 : f64, f64
}
