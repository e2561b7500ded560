// soac-autodiff: each soac.jvp becomes a call to a generated function that
// computes every value's primal and tangent in one forward sweep.
// RUN: soac-opt %s --soac-autodiff --canonicalize --cse --split-input-file | FileCheck %s

// CHECK-LABEL: func.func private @product__jvp_wrt_0(
// CHECK-SAME:    %[[X:.*]]: f64, %[[Y:.*]]: f64, %[[TX:.*]]: f64) -> (f64, f64)
// CHECK:         %[[P:.*]] = arith.mulf %[[X]], %[[Y]]
// CHECK:         %[[TP:.*]] = arith.mulf %[[TX]], %[[Y]]
// CHECK:         %[[S:.*]] = math.sin %[[P]]
// CHECK:         %[[C:.*]] = math.cos %[[P]]
// CHECK:         %[[TS:.*]] = arith.mulf %[[TP]], %[[C]]
// CHECK:         return %[[S]], %[[TS]]
// CHECK-LABEL: func.func @d_product(
// CHECK:         call @product__jvp_wrt_0(
func.func @product(%x: f64, %y: f64) -> f64 {
  %p = arith.mulf %x, %y : f64
  %s = math.sin %p : f64
  return %s : f64
}
func.func @d_product(%x: f64, %y: f64, %tx: f64) -> (f64, f64) {
  %r:2 = soac.jvp @product(%x, %y, %tx) wrt [0] : (f64, f64, f64) -> (f64, f64)
  return %r#0, %r#1 : f64, f64
}

// -----

// A map takes the tangent rows as extra inputs; a reduce runs its operator on
// (primal, tangent) pairs from (init, 0); max picks the tangent of the chosen
// operand.
// CHECK-LABEL: func.func private @sum_scaled__jvp_wrt_0_1(
// CHECK-SAME:    %[[X:.*]]: tensor<?xf64>, %[[W:.*]]: f64, %[[TX:.*]]: tensor<?xf64>, %[[TW:.*]]: f64)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.0
// CHECK:         %[[M:.*]]:2 = soac.map ins(%[[X]], %[[TX]] : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64>
// CHECK:         ^bb0(%[[V:.*]]: f64, %[[TV:.*]]: f64):
// CHECK-DAG:       arith.mulf %[[V]], %[[TW]]
// CHECK-DAG:       arith.mulf %[[TV]], %[[W]]
// CHECK:         %[[R:.*]]:2 = soac.reduce ins(%[[M]]#0, %[[M]]#1 : tensor<?xf64>, tensor<?xf64>) init(%[[ZERO]], %[[ZERO]] : f64, f64) -> f64, f64
// CHECK:         ^bb0(%[[A:.*]]: f64, %[[TA:.*]]: f64, %[[B:.*]]: f64, %[[TB:.*]]: f64):
// CHECK:           %[[MAX:.*]] = arith.maximumf %[[A]], %[[B]]
// CHECK:           %[[LEFT:.*]] = arith.cmpf oge, %[[A]], %[[B]]
// CHECK:           %[[T:.*]] = arith.select %[[LEFT]], %[[TA]], %[[TB]]
// CHECK:           soac.yield %[[MAX]], %[[T]]
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @sum_scaled(%x: tensor<?xf64>, %w: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %m = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %p = arith.mulf %v, %w : f64
    soac.yield %p : f64
  }
  %r = soac.reduce ins(%m : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.maximumf %a, %b : f64
    soac.yield %t : f64
  }
  return %r : f64
}
func.func @d_sum_scaled(%x: tensor<?xf64>, %w: f64, %tx: tensor<?xf64>, %tw: f64) -> f64 {
  %r:2 = soac.jvp @sum_scaled(%x, %w, %tx, %tw) : (tensor<?xf64>, f64, tensor<?xf64>, f64) -> (f64, f64)
  return %r#1 : f64
}

// -----

// A loop carries the tangent next to the carried value (from 0).
// CHECK-LABEL: func.func private @power__jvp_wrt_0(
// CHECK-SAME:    %[[X:.*]]: f64, %[[N:.*]]: index, %[[T:.*]]: f64)
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1.0
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.0
// CHECK:         %[[R:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[ONE]], %[[TACC:.*]] = %[[ZERO]]) -> (f64, f64)
// CHECK:           %[[NEXT:.*]] = arith.mulf %[[ACC]], %[[X]]
// CHECK:           %[[A:.*]] = arith.mulf %[[ACC]], %[[T]]
// CHECK:           %[[B:.*]] = arith.mulf %[[TACC]], %[[X]]
// CHECK:           %[[TNEXT:.*]] = arith.addf %[[B]], %[[A]]
// CHECK:           scf.yield %[[NEXT]], %[[TNEXT]]
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @power(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %one) -> (f64) {
    %next = arith.mulf %acc, %x : f64
    scf.yield %next : f64
  }
  return %r : f64
}
func.func @d_power(%x: f64, %n: index, %t: f64) -> f64 {
  %r:2 = soac.jvp @power(%x, %n, %t) wrt [0] : (f64, index, f64) -> (f64, f64)
  return %r#1 : f64
}

// -----

// Each branch yields its tangents; a call calls the callee's jvp.
// CHECK-LABEL: func.func private @relu__jvp_wrt_0(
// CHECK-SAME:    %[[X:.*]]: f64, %[[T:.*]]: f64)
// CHECK:         %[[R:.*]]:2 = scf.if %{{.*}} -> (f64, f64) {
// CHECK:           %[[S:.*]] = math.sin %[[X]]
// CHECK:           %[[C:.*]] = math.cos %[[X]]
// CHECK:           %[[TS:.*]] = arith.mulf %[[T]], %[[C]]
// CHECK:           scf.yield %[[S]], %[[TS]]
// CHECK:         } else {
// CHECK:           scf.yield %[[ZERO:.*]], %[[ZERO]]
// CHECK-LABEL: func.func private @twice__jvp_wrt_0(
// CHECK:         %[[R:.*]]:2 = call @relu__jvp_wrt_0(
// CHECK:         arith.addf %[[R]]#1, %[[R]]#1
func.func @relu(%x: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c = arith.cmpf ogt, %x, %zero : f64
  %r = scf.if %c -> (f64) {
    %s = math.sin %x : f64
    scf.yield %s : f64
  } else {
    scf.yield %zero : f64
  }
  return %r : f64
}
func.func @twice(%x: f64) -> f64 {
  %a = func.call @relu(%x) : (f64) -> f64
  %b = arith.addf %a, %a : f64
  return %b : f64
}
func.func @d_twice(%x: f64, %t: f64) -> f64 {
  %r:2 = soac.jvp @twice(%x, %t) : (f64, f64) -> (f64, f64)
  return %r#1 : f64
}

// -----

// Forward over reverse: the jvp of a function holding a vjp differentiates
// the generated vjp function (the constant cotangent is inactive).
// CHECK-LABEL: func.func private @cube__vjp_wrt_0(
// CHECK-LABEL: func.func private @cube__vjp_wrt_0__jvp_wrt_0(
// CHECK-SAME:    %{{.*}}: f64, %{{.*}}: f64, %{{.*}}: f64) -> (f64, f64, f64, f64)
// CHECK-LABEL: func.func private @gradient__jvp_wrt_0(
// CHECK:         %[[R:.*]]:4 = call @cube__vjp_wrt_0__jvp_wrt_0(
// CHECK:         return %[[R]]#1, %[[R]]#3
func.func @cube(%x: f64) -> f64 {
  %x2 = arith.mulf %x, %x : f64
  %x3 = arith.mulf %x2, %x : f64
  return %x3 : f64
}
func.func @gradient(%x: f64) -> f64 {
  %one = arith.constant 1.0 : f64
  %r:2 = soac.vjp @cube(%x, %one) : (f64, f64) -> (f64, f64)
  return %r#1 : f64
}
func.func @hessian_vector(%x: f64, %v: f64) -> f64 {
  %r:2 = soac.jvp @gradient(%x, %v) : (f64, f64) -> (f64, f64)
  return %r#1 : f64
}

// -----

// Vector mode: two tangent lanes from one pass; the primal is computed once.
// CHECK-LABEL: func.func private @scale__jvp_x2_wrt_0(
// CHECK-SAME:    %[[X:.*]]: f64, %[[W:.*]]: f64, %[[T0:.*]]: f64, %[[T1:.*]]: f64) -> (f64, f64, f64)
// CHECK:         %[[Y:.*]] = arith.mulf %[[X]], %[[W]]
// CHECK:         %[[Y0:.*]] = arith.mulf %[[T0]], %[[W]]
// CHECK:         %[[Y1:.*]] = arith.mulf %[[T1]], %[[W]]
// CHECK:         %[[E:.*]] = math.exp %[[Y]]
// CHECK-NOT:     math.exp
// CHECK:         %[[E0:.*]] = arith.mulf %[[Y0]], %[[E]]
// CHECK:         %[[E1:.*]] = arith.mulf %[[Y1]], %[[E]]
// CHECK:         return %[[E]], %[[E0]], %[[E1]]
func.func @scale(%x: f64, %w: f64) -> f64 {
  %y = arith.mulf %x, %w : f64
  %e = math.exp %y : f64
  return %e : f64
}
func.func @d_scale(%x: f64, %w: f64, %t0: f64, %t1: f64) -> (f64, f64) {
  %r:3 = soac.jvp @scale(%x, %w, %t0, %t1) wrt [0] width 2 : (f64, f64, f64, f64) -> (f64, f64, f64)
  return %r#1, %r#2 : f64, f64
}

// -----

// Above 8 lanes, one body of 8 lanes is called per chunk of 8 (compiled once
// for any width); the last chunk repeats its last lane, whose results are
// dropped; the primal comes from the first call.
// CHECK-LABEL: func.func private @scale__jvp_x8_wrt_0(
// CHECK-COUNT-8: arith.mulf %{{.*}}, %{{.*}} : f64
// CHECK-NOT:     call
// CHECK-LABEL: func.func private @scale__jvp_x10_wrt_0(
// CHECK-SAME:    %[[X:[^:]*]]: f64, %[[W:[^:]*]]: f64, %[[T0:[^:]*]]: f64, %{{[^:]*}}: f64, %{{[^:]*}}: f64, %{{[^:]*}}: f64, %{{[^:]*}}: f64, %{{[^:]*}}: f64, %{{[^:]*}}: f64, %[[T7:[^:]*]]: f64, %[[T8:[^:]*]]: f64, %[[T9:[^:]*]]: f64)
// CHECK:         %[[A:.*]]:9 = call @scale__jvp_x8_wrt_0(%[[X]], %[[W]], %[[T0]], {{.*}}, %[[T7]]) {no_inline}
// CHECK:         %[[B:.*]]:9 = call @scale__jvp_x8_wrt_0(%[[X]], %[[W]], %[[T8]], %[[T9]], %[[T9]], %[[T9]], %[[T9]], %[[T9]], %[[T9]], %[[T9]]) {no_inline}
// CHECK:         return %[[A]]#0, %[[A]]#1, %[[A]]#2, %[[A]]#3, %[[A]]#4, %[[A]]#5, %[[A]]#6, %[[A]]#7, %[[A]]#8, %[[B]]#1, %[[B]]#2 :
func.func @scale(%x: f64, %w: f64) -> f64 {
  %y = arith.mulf %x, %w : f64
  %e = math.exp %y : f64
  return %e : f64
}
func.func @d_scale(%x: f64, %w: f64, %t0: f64, %t1: f64, %t2: f64, %t3: f64, %t4: f64, %t5: f64, %t6: f64, %t7: f64, %t8: f64, %t9: f64) -> (f64, f64) {
  %r:11 = soac.jvp @scale(%x, %w, %t0, %t1, %t2, %t3, %t4, %t5, %t6, %t7, %t8, %t9) wrt [0] width 10 : (f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64) -> (f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64)
  return %r#1, %r#10 : f64, f64
}
