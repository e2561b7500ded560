// soac-copy-cheap-maps: a cheap map of scalars read by several SOACs gets a
// copy per reader, even where soac-fuse-maps would merge the readers.
// RUN: soac-opt %s --soac-copy-cheap-maps --split-input-file | FileCheck %s

// y = h * w + b read by a map (feeding a reduce) and by a reduce: one copy
// each, reading the same inputs.
// CHECK-LABEL: func.func @output_layer
// CHECK-SAME: (%[[H:.*]]: tensor<?xf64>, %[[W:.*]]: tensor<?xf64>)
// CHECK: %[[Y0:.*]] = soac.map ins(%[[H]], %[[W]]
// CHECK: %[[Y1:.*]] = soac.map ins(%[[H]], %[[W]]
// CHECK: soac.map ins(%[[Y0]]
// CHECK: soac.reduce ins(%[[Y1]]
func.func @output_layer(%h: tensor<?xf64>, %w: tensor<?xf64>) -> (tensor<?xf64>, f64) {
  %zero = arith.constant 0.0 : f64
  %y = soac.map ins(%h, %w : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%u: f64, %v: f64):
    %p = arith.mulf %u, %v : f64
    soac.yield %p : f64
  }
  %e = soac.map ins(%y : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%u: f64):
    %x = math.exp %u : f64
    soac.yield %x : f64
  }
  %s = soac.reduce ins(%y : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  return %e, %s : tensor<?xf64>, f64
}

// -----

// Left alone: a map with a math function, one read by a single SOAC (which
// fuses it anyway), and a map of rows.
// CHECK-LABEL: func.func @stay
// CHECK-COUNT-4: soac.map
// CHECK-NOT: soac.map
func.func @stay(%h: tensor<?xf64>, %m: tensor<?x?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?x?xf64>, tensor<?x?xf64>) {
  %e = soac.map ins(%h : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%u: f64):
    %x = math.exp %u : f64
    soac.yield %x : f64
  }
  %sum = soac.map ins(%e, %e : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%u: f64, %v: f64):
    %x = arith.addf %u, %v : f64
    soac.yield %x : f64
  }
  %rows = soac.map ins(%m : tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%row: tensor<?xf64>):
    soac.yield %row : tensor<?xf64>
  }
  %again = soac.map ins(%rows, %rows : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64> {
  ^bb0(%r: tensor<?xf64>, %q: tensor<?xf64>):
    soac.yield %r : tensor<?xf64>
  }
  return %e, %sum, %rows, %again : tensor<?xf64>, tensor<?xf64>, tensor<?x?xf64>, tensor<?x?xf64>
}
