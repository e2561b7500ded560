// A loop that only writes rows into a carried tensor (the stacked outputs of
// soac.lax.scan) keeps no checkpoint of it: its value at the start of an
// iteration is never read, and saving it would copy the whole stack per
// iteration. A loop that also reads the tensor keeps its checkpoints.
// RUN: soac-opt %s --soac-autodiff --canonicalize | FileCheck %s

// CHECK-LABEL: func.func private @stacked__vjp_wrt_0
// The checkpoints of the scalar carry only, no rows of the stack:
// CHECK-NOT: tensor<?x?xf64>
// CHECK: tensor.insert %{{.*}} into %{{.*}} : tensor<?xf64>
// CHECK-NOT: tensor<?x?xf64>
// CHECK-LABEL: func.func @stacked_grad
func.func @stacked(%x: f64, %ys: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %ys, %c0 : tensor<?xf64>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%h = %x, %out = %ys) -> (f64, tensor<?xf64>) {
    %s = math.sin %h : f64
    %size = tensor.dim %out, %c0 : tensor<?xf64>
    %w = tensor.insert %s into %out[%i] : tensor<?xf64>
    scf.yield %s, %w : f64, tensor<?xf64>
  }
  return %r#1 : tensor<?xf64>
}

func.func @stacked_grad(%x: f64, %ys: tensor<?xf64>, %bar: tensor<?xf64>) -> f64 {
  %g:2 = soac.vjp @stacked(%x, %ys, %bar) wrt [0] : (f64, tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, f64)
  return %g#1 : f64
}

// CHECK-LABEL: func.func private @read_back__vjp_wrt_0
// CHECK: tensor.empty({{.*}}) : tensor<?x?xf64>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}} : tensor<?xf64> into tensor<?x?xf64>
// CHECK-LABEL: func.func @read_back_grad
func.func @read_back(%x: f64, %ys: tensor<?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %ys, %c0 : tensor<?xf64>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%h = %x, %out = %ys) -> (f64, tensor<?xf64>) {
    %old = tensor.extract %out[%c0] : tensor<?xf64>
    %t = arith.addf %h, %old : f64
    %s = math.sin %t : f64
    %w = tensor.insert %s into %out[%i] : tensor<?xf64>
    scf.yield %s, %w : f64, tensor<?xf64>
  }
  return %r#1 : tensor<?xf64>
}

func.func @read_back_grad(%x: f64, %ys: tensor<?xf64>, %bar: tensor<?xf64>) -> f64 {
  %g:2 = soac.vjp @read_back(%x, %ys, %bar) wrt [0] : (f64, tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, f64)
  return %g#1 : f64
}
