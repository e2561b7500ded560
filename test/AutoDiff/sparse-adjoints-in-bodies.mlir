// A tensor defined in a SOAC body (here a row of a map) and read two maps
// deeper: the reads stack over the inner map's rows and are flattened in the
// outer map's body, where one reduce_by_index adds them; the cost stays that
// of the reads. (Each inner row adding its reads into a dense adjoint of the
// whole row, summed over the rows, cost rows × the row's size.) The GPU's
// code per thread reads the flattened batch as a view
// (test/Conversion/SoacToGPU/soac-to-gpu.mlir, @stacked_reads_per_row).
// RUN: soac-opt %s --soac-autodiff --canonicalize --cse | FileCheck %s

// CHECK-LABEL: func.func private @rows_window__vjp_wrt_0(
// CHECK: soac.map ins(%{{.*}} : tensor<?x?xf64>
// CHECK: %[[READS:.*]]:2 = soac.map ins(%{{.*}}) -> tensor<?x?xindex>, tensor<?x?xf64>
// CHECK: soac.check_index
// CHECK: %[[I:.*]] = tensor.collapse_shape %[[READS]]#0 {{\[}}[0, 1]] : tensor<?x?xindex> into tensor<?xindex>
// CHECK: %[[V:.*]] = tensor.collapse_shape %[[READS]]#1 {{\[}}[0, 1]] : tensor<?x?xf64> into tensor<?xf64>
// CHECK: soac.reduce_by_index dest(%{{.*}} : tensor<?xf64>) indices(%[[I]] : tensor<?xindex>) ins(%[[V]] : tensor<?xf64>)
// CHECK-NOT: soac.reduce ins
// CHECK: return

func.func @rows_window(%x: tensor<?x?xf64>, %offsets: tensor<?xindex>, %positions: tensor<?xindex>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%x : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %sums = soac.map ins(%positions : tensor<?xindex>) -> tensor<?xf64> {
    ^bb1(%i: index):
      %terms = soac.map ins(%offsets : tensor<?xindex>) -> tensor<?xf64> {
      ^bb2(%j: index):
        %p = arith.addi %i, %j : index
        %v = tensor.extract %row[%p] : tensor<?xf64>
        %sq = arith.mulf %v, %v : f64
        soac.yield %sq : f64
      }
      %s = soac.reduce ins(%terms : tensor<?xf64>) init(%zero : f64) -> f64 {
      ^bb2(%a: f64, %b: f64):
        %t = arith.addf %a, %b : f64
        soac.yield %t : f64
      }
      soac.yield %s : f64
    }
    %total = soac.reduce ins(%sums : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb1(%a: f64, %b: f64):
      %t = arith.addf %a, %b : f64
      soac.yield %t : f64
    }
    soac.yield %total : f64
  }
  return %r : tensor<?xf64>
}
func.func @d_rows_window(%x: tensor<?x?xf64>, %offsets: tensor<?xindex>, %positions: tensor<?xindex>, %c: tensor<?xf64>) -> tensor<?x?xf64> {
  %r:2 = soac.vjp @rows_window(%x, %offsets, %positions, %c) wrt [0] : (tensor<?x?xf64>, tensor<?xindex>, tensor<?xindex>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?x?xf64>)
  return %r#1 : tensor<?x?xf64>
}
