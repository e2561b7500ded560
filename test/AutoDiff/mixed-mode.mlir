// soac-autodiff's mixed mode: a map whose body maps scalars to scalars gets
// its partials by forward mode (one tangent lane per active input) inside the
// adjoint map; the branches of the body run once, with no reverse sweep.
// RUN: soac-opt %s --split-input-file --soac-autodiff=mixed-mode=true --inline --soac-simplify --canonicalize --cse | FileCheck %s
// RUN: soac-opt %s --split-input-file --soac-autodiff=mixed-mode=true --inline --soac-simplify --canonicalize --cse --convert-soac-to-loops --canonicalize --cse | FileCheck %s --check-prefix=LOOPS

// The HM-LSTM cell update c' = z==1 ? σ(i)·tanh(g) : (zb==0 ? c : σ(f)·c + σ(i)·tanh(g)),
// differentiated with respect to c, f, i and g.
// CHECK-LABEL: func.func @hm_lstm_gradient(
// CHECK-SAME:    %{{.*}}: tensor<?xf32>, %{{.*}}: tensor<?xf32>, %{{.*}}: tensor<?xf32>, %{{.*}}: tensor<?xf32>, %{{.*}}: tensor<?xf32>, %{{.*}}: tensor<?xf32>, %[[BAR:.*]]: tensor<?xf32>)
// CHECK:         %[[ADJ:.*]]:4 = soac.map ins({{.*}}, %[[BAR]] :
// CHECK:         ^bb0({{.*}}, %[[B:.*]]: f32):
// The partials of the four inputs, from one nest of branches ...
// CHECK:           %[[P:.*]]:4 = scf.if %{{.*}} -> (f32, f32, f32, f32) {
// CHECK:             scf.if %{{.*}} -> (f32, f32, f32, f32) {
// CHECK-NOT:       scf.if
// ... times the result's adjoint.
// CHECK:           %[[DC:.*]] = arith.mulf %[[B]], %[[P]]#0
// CHECK:           %[[DF:.*]] = arith.mulf %[[B]], %[[P]]#1
// CHECK:           %[[DI:.*]] = arith.mulf %[[B]], %[[P]]#2
// CHECK:           %[[DG:.*]] = arith.mulf %[[B]], %[[P]]#3
// CHECK:           soac.yield %[[DC]], %[[DF]], %[[DI]], %[[DG]]
// CHECK-NOT:     soac.map
// CHECK:         return %[[ADJ]]#0, %[[ADJ]]#1, %[[ADJ]]#2, %[[ADJ]]#3

// One fused loop nest computes the four gradients.
// LOOPS-LABEL: func.func @hm_lstm_gradient(
// LOOPS:         linalg.generic
// LOOPS-SAME:      iterator_types = ["parallel"]
// LOOPS-NOT:     linalg.generic
// LOOPS:         return
func.func @cell(%c: tensor<?xf32>, %f: tensor<?xf32>, %i: tensor<?xf32>, %g: tensor<?xf32>, %z: tensor<?xf32>, %zb: tensor<?xf32>) -> tensor<?xf32> {
  %r = soac.map ins(%c, %f, %i, %g, %z, %zb : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%cv: f32, %fv: f32, %iv: f32, %gv: f32, %zv: f32, %zbv: f32):
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %is_z = arith.cmpf oeq, %zv, %one : f32
    %out = scf.if %is_z -> (f32) {
      %ni = arith.negf %iv : f32
      %ei = math.exp %ni : f32
      %di = arith.addf %one, %ei : f32
      %si = arith.divf %one, %di : f32
      %tg = math.tanh %gv : f32
      %p = arith.mulf %si, %tg : f32
      scf.yield %p : f32
    } else {
      %is_zb = arith.cmpf oeq, %zbv, %zero : f32
      %inner = scf.if %is_zb -> (f32) {
        scf.yield %cv : f32
      } else {
        %nf = arith.negf %fv : f32
        %ef = math.exp %nf : f32
        %df = arith.addf %one, %ef : f32
        %sf = arith.divf %one, %df : f32
        %ni = arith.negf %iv : f32
        %ei = math.exp %ni : f32
        %di = arith.addf %one, %ei : f32
        %si = arith.divf %one, %di : f32
        %tg = math.tanh %gv : f32
        %fc = arith.mulf %sf, %cv : f32
        %ig = arith.mulf %si, %tg : f32
        %s = arith.addf %fc, %ig : f32
        scf.yield %s : f32
      }
      scf.yield %inner : f32
    }
    soac.yield %out : f32
  }
  return %r : tensor<?xf32>
}
func.func @hm_lstm_gradient(%c: tensor<?xf32>, %f: tensor<?xf32>, %i: tensor<?xf32>, %g: tensor<?xf32>, %z: tensor<?xf32>, %zb: tensor<?xf32>, %bar: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %r:5 = soac.vjp @cell(%c, %f, %i, %g, %z, %zb, %bar) wrt [0, 1, 2, 3] : (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
  return %r#1, %r#2, %r#3, %r#4 : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

// -----

// A loop inside the body needs no checkpoints in mixed mode: forward mode
// carries the tangent next to the carried value. A free scalar gets a lane
// too; its per-row contributions are summed.
// CHECK-LABEL: func.func @power_gradient(
// CHECK:         %[[ROWS:.*]]:2 = soac.map
// CHECK:           scf.for {{.*}} -> (f64, f64, f64)
// CHECK-NOT:       tensor.empty
// CHECK:         soac.reduce ins(%[[ROWS]]#1 : tensor<?xf64>)
// LOOPS-LABEL: func.func @power_gradient(
func.func @power(%x: tensor<?xf64>, %n: tensor<?xindex>, %w: f64) -> tensor<?xf64> {
  %r = soac.map ins(%x, %n : tensor<?xf64>, tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%v: f64, %k: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1.0 : f64
    %p = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %one) -> (f64) {
      %m = arith.mulf %acc, %v : f64
      %s = arith.mulf %m, %w : f64
      scf.yield %s : f64
    }
    soac.yield %p : f64
  }
  return %r : tensor<?xf64>
}
func.func @power_gradient(%x: tensor<?xf64>, %n: tensor<?xindex>, %w: f64, %bar: tensor<?xf64>) -> (tensor<?xf64>, f64) {
  %r:3 = soac.vjp @power(%x, %n, %w, %bar) wrt [0, 2] : (tensor<?xf64>, tensor<?xindex>, f64, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, f64)
  return %r#1, %r#2 : tensor<?xf64>, f64
}

// -----

// soac.mixed_mode = false keeps pure reverse mode for one map: the loop in
// its body is checkpointed (one carried value per iteration) and swept back.
// CHECK-LABEL: func.func @opt_out_gradient(
// CHECK:         soac.map
// CHECK:           tensor.empty
// CHECK:           scf.for
// CHECK:           scf.for
// LOOPS-LABEL: func.func @opt_out_gradient(
func.func @opt_out(%x: tensor<?xf64>, %n: tensor<?xindex>) -> tensor<?xf64> {
  %r = soac.map ins(%x, %n : tensor<?xf64>, tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%v: f64, %k: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %one = arith.constant 1.0 : f64
    %p = scf.for %i = %c0 to %k step %c1 iter_args(%acc = %one) -> (f64) {
      %m = arith.mulf %acc, %v : f64
      scf.yield %m : f64
    }
    soac.yield %p : f64
  } {soac.mixed_mode = false}
  return %r : tensor<?xf64>
}
func.func @opt_out_gradient(%x: tensor<?xf64>, %n: tensor<?xindex>, %bar: tensor<?xf64>) -> tensor<?xf64> {
  %r:2 = soac.vjp @opt_out(%x, %n, %bar) wrt [0] : (tensor<?xf64>, tensor<?xindex>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}
