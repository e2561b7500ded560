// soac-fuse-gathers: a cheap map whose results are only read element by
// element is computed where each element is read.
// RUN: soac-opt %s --soac-fuse-gathers --split-input-file | FileCheck %s

// x = a * b, read lane by lane inside another map (and its size taken):
// each read becomes the product of the inputs' elements at that index.
// CHECK-LABEL: func.func @gathered
// CHECK-SAME: (%[[A:.*]]: tensor<?xf64>, %[[B:.*]]: tensor<?xf64>, %[[I:.*]]: tensor<?xindex>)
// CHECK-NOT: soac.map ins(%[[A]], %[[B]]
// CHECK: tensor.dim %[[A]]
// CHECK: soac.map ins(%[[I]] : tensor<?xindex>)
// CHECK: %[[U:.*]] = tensor.extract %[[A]][%[[J:.*]]] : tensor<?xf64>
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[B]][%[[J]]] : tensor<?xf64>
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[U]], %[[V]] : f64
// CHECK-NEXT: arith.addf %[[P]], %[[P]]
func.func @gathered(%a: tensor<?xf64>, %b: tensor<?xf64>, %i: tensor<?xindex>) -> (tensor<?xf64>, index) {
  %c0 = arith.constant 0 : index
  %x = soac.map ins(%a, %b : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%u: f64, %v: f64):
    %p = arith.mulf %u, %v : f64
    soac.yield %p : f64
  }
  %n = tensor.dim %x, %c0 : tensor<?xf64>
  %r = soac.map ins(%i : tensor<?xindex>) -> tensor<?xf64> {
  ^bb0(%j: index):
    %e = tensor.extract %x[%j] : tensor<?xf64>
    %d = arith.addf %e, %e : f64
    soac.yield %d : f64
  }
  return %r, %n : tensor<?xf64>, index
}

// -----

// Left alone: a map also read row by row (by a reduce), a map whose body is
// not cheap (a math function), and a map of rows.
// CHECK-LABEL: func.func @stay
// CHECK: %[[ROWS:.*]] = soac.map
// CHECK: soac.reduce ins(%[[ROWS]]
// CHECK: %[[EXP:.*]] = soac.map
// CHECK: math.exp
// CHECK: tensor.extract %[[EXP]]
// CHECK: %[[MATRIX:.*]] = soac.map
// CHECK: tensor.extract %[[MATRIX]]
func.func @stay(%a: tensor<?xf64>, %m: tensor<?x?xf64>, %j: index) -> (f64, f64, f64, f64) {
  %zero = arith.constant 0.0 : f64
  %c0 = arith.constant 0 : index
  %twice = soac.map ins(%a : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%u: f64):
    %p = arith.addf %u, %u : f64
    soac.yield %p : f64
  }
  %s = soac.reduce ins(%twice : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%p: f64, %q: f64):
    %t = arith.addf %p, %q : f64
    soac.yield %t : f64
  }
  %e0 = tensor.extract %twice[%j] : tensor<?xf64>
  %exp = soac.map ins(%a : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%u: f64):
    %p = math.exp %u : f64
    soac.yield %p : f64
  }
  %e1 = tensor.extract %exp[%j] : tensor<?xf64>
  %rows = soac.map ins(%m : tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>):
    soac.yield %row : tensor<?xf64>
  }
  %e2 = tensor.extract %rows[%j, %c0] : tensor<?x?xf64>
  return %s, %e0, %e1, %e2 : f64, f64, f64, f64
}
