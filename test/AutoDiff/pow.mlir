// y = x^p (math.powf): the partials p·x^(p-1) and y·log x, made finite where
// those formulas give NaN for a finite derivative: ∂y/∂x = 0 where p = 0,
// ∂y/∂p = 0 where y = 0 (x = 0, p > 0). The same in both modes.
// RUN: soac-opt %s --soac-autodiff --canonicalize --cse | FileCheck %s

// CHECK-LABEL: func.func private @power__jvp_wrt_0_1(
// CHECK-SAME: %[[X:.*]]: f64, %[[P:.*]]: f64, %[[TX:.*]]: f64, %[[TP:.*]]: f64)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK-DAG: %[[Y:.*]] = math.powf %[[X]], %[[P]] : f64
// CHECK: %[[LOWER:.*]] = math.powf %[[X]], %{{.*}} : f64
// CHECK: %[[CONSTANT:.*]] = arith.cmpf oeq, %[[P]], %[[ZERO]] : f64
// CHECK: %[[SCALED:.*]] = arith.mulf %[[P]], %[[LOWER]] : f64
// CHECK: %[[DX:.*]] = arith.select %[[CONSTANT]], %[[ZERO]], %[[SCALED]] : f64
// CHECK: %[[VANISHES:.*]] = arith.cmpf oeq, %[[Y]], %[[ZERO]] : f64
// CHECK: %[[LOG:.*]] = math.log %[[X]] : f64
// CHECK: %[[YLOG:.*]] = arith.mulf %[[Y]], %[[LOG]] : f64
// CHECK: %[[DP:.*]] = arith.select %[[VANISHES]], %[[ZERO]], %[[YLOG]] : f64
// CHECK-DAG: arith.mulf %[[TP]], %[[DP]] : f64
// CHECK-DAG: arith.mulf %[[TX]], %[[DX]] : f64

// CHECK-LABEL: func.func private @power__vjp_wrt_0_1(
// CHECK-SAME: %[[X:.*]]: f64, %[[P:.*]]: f64, %[[S:.*]]: f64)
// CHECK: %[[DX:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f64
// CHECK: %[[DP:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : f64
// CHECK: %[[GX:.*]] = arith.mulf %[[S]], %[[DX]] : f64
// CHECK: %[[GP:.*]] = arith.mulf %[[S]], %[[DP]] : f64
// CHECK: return %{{.*}}, %[[GX]], %[[GP]]
func.func @power(%x: f64, %p: f64) -> f64 {
  %y = math.powf %x, %p : f64
  return %y : f64
}
func.func @d_power(%x: f64, %p: f64, %s: f64) -> (f64, f64) {
  %r:3 = soac.vjp @power(%x, %p, %s) : (f64, f64, f64) -> (f64, f64, f64)
  return %r#1, %r#2 : f64, f64
}
func.func @t_power(%x: f64, %p: f64, %tx: f64, %tp: f64) -> f64 {
  %r:2 = soac.jvp @power(%x, %p, %tx, %tp) : (f64, f64, f64, f64) -> (f64, f64)
  return %r#1 : f64
}
