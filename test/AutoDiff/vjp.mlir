// soac-autodiff: each soac.vjp becomes a call to a generated function that
// re-executes the forward code, then runs the rules in reverse order.
// RUN: soac-opt %s --soac-autodiff --canonicalize --cse --split-input-file | FileCheck %s

// CHECK-LABEL: func.func private @square__vjp_wrt_0(
// CHECK-SAME: %[[X:.*]]: f32, %[[SEED:.*]]: f32) -> (f32, f32)
// CHECK: %[[Y:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[A:.*]] = arith.mulf %[[SEED]], %[[X]] : f32
// CHECK: %[[G:.*]] = arith.addf %[[A]], %[[A]] : f32
// CHECK: return %[[Y]], %[[G]] : f32, f32
// CHECK-LABEL: func.func @grad_square
// CHECK: call @square__vjp_wrt_0
func.func @square(%x: f32) -> f32 {
  %y = arith.mulf %x, %x : f32
  return %y : f32
}
func.func @grad_square(%x: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %r:2 = soac.vjp @square(%x, %one) : (f32, f32) -> (f32, f32)
  return %r#1 : f32
}

// -----

// map: the adjoint map re-executes the body per row; the free scalar %w gets a
// per-row contribution summed by a reduce. The result's adjoint (the
// cotangent) does not depend on the result, so the adjoint map yields the
// result too and the forward code runs no map (Engine/ResultsFromAdjoint.h).
// CHECK-LABEL: func.func private @scaled__vjp_wrt_0_1(
// CHECK-SAME: %[[X:.*]]: tensor<?xf64>, %[[W:.*]]: f64, %[[C:.*]]: tensor<?xf64>)
// CHECK-NOT: soac.map
// CHECK: %[[ADJ:.*]]:3 = soac.map ins(%[[X]], %[[C]] : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>, tensor<?xf64>, tensor<?xf64>
// CHECK-NEXT: ^bb0(%[[V:.*]]: f64, %[[CV:.*]]: f64):
// CHECK-DAG: %[[Y:.*]] = arith.mulf %[[V]], %[[W]] : f64
// CHECK-DAG: %[[DX:.*]] = arith.mulf %[[CV]], %[[W]] : f64
// CHECK-DAG: %[[DW:.*]] = arith.mulf %[[CV]], %[[V]] : f64
// CHECK: soac.yield %[[DX]], %[[DW]], %[[Y]] : f64, f64, f64
// CHECK: %[[SUM:.*]] = soac.reduce ins(%[[ADJ]]#1 : tensor<?xf64>)
// CHECK: return %[[ADJ]]#2, %[[ADJ]]#0, %[[SUM]]
func.func @scaled(%x: tensor<?xf64>, %w: f64) -> tensor<?xf64> {
  %r = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%v: f64):
    %m = arith.mulf %v, %w : f64
    soac.yield %m : f64
  }
  return %r : tensor<?xf64>
}
func.func @d_scaled(%x: tensor<?xf64>, %w: f64, %c: tensor<?xf64>) -> (tensor<?xf64>, f64) {
  %r:3 = soac.vjp @scaled(%x, %w, %c) : (tensor<?xf64>, f64, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, f64)
  return %r#1, %r#2 : tensor<?xf64>, f64
}

// -----

// A free tensor read at data-dependent indices: one (index, value) per read,
// scattered by reduce_by_index (+) into zeros; never a dense tensor per row.
// Here the per-read map yields its value unchanged, and canonicalize
// forwards it: the scatter reads the cotangent directly, and the indices as
// the read checks them (a gradient fails where its primal does). The gather
// keeps its forward run: an adjoint map that also yielded the result would
// store its reads' batches rather than scatter them row by row.
// CHECK-LABEL: func.func private @gather__vjp_wrt_0(
// CHECK-SAME: %[[X:.*]]: tensor<?xf64>, %[[IDX:.*]]: tensor<?xindex>, %[[C:.*]]: tensor<?xf64>)
// CHECK: %[[CHECKED:.*]] = soac.map ins(%[[IDX]] : tensor<?xindex>) -> tensor<?xindex>
// CHECK: soac.check_index %{{.*}} below %{{.*}}, "'tensor.extract' dimension 0"
// CHECK: %[[ZEROS:.*]] = tensor.splat %{{.*}}[%{{.*}}] : tensor<?xf64>
// CHECK: %[[DX:.*]] = soac.reduce_by_index dest(%[[ZEROS]] : tensor<?xf64>) indices(%[[CHECKED]] : tensor<?xindex>) ins(%[[C]] : tensor<?xf64>)
// CHECK: arith.addf
// CHECK: return %{{.*}}, %[[DX]]
func.func @gather(%x: tensor<?xf64>, %idx: tensor<?xindex>) -> tensor<?xf64> {
  %r = soac.map ins(%idx : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<?xf64>
    soac.yield %v : f64
  }
  return %r : tensor<?xf64>
}
func.func @d_gather(%x: tensor<?xf64>, %idx: tensor<?xindex>, %c: tensor<?xf64>) -> tensor<?xf64> {
  %r:2 = soac.vjp @gather(%x, %idx, %c) wrt [0] : (tensor<?xf64>, tensor<?xindex>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}

// -----

// reduce (+): every element gets the adjoint of the result (a replicating map).
// CHECK-LABEL: func.func private @total__vjp_wrt_0(
// CHECK-SAME: %[[X:.*]]: tensor<?xf32>, %[[SEED:.*]]: f32)
// CHECK: %[[DX:.*]] = soac.map ins(%[[X]] : tensor<?xf32>) -> tensor<?xf32>
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: soac.yield %[[SEED]] : f32
// CHECK: return %{{.*}}, %[[DX]]
func.func @total(%x: tensor<?xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %s = soac.reduce ins(%x : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  return %s : f32
}
func.func @d_total(%x: tensor<?xf32>) -> tensor<?xf32> {
  %one = arith.constant 1.0 : f32
  %r:2 = soac.vjp @total(%x, %one) : (tensor<?xf32>, f32) -> (f32, tensor<?xf32>)
  return %r#1 : tensor<?xf32>
}

// -----

// A call is differentiated by calling the callee's vjp function (which
// re-executes the callee); a branch by a branch on the same condition, each
// side re-executed then swept (canonicalize merges it with the forward one).
// CHECK-LABEL: func.func private @inner__vjp_wrt_0(
// CHECK-LABEL: func.func private @outer__vjp_wrt_0_1(
// CHECK-SAME: %[[X:[^:]*]]: f64, %[[Y:[^:]*]]: f64, %[[SEED:[^:]*]]: f64)
// CHECK: %[[COND:.*]] = arith.cmpf ogt, %[[X]]
// CHECK: scf.if %[[COND]] -> (f64, f64, f64)
// CHECK: %[[DE:.*]] = arith.mulf %[[SEED]], %[[Y]] : f64
// CHECK: call @inner__vjp_wrt_0(%[[X]], %[[DE]])
// CHECK: } else {
// CHECK-DAG: arith.mulf %[[SEED]], %[[Y]] : f64
// CHECK-DAG: arith.mulf %[[SEED]], %[[X]] : f64
func.func @inner(%x: f64) -> f64 {
  %e = math.exp %x : f64
  return %e : f64
}
func.func @outer(%x: f64, %y: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c = arith.cmpf ogt, %x, %zero : f64
  %r = scf.if %c -> (f64) {
    %e = func.call @inner(%x) : (f64) -> f64
    %m = arith.mulf %e, %y : f64
    scf.yield %m : f64
  } else {
    %m = arith.mulf %x, %y : f64
    scf.yield %m : f64
  }
  return %r : f64
}
func.func @d_outer(%x: f64, %y: f64) -> (f64, f64) {
  %one = arith.constant 1.0 : f64
  %r:3 = soac.vjp @outer(%x, %y, %one) : (f64, f64, f64) -> (f64, f64, f64)
  return %r#1, %r#2 : f64, f64
}

// -----

// Vector mode: two cotangents share the forward sweep (one exp); the return
// sweep runs once per lane.
// CHECK-LABEL: func.func private @scale__vjp_x2_wrt_0(
// CHECK-SAME:    %[[X:.*]]: f64, %[[W:.*]]: f64, %[[C0:.*]]: f64, %[[C1:.*]]: f64) -> (f64, f64, f64)
// CHECK:         %[[Y:.*]] = arith.mulf %[[X]], %[[W]]
// CHECK:         %[[E:.*]] = math.exp %[[Y]]
// CHECK-NOT:     math.exp
// CHECK:         %[[B0:.*]] = arith.mulf %[[C0]], %[[E]]
// CHECK:         %[[B1:.*]] = arith.mulf %[[C1]], %[[E]]
// CHECK:         %[[G0:.*]] = arith.mulf %[[B0]], %[[W]]
// CHECK:         %[[G1:.*]] = arith.mulf %[[B1]], %[[W]]
// CHECK:         return %[[E]], %[[G0]], %[[G1]]
func.func @scale(%x: f64, %w: f64) -> f64 {
  %y = arith.mulf %x, %w : f64
  %e = math.exp %y : f64
  return %e : f64
}
func.func @d_scale(%x: f64, %w: f64, %c0: f64, %c1: f64) -> (f64, f64) {
  %r:3 = soac.vjp @scale(%x, %w, %c0, %c1) wrt [0] width 2 : (f64, f64, f64, f64) -> (f64, f64, f64)
  return %r#1, %r#2 : f64, f64
}

// -----

// Above 8 lanes: one body of 8 cotangent lanes, called per chunk of 8.
// CHECK-LABEL: func.func private @scale9__vjp_x9_wrt_0(
// CHECK-SAME:    %[[X:[^:]*]]: f64, %[[W:[^:]*]]: f64, %[[C0:[^:]*]]: f64, {{.*}}, %[[C8:[^:]*]]: f64)
// CHECK:         %[[A:.*]]:9 = call @scale9__vjp_x8_wrt_0(%[[X]], %[[W]], %[[C0]], {{.*}}) {no_inline}
// CHECK:         %[[B:.*]]:9 = call @scale9__vjp_x8_wrt_0(%[[X]], %[[W]], %[[C8]], %[[C8]], %[[C8]], %[[C8]], %[[C8]], %[[C8]], %[[C8]], %[[C8]]) {no_inline}
// CHECK:         return %[[A]]#0, %[[A]]#1, {{.*}}, %[[A]]#8, %[[B]]#1 :
func.func @scale9(%x: f64, %w: f64) -> f64 {
  %y = arith.mulf %x, %w : f64
  %e = math.exp %y : f64
  return %e : f64
}
func.func @d_scale9(%x: f64, %w: f64, %c: f64) -> (f64, f64) {
  %r:10 = soac.vjp @scale9(%x, %w, %c, %c, %c, %c, %c, %c, %c, %c, %c) wrt [0] width 9 : (f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64) -> (f64, f64, f64, f64, f64, f64, f64, f64, f64, f64)
  return %r#1, %r#9 : f64, f64
}

// -----

// An elementwise max of vector rows: per column, the first row holding the
// maximum (a reduce of row indices with an elementwise minui) gets ȳ.
// CHECK-LABEL: func.func private @column_max__vjp_wrt_0(
// CHECK:         soac.reduce
// CHECK:           arith.minui
// CHECK:         arith.cmpi eq
// CHECK:         arith.select
func.func @column_max(%m: tensor<?x3xf64>, %init: tensor<3xf64>) -> tensor<3xf64> {
  %r = soac.reduce ins(%m : tensor<?x3xf64>) init(%init : tensor<3xf64>) -> tensor<3xf64> {
  ^bb0(%a: tensor<3xf64>, %b: tensor<3xf64>):
    %c = soac.map ins(%a, %b : tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64> {
    ^bb0(%x: f64, %y: f64):
      %t = arith.maximumf %x, %y : f64
      soac.yield %t : f64
    }
    soac.yield %c : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
func.func @d_column_max(%m: tensor<?x3xf64>, %init: tensor<3xf64>, %c: tensor<3xf64>) -> tensor<?x3xf64> {
  %r:2 = soac.vjp @column_max(%m, %init, %c) wrt [0] : (tensor<?x3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<?x3xf64>)
  return %r#1 : tensor<?x3xf64>
}

// -----

// A loop of the forward code records its checkpoints itself: the value comes
// from the recording run, and the loop runs forward once, not twice.
// CHECK-LABEL: func.func private @iterate__vjp_wrt_0
// CHECK-NOT: scf.for
// CHECK: %[[LOOP:.*]]:2 = scf.for {{.*}} -> (f64, tensor<?xf64>)
// CHECK: tensor.insert
// CHECK: math.sin
// CHECK: %[[BACK:.*]] = scf.for
// CHECK: tensor.extract %[[LOOP]]#1
// CHECK: math.cos
// CHECK-NOT: scf.for
// CHECK: return %[[LOOP]]#0, %[[BACK]] : f64, f64
func.func private @iterate(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%v = %x) -> (f64) {
    %s = math.sin %v : f64
    scf.yield %s : f64
  }
  return %r : f64
}

func.func @value_and_gradient(%x: f64, %n: index) -> (f64, f64) {
  %one = arith.constant 1.0 : f64
  %g:2 = soac.vjp @iterate(%x, %n, %one) wrt [0] : (f64, index, f64) -> (f64, f64)
  return %g#0, %g#1 : f64, f64
}

// -----

// Reshapes move elements: the adjoint of a collapse_shape is the seed
// expanded back to the source's sizes, and that of an expand_shape is the
// seed collapsed (so a vjp of a vjp of a 2-D gather has every rule it needs).
// CHECK-LABEL: func.func private @flatten__vjp_wrt_0(
// CHECK-SAME: %[[X:.*]]: tensor<?x?xf32>, %[[SEED:.*]]: tensor<?xf32>)
// CHECK-DAG: %[[R:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[C:.*]] = tensor.dim %[[X]], %c1
// CHECK: tensor.expand_shape %[[SEED]] {{\[}}[0, 1]] output_shape [%[[R]], %[[C]]] : tensor<?xf32> into tensor<?x?xf32>
// CHECK-LABEL: func.func private @unflatten__vjp_wrt_0(
// CHECK-SAME: %[[X:.*]]: tensor<?xf32>, %{{.*}}: index, %{{.*}}: index, %[[SEED:.*]]: tensor<?x?xf32>)
// CHECK: tensor.collapse_shape %[[SEED]] {{\[}}[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
func.func @flatten(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %f = tensor.collapse_shape %x [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  return %f : tensor<?xf32>
}
func.func @grad_flatten(%x: tensor<?x?xf32>, %seed: tensor<?xf32>) -> tensor<?x?xf32> {
  %r:2 = soac.vjp @flatten(%x, %seed) : (tensor<?x?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?x?xf32>)
  return %r#1 : tensor<?x?xf32>
}
func.func @unflatten(%x: tensor<?xf32>, %rows: index, %cols: index) -> tensor<?x?xf32> {
  %e = tensor.expand_shape %x [[0, 1]] output_shape [%rows, %cols] : tensor<?xf32> into tensor<?x?xf32>
  return %e : tensor<?x?xf32>
}
func.func @grad_unflatten(%x: tensor<?xf32>, %rows: index, %cols: index, %seed: tensor<?x?xf32>) -> tensor<?xf32> {
  %r:2 = soac.vjp @unflatten(%x, %rows, %cols, %seed) {wrt = array<i64: 0>} : (tensor<?xf32>, index, index, tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>)
  return %r#1 : tensor<?xf32>
}
