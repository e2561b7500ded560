// The reverse rules of scatter with duplicate indices, of operators applied
// elementwise to tensor rows (reduce, scan, reduce_by_index), and of
// reduce_by_index with a general operator.
// RUN: soac-opt %s --soac-autodiff --canonicalize --cse --split-input-file | FileCheck %s

// scatter: each writer gets the key 1 + i (n + 1 + i when its value is the
// one that survived); the largest key of each row of dest is its survivor,
// and only the survivor reads the cotangent.
// CHECK-LABEL: func.func private @scatter__vjp_wrt_2(
// CHECK-SAME: %[[DEST:.*]]: tensor<?xf64>, %[[IDX:.*]]: tensor<?xindex>, %[[V:.*]]: tensor<?xf64>, %[[C:.*]]: tensor<?xf64>)
// CHECK: %[[Y:.*]] = soac.scatter dest(%[[DEST]] : tensor<?xf64>) indices(%[[IDX]] : tensor<?xindex>) ins(%[[V]] : tensor<?xf64>)
// CHECK: %[[KEYS:.*]] = soac.map ins(%{{.*}}, %[[IDX]], %[[V]] : tensor<?xindex>, tensor<?xindex>, tensor<?xf64>) -> tensor<?xi64>
// CHECK: tensor.extract %[[Y]]
// CHECK: arith.cmpf oeq
// CHECK: %[[SURVIVORS:.*]] = soac.reduce_by_index dest(%{{.*}} : tensor<?xi64>) indices(%[[IDX]] : tensor<?xindex>) ins(%[[KEYS]] : tensor<?xi64>)
// CHECK: arith.maxui
// CHECK: %[[AT:.*]] = soac.map ins(%[[IDX]], %[[KEYS]] : tensor<?xindex>, tensor<?xi64>) -> tensor<?xindex>
// CHECK: tensor.extract %[[SURVIVORS]]
// CHECK: %[[DV:.*]] = soac.map ins(%[[AT]] : tensor<?xindex>) -> tensor<?xf64>
// CHECK: tensor.extract %[[C]]
// CHECK: return %[[Y]], %[[DV]]
func.func @scatter(%dest: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %r = soac.scatter dest(%dest : tensor<?xf64>) indices(%idx : tensor<?xindex>) ins(%v : tensor<?xf64>) -> tensor<?xf64>
  return %r : tensor<?xf64>
}
func.func @g(%dest: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>, %c: tensor<?xf64>) -> tensor<?xf64> {
  %r:2 = soac.vjp @scatter(%dest, %idx, %v, %c) wrt [2] : (tensor<?xf64>, tensor<?xindex>, tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>)
  return %r#1 : tensor<?xf64>
}

// -----

// reduce of rows combined by an elementwise *: per column (a map over the
// positions of a row), the column is gathered and the scalar product rule
// (non-zero product and count of zeros) runs on it; the columns' adjoints
// are transposed back to rows.
// CHECK-LABEL: func.func private @row_product__vjp_wrt_0(
// CHECK-SAME: %[[M:.*]]: tensor<?x3xf64>, %[[INIT:.*]]: tensor<3xf64>, %[[C:.*]]: tensor<3xf64>)
// CHECK: %[[COLUMNS:.*]] = soac.iota %{{.*}} : tensor<?xindex>
// CHECK: %[[PER_COLUMN:.*]] = soac.map ins(%[[COLUMNS]] : tensor<?xindex>) -> tensor<?x?xf64>
// CHECK-NEXT: ^bb0(%[[J:.*]]: index):
// CHECK: %[[COLUMN:.*]] = soac.map
// CHECK: tensor.extract %[[M]][%{{.*}}, %[[J]]]
// CHECK: tensor.extract %[[C]][%[[J]]]
// CHECK: soac.reduce ins(%{{.*}}, %{{.*}} : tensor<?xf64>, tensor<?xindex>)
// CHECK: arith.divf
// CHECK: %[[ROWS:.*]] = soac.map ins(%{{.*}} : tensor<?xindex>) -> tensor<?x?xf64>
// CHECK: tensor.extract %[[PER_COLUMN]]
// CHECK: %[[CAST:.*]] = tensor.cast %[[ROWS]] : tensor<?x?xf64> to tensor<?x3xf64>
// CHECK: return %{{.*}}, %[[CAST]]
func.func @row_product(%m: tensor<?x3xf64>, %init: tensor<3xf64>) -> tensor<3xf64> {
  %r = soac.reduce ins(%m : tensor<?x3xf64>) init(%init : tensor<3xf64>) -> tensor<3xf64> {
  ^bb0(%a: tensor<3xf64>, %b: tensor<3xf64>):
    %c = soac.map ins(%a, %b : tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64> {
    ^bb0(%x: f64, %y: f64):
      %t = arith.mulf %x, %y : f64
      soac.yield %t : f64
    }
    soac.yield %c : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
func.func @g(%m: tensor<?x3xf64>, %init: tensor<3xf64>, %c: tensor<3xf64>) -> tensor<?x3xf64> {
  %r:2 = soac.vjp @row_product(%m, %init, %c) wrt [0] : (tensor<?x3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<?x3xf64>)
  return %r#1 : tensor<?x3xf64>
}

// -----

// scan of matrix rows with an elementwise *: a map nest over both positions
// of a row, the scalar scan rule (Jacobians, then a reversed scan of
// composed affine maps) on each column.
// CHECK-LABEL: func.func private @prefix_products__vjp_wrt_0(
// CHECK: soac.map ins(%{{.*}} : tensor<?xindex>) -> tensor<?x?x?xf64>
// CHECK: soac.map ins(%{{.*}} : tensor<?xindex>) -> tensor<?x?xf64>
// CHECK: soac.scan
// CHECK: soac.scan
// CHECK: return
func.func @prefix_products(%m: tensor<?x2x2xf64>, %init: tensor<2x2xf64>) -> tensor<?x2x2xf64> {
  %r = soac.scan ins(%m : tensor<?x2x2xf64>) init(%init : tensor<2x2xf64>) -> tensor<?x2x2xf64> {
  ^bb0(%a: tensor<2x2xf64>, %b: tensor<2x2xf64>):
    %c = soac.map ins(%b, %a : tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64> {
    ^bb0(%x: tensor<2xf64>, %y: tensor<2xf64>):
      %d = soac.map ins(%x, %y : tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64> {
      ^bb0(%p: f64, %q: f64):
        %t = arith.mulf %q, %p : f64
        soac.yield %t : f64
      }
      soac.yield %d : tensor<2xf64>
    }
    soac.yield %c : tensor<2x2xf64>
  }
  return %r : tensor<?x2x2xf64>
}
func.func @g(%m: tensor<?x2x2xf64>, %init: tensor<2x2xf64>, %c: tensor<?x2x2xf64>) -> tensor<?x2x2xf64> {
  %r:2 = soac.vjp @prefix_products(%m, %init, %c) wrt [0] : (tensor<?x2x2xf64>, tensor<2x2xf64>, tensor<?x2x2xf64>) -> (tensor<?x2x2xf64>, tensor<?x2x2xf64>)
  return %r#1 : tensor<?x2x2xf64>
}

// -----

// reduce_by_index of vector rows with an elementwise max: per column, the
// scalar rule (the first value reaching each bin's maximum).
// CHECK-LABEL: func.func private @bin_max__vjp_wrt_2(
// CHECK-SAME: %[[D:.*]]: tensor<?x2xf64>, %[[IDX:.*]]: tensor<?xindex>, %[[V:.*]]: tensor<?x2xf64>
// CHECK: soac.map ins(%{{.*}} : tensor<?xindex>) -> tensor<?x?xf64>
// CHECK: soac.reduce_by_index dest(%{{.*}} : tensor<?xf64>) indices(%[[IDX]] : tensor<?xindex>) ins(%{{.*}} : tensor<?xf64>)
// CHECK: soac.reduce_by_index dest(%{{.*}} : tensor<?xindex>) indices(%[[IDX]] : tensor<?xindex>)
// CHECK: arith.minui
// CHECK: return
func.func @bin_max(%d: tensor<?x2xf64>, %idx: tensor<?xindex>, %v: tensor<?x2xf64>, %init: tensor<2xf64>) -> tensor<?x2xf64> {
  %r = soac.reduce_by_index dest(%d : tensor<?x2xf64>) indices(%idx : tensor<?xindex>) ins(%v : tensor<?x2xf64>) init(%init : tensor<2xf64>) -> tensor<?x2xf64> {
  ^bb0(%a: tensor<2xf64>, %b: tensor<2xf64>):
    %c = soac.map ins(%a, %b : tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64> {
    ^bb0(%x: f64, %y: f64):
      %t = arith.maximumf %x, %y : f64
      soac.yield %t : f64
    }
    soac.yield %c : tensor<2xf64>
  }
  return %r : tensor<?x2xf64>
}
func.func @g(%d: tensor<?x2xf64>, %idx: tensor<?xindex>, %v: tensor<?x2xf64>, %init: tensor<2xf64>, %c: tensor<?x2xf64>) -> tensor<?x2xf64> {
  %r:2 = soac.vjp @bin_max(%d, %idx, %v, %init, %c) wrt [2] : (tensor<?x2xf64>, tensor<?xindex>, tensor<?x2xf64>, tensor<2xf64>, tensor<?x2xf64>) -> (tensor<?x2xf64>, tensor<?x2xf64>)
  return %r#1 : tensor<?x2xf64>
}

// -----

// reduce_by_index with a general operator (x ⊙ y = 2xy): the values are
// sorted by bin (a radix sort: one scan and two scatters per bit of the
// number of bins), segmented scans from both ends give each value the
// product of the others in its bin, the pull-backs per value are scattered
// back to the original order, and dest's adjoint pulls back through
// d ⊙ H, H the histogram of the values from the neutral element.
// CHECK-LABEL: func.func private @scaled_product__vjp_wrt_0_2(
// CHECK-SAME: %[[D:.*]]: tensor<?xf64>, %[[IDX:.*]]: tensor<?xindex>, %[[V:.*]]: tensor<?xf64>, %[[C:.*]]: tensor<?xf64>)
// CHECK: %[[KEYS:.*]] = soac.map ins(%[[IDX]] : tensor<?xindex>) -> tensor<?xindex>
// CHECK: %[[BITS:.*]] = scf.while
// CHECK: arith.shrui
// CHECK: %[[SORTED:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %[[BITS]] step %{{.*}} iter_args(%{{.*}} = %[[KEYS]], %{{.*}} = %{{.*}})
// CHECK: soac.scan
// CHECK: soac.scatter
// CHECK: soac.scatter
// CHECK: %[[SORTED_V:.*]] = soac.map ins(%[[SORTED]]#1 : tensor<?xindex>) -> tensor<?xf64>
// CHECK: %[[PREFIXES:.*]]:2 = soac.scan ins(%{{.*}}, %[[SORTED_V]] : tensor<?xindex>, tensor<?xf64>)
// CHECK: %[[SUFFIXES:.*]]:2 = soac.scan ins(%{{.*}}, %{{.*}} : tensor<?xindex>, tensor<?xf64>)
// CHECK: %[[PER_VALUE:.*]] = soac.map ins(%{{.*}}, %[[SORTED]]#0 : tensor<?xindex>, tensor<?xindex>) -> tensor<?xf64>
// CHECK: scf.if
// CHECK: tensor.extract %[[PREFIXES]]#1
// CHECK: tensor.extract %[[SUFFIXES]]#1
// CHECK: %[[DV:.*]] = soac.scatter dest(%{{.*}} : tensor<?xf64>) indices(%[[SORTED]]#1 : tensor<?xindex>) ins(%[[PER_VALUE]] : tensor<?xf64>)
// CHECK: %[[TOTALS:.*]] = soac.reduce_by_index dest(%{{.*}} : tensor<?xf64>) indices(%[[IDX]] : tensor<?xindex>) ins(%[[V]] : tensor<?xf64>)
// CHECK: %[[DD:.*]] = soac.map ins(%[[TOTALS]], %[[C]] : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
// CHECK: return %{{.*}}, %[[DD]], %[[DV]]
func.func @scaled_product(%dest: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %half = arith.constant 0.5 : f64
  %r = soac.reduce_by_index dest(%dest : tensor<?xf64>) indices(%idx : tensor<?xindex>) ins(%v : tensor<?xf64>) init(%half : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %two = arith.constant 2.0 : f64
    %t = arith.mulf %a, %b : f64
    %u = arith.mulf %t, %two : f64
    soac.yield %u : f64
  }
  return %r : tensor<?xf64>
}
func.func @g(%dest: tensor<?xf64>, %idx: tensor<?xindex>, %v: tensor<?xf64>, %s: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  %r:3 = soac.vjp @scaled_product(%dest, %idx, %v, %s) wrt [0, 2] : (tensor<?xf64>, tensor<?xindex>, tensor<?xf64>, tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>, tensor<?xf64>)
  return %r#1, %r#2 : tensor<?xf64>, tensor<?xf64>
}
