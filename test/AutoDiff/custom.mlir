// Functions that name their own derivatives (soac.custom_vjp,
// soac.custom_jvp): soac-autodiff calls them instead of differentiating the
// body.
// RUN: soac-opt %s --soac-autodiff --canonicalize --cse | FileCheck %s

// (Generated functions come right after @angle, the last one first.)
// A jvp with respect to y only gives x a zero tangent; two lanes, two calls.
// CHECK-LABEL: func.func private @angle__jvp_x2_wrt_0(
// CHECK-SAME:    %[[Y:.*]]: f64, %[[X:.*]]: f64, %[[N:.*]]: index, %[[T0:.*]]: f64, %[[T1:.*]]: f64) -> (f64, f64, f64)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.0
// CHECK:         %[[A:.*]]:2 = call @angle_jvp(%[[Y]], %[[X]], %[[N]], %[[T0]], %[[ZERO]])
// CHECK:         %[[B:.*]]:2 = call @angle_jvp(%[[Y]], %[[X]], %[[N]], %[[T1]], %[[ZERO]])
// CHECK:         return %[[A]]#0, %[[A]]#1, %[[B]]#1
// The vjp with respect to x only picks the custom vjp's second gradient.
// CHECK-LABEL: func.func private @angle__vjp_wrt_1(
// CHECK-SAME:    %[[Y:.*]]: f64, %[[X:.*]]: f64, %[[N:.*]]: index, %[[BAR:.*]]: f64) -> (f64, f64)
// CHECK:         %[[R:.*]]:3 = call @angle_vjp(%[[Y]], %[[X]], %[[N]], %[[BAR]])
// CHECK:         return %[[R]]#0, %[[R]]#2
// atan2 has no derivative rule; the function provides both.
func.func @angle(%y: f64, %x: f64, %n: index) -> f64 attributes {soac.custom_vjp = @angle_vjp, soac.custom_jvp = @angle_jvp} {
  %a = math.atan2 %y, %x : f64
  return %a : f64
}

// ∂/∂y = x / r², ∂/∂x = -y / r²
func.func @angle_vjp(%y: f64, %x: f64, %n: index, %bar: f64) -> (f64, f64, f64) {
  %a = math.atan2 %y, %x : f64
  %yy = arith.mulf %y, %y : f64
  %xx = arith.mulf %x, %x : f64
  %r2 = arith.addf %yy, %xx : f64
  %s = arith.divf %bar, %r2 : f64
  %dy = arith.mulf %s, %x : f64
  %t = arith.mulf %s, %y : f64
  %dx = arith.negf %t : f64
  return %a, %dy, %dx : f64, f64, f64
}

func.func @angle_jvp(%y: f64, %x: f64, %n: index, %ty: f64, %tx: f64) -> (f64, f64) {
  %a = math.atan2 %y, %x : f64
  %yy = arith.mulf %y, %y : f64
  %xx = arith.mulf %x, %x : f64
  %r2 = arith.addf %yy, %xx : f64
  %p = arith.mulf %x, %ty : f64
  %q = arith.mulf %y, %tx : f64
  %d = arith.subf %p, %q : f64
  %t = arith.divf %d, %r2 : f64
  return %a, %t : f64, f64
}

func.func @d_angle_dx(%y: f64, %x: f64, %n: index) -> f64 {
  %one = arith.constant 1.0 : f64
  %r:2 = soac.vjp @angle(%y, %x, %n, %one) wrt [1] : (f64, f64, index, f64) -> (f64, f64)
  return %r#1 : f64
}

func.func @angle_lanes(%y: f64, %x: f64, %n: index, %t0: f64, %t1: f64) -> (f64, f64) {
  %r:3 = soac.jvp @angle(%y, %x, %n, %t0, %t1) wrt [0] width 2 : (f64, f64, index, f64, f64) -> (f64, f64, f64)
  return %r#1, %r#2 : f64, f64
}
