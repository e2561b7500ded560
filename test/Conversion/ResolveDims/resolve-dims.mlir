// RUN: soac-opt %s --soac-resolve-dims --split-input-file | FileCheck %s

// A loop that keeps its carried tensor's size: the size of its result is
// its initial tensor's.
// CHECK-LABEL: func.func @loop_keeps_size
// CHECK-SAME: (%[[INIT:.*]]: tensor<?xf64>
// CHECK: scf.for
// CHECK: %[[D:.*]] = tensor.dim %[[INIT]], %c0
// CHECK: return %[[D]]
func.func @loop_keeps_size(%init: tensor<?xf64>, %n: index, %v: f64) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %init) -> (tensor<?xf64>) {
    %u = tensor.insert %v into %t[%i] : tensor<?xf64>
    scf.yield %u : tensor<?xf64>
  }
  %d = tensor.dim %r, %c0 : tensor<?xf64>
  return %d : index
}

// -----

// A loop that yields tensors of another size: left alone.
// CHECK-LABEL: func.func @loop_changes_size
// CHECK: %[[R:.*]] = scf.for
// CHECK: tensor.dim %[[R]], %c0
func.func @loop_changes_size(%init: tensor<?xf64>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %init) -> (tensor<?xf64>) {
    %e = tensor.empty(%i) : tensor<?xf64>
    scf.yield %e : tensor<?xf64>
  }
  %d = tensor.dim %r, %c0 : tensor<?xf64>
  return %d : index
}

// -----

// Branches filling the same tensor (a parallel and a sequential loop): the
// size is the tensor's, set by tensor.empty.
// CHECK-LABEL: func.func @branches_keep_size
// CHECK-SAME: (%[[C:.*]]: i1, %[[N:.*]]: index
// CHECK: scf.if
// CHECK: return %[[N]]
func.func @branches_keep_size(%c: i1, %n: index, %v: f64) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %empty = tensor.empty(%n) : tensor<?xf64>
  %r = scf.if %c -> (tensor<?xf64>) {
    %p = scf.forall (%i) in (%n) shared_outs(%o = %empty) -> (tensor<?xf64>) {
      %s = tensor.from_elements %v : tensor<1xf64>
      scf.forall.in_parallel {
        tensor.parallel_insert_slice %s into %o[%i] [1] [1] : tensor<1xf64> into tensor<?xf64>
      }
    }
    scf.yield %p : tensor<?xf64>
  } else {
    %f = linalg.fill ins(%v : f64) outs(%empty : tensor<?xf64>) -> tensor<?xf64>
    scf.yield %f : tensor<?xf64>
  }
  %d = tensor.dim %r, %c0 : tensor<?xf64>
  return %d : index
}

// -----

// Branches yielding tensors of different origins: left alone.
// CHECK-LABEL: func.func @branches_differ
// CHECK: %[[R:.*]] = scf.if
// CHECK: tensor.dim %[[R]], %c0
func.func @branches_differ(%c: i1, %a: tensor<?xf64>, %b: tensor<?xf64>) -> index {
  %c0 = arith.constant 0 : index
  %r = scf.if %c -> (tensor<?xf64>) {
    scf.yield %a : tensor<?xf64>
  } else {
    scf.yield %b : tensor<?xf64>
  }
  %d = tensor.dim %r, %c0 : tensor<?xf64>
  return %d : index
}

// -----

// A splat's dynamic sizes are its operands: a splat read only for its size
// (a gradient's zeros like another) is then dead.
// CHECK-LABEL: func.func @splat_sizes
// CHECK-SAME: (%[[N:.*]]: index, %[[M:.*]]: index, %[[V:.*]]: f64)
// CHECK-NOT: tensor.dim
// CHECK: return %[[N]], %[[M]]
func.func @splat_sizes(%n: index, %m: index, %v: f64) -> (index, index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %s = tensor.splat %v[%n, %m] : tensor<?x3x?xf64>
  %d0 = tensor.dim %s, %c0 : tensor<?x3x?xf64>
  %d2 = tensor.dim %s, %c2 : tensor<?x3x?xf64>
  return %d0, %d2 : index, index
}
