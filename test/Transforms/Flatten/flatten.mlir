// soac-flatten: nested parallelism into perfect nests; each rewrite and the
// cases it must leave alone.
// RUN: soac-opt %s -soac-flatten -split-input-file | FileCheck %s

// map∘map: one map over the rows of the collapsed matrix; a free scalar read
// by the inner body stays a free value.
// CHECK-LABEL: func.func @collapse
// CHECK-SAME: (%[[A:.*]]: tensor<?x?xf32>, %[[S:.*]]: f32)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
// CHECK: %[[M:.*]] = soac.map ins(%[[FLAT]] : tensor<?xf32>) -> tensor<?xf32> {
// CHECK: arith.mulf %{{.*}}, %[[S]] : f32
// CHECK-NOT: soac.map
// CHECK: %[[R:.*]] = tensor.expand_shape %[[M]] {{\[}}[0, 1]] output_shape [%{{.*}}, %{{.*}}] : tensor<?xf32> into tensor<?x?xf32>
// CHECK: return %[[R]]
func.func @collapse(%A: tensor<?x?xf32>, %s: f32) -> tensor<?x?xf32> {
  %r = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %one = arith.constant 1.0 : f32
    %m = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%x: f32):
      %p = arith.mulf %x, %s : f32
      %q = arith.addf %p, %one : f32
      soac.yield %q : f32
    }
    soac.yield %m : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

// Static sizes, two inputs, a chain of two inner maps, rank-3 inputs: the
// two outer dimensions merge (4·5 = 20), the rows of rank 1 stay rows.
// CHECK-LABEL: func.func @collapse_static
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<4x5x3xf32> into tensor<20x3xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<4x5xf32> into tensor<20xf32>
// CHECK: %[[M1:.*]] = soac.map ins(%{{.*}}, %{{.*}} : tensor<20x3xf32>, tensor<20xf32>) -> tensor<20x3xf32>
// CHECK: %[[M2:.*]] = soac.map ins(%[[M1]] : tensor<20x3xf32>) -> tensor<20xf32>
// CHECK: tensor.expand_shape %[[M2]] {{\[}}[0, 1]] output_shape [4, 5] : tensor<20xf32> into tensor<4x5xf32>
func.func @collapse_static(%A: tensor<4x5x3xf32>, %B: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %r = soac.map ins(%A, %B : tensor<4x5x3xf32>, tensor<4x5xf32>) -> tensor<4x5xf32> {
  ^bb0(%a: tensor<5x3xf32>, %b: tensor<5xf32>):
    %m = soac.map ins(%a, %b : tensor<5x3xf32>, tensor<5xf32>) -> tensor<5x3xf32> {
    ^bb0(%x: tensor<3xf32>, %y: f32):
      %t = soac.map ins(%x : tensor<3xf32>) -> tensor<3xf32> {
      ^bb0(%e: f32):
        %p = arith.mulf %e, %y : f32
        soac.yield %p : f32
      }
      soac.yield %t : tensor<3xf32>
    }
    %n = soac.map ins(%m : tensor<5x3xf32>) -> tensor<5xf32> {
    ^bb0(%x: tensor<3xf32>):
      %c0 = arith.constant 0 : index
      %e = tensor.extract %x[%c0] : tensor<3xf32>
      soac.yield %e : f32
    }
    soac.yield %n : tensor<5xf32>
  }
  return %r : tensor<4x5xf32>
}

// -----

// An inner map reading a value computed from the outer row is not the same
// function in every row: no collapse.
// CHECK-LABEL: func.func @no_collapse_row_value
// CHECK-NOT: tensor.collapse_shape
// CHECK: soac.map ins(%{{.*}} : tensor<?x?xf32>)
// CHECK: tensor.extract
// CHECK: soac.map ins(%{{.*}} : tensor<?xf32>)
// CHECK: arith.subf
// CHECK-NOT: tensor.expand_shape
func.func @no_collapse_row_value(%A: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %c0 = arith.constant 0 : index
    %first = tensor.extract %row[%c0] : tensor<?xf32>
    %m = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%x: f32):
      %d = arith.subf %x, %first : f32
      soac.yield %d : f32
    }
    soac.yield %m : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

// map∘reduce: the scalar statement after the reduce goes into its own map; the
// map left with the reduce alone is marked segmented.
// CHECK-LABEL: func.func @segmented_reduce
// CHECK: %[[SUMS:.*]] = soac.map ins(%{{.*}} : tensor<?x?xf32>) -> tensor<?xf32> {
// CHECK-NEXT: ^bb0(%[[ROW:.*]]: tensor<?xf32>):
// CHECK-NEXT: %[[T:.*]] = soac.reduce ins(%[[ROW]] : tensor<?xf32>)
// CHECK: soac.yield %[[T]] : f32
// CHECK-NEXT: } {soac.segmented}
// CHECK: %[[R:.*]] = soac.map ins(%[[SUMS]] : tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT: math.sqrt %[[V]] : f32
// CHECK-NOT: soac.segmented
// CHECK: return %[[R]]
func.func @segmented_reduce(%A: tensor<?x?xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %t = soac.reduce ins(%row : tensor<?xf32>) init(%zero : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      soac.yield %s : f32
    }
    %u = math.sqrt %t : f32
    soac.yield %u : f32
  }
  return %r : tensor<?xf32>
}

// -----

// matvec is already a segmented reduce (of a map of the row): marked, unchanged.
// CHECK-LABEL: func.func @matvec
// CHECK: soac.map ins(%{{.*}} : tensor<?x?xf32>) -> tensor<?xf32> {
// CHECK: soac.map ins(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xf32>)
// CHECK: soac.reduce
// CHECK: } {soac.segmented}
// CHECK-NEXT: return
func.func @matvec(%A: tensor<?x?xf32>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %p = soac.map ins(%row, %x : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      soac.yield %m : f32
    }
    %d = soac.reduce ins(%p : tensor<?xf32>) init(%zero : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      soac.yield %s : f32
    }
    soac.yield %d : f32
  }
  return %r : tensor<?xf32>
}

// -----

// map∘scan: a per-row value the scan's map reads is computed in a map before
// it, and becomes a row of the segmented scan's map.
// CHECK-LABEL: func.func @segmented_scan
// CHECK: %[[FIRST:.*]] = soac.map ins(%[[A:.*]] : tensor<?x?xf32>) -> tensor<?xf32> {
// CHECK: tensor.extract
// CHECK-NOT: soac.segmented
// CHECK: %[[S:.*]] = soac.map ins(%[[A]], %[[FIRST]] : tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32> {
// CHECK: soac.map
// CHECK: soac.scan
// CHECK: } {soac.segmented}
// CHECK: return %[[S]]
func.func @segmented_scan(%A: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %c0 = arith.constant 0 : index
    %first = tensor.extract %row[%c0] : tensor<?xf32>
    %shifted = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%x: f32):
      %d = arith.subf %x, %first : f32
      soac.yield %d : f32
    }
    %c = soac.scan ins(%shifted : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      soac.yield %s : f32
    }
    soac.yield %c : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

// A reduce whose neutral element comes from the row is not a segmented reduce.
// CHECK-LABEL: func.func @no_segmented_row_init
// CHECK: soac.reduce
// CHECK-NOT: soac.segmented
// CHECK: return
func.func @no_segmented_row_init(%A: tensor<?x?xf32>, %inits: tensor<?xf32>) -> tensor<?xf32> {
  %r = soac.map ins(%A, %inits : tensor<?x?xf32>, tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%row: tensor<?xf32>, %init: f32):
    %t = soac.reduce ins(%row : tensor<?xf32>) init(%init : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %s = arith.maximumf %a, %b : f32
      soac.yield %s : f32
    }
    soac.yield %t : f32
  }
  return %r : tensor<?xf32>
}

// -----

// Distribution: two reductions of the same row become two maps; the row of
// exponentials both read is computed once, in a map of its own (which then
// collapses).
// CHECK-LABEL: func.func @distribute
// CHECK-SAME: (%[[A:.*]]: tensor<?x?xf32>)
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[A]]
// CHECK: %[[E:.*]] = soac.map ins(%[[FLAT]] : tensor<?xf32>)
// CHECK: math.exp
// CHECK: %[[ES:.*]] = tensor.expand_shape %[[E]]
// CHECK: %[[SUM:.*]] = soac.map ins(%[[ES]] : tensor<?x?xf32>) -> tensor<?xf32> {
// CHECK: arith.addf
// CHECK: } {soac.segmented}
// CHECK: %[[MAX:.*]] = soac.map ins(%[[ES]] : tensor<?x?xf32>) -> tensor<?xf32> {
// CHECK: arith.maximumf
// CHECK: } {soac.segmented}
// CHECK: return %[[SUM]], %[[MAX]]
func.func @distribute(%A: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %r:2 = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?xf32>, tensor<?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %e = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%x: f32):
      %y = math.exp %x : f32
      soac.yield %y : f32
    }
    %s = soac.reduce ins(%e : tensor<?xf32>) init(%zero : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      soac.yield %t : f32
    }
    %m = soac.reduce ins(%e : tensor<?xf32>) init(%ninf : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %t = arith.maximumf %a, %b : f32
      soac.yield %t : f32
    }
    soac.yield %s, %m : f32, f32
  }
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xf32>
}

// -----

// A body with side effects (an opaque call) keeps its order: no distribution.
// CHECK-LABEL: func.func @no_distribute_effects
// CHECK: soac.map ins(%{{.*}} : tensor<?x?xf32>)
// CHECK: call @observe
// CHECK-NOT: soac.map
// CHECK-NOT: soac.segmented
// CHECK: return
func.func private @observe(f32)
func.func @no_distribute_effects(%A: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %zero = arith.constant 0.0 : f32
  %r:2 = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?xf32>, tensor<?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %s = soac.reduce ins(%row : tensor<?xf32>) init(%zero : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      soac.yield %t : f32
    }
    func.call @observe(%s) : (f32) -> ()
    %m = soac.reduce ins(%row : tensor<?xf32>) init(%zero : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %t = arith.maximumf %a, %b : f32
      soac.yield %t : f32
    }
    soac.yield %s, %m : f32, f32
  }
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xf32>
}

// -----

// Loop interchange: the loop goes outside, carrying a tensor of accumulators
// (initially a splat of the free initial value) updated by a map per step.
// CHECK-LABEL: func.func @interchange
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[K:.*]]: index, %[[INIT:.*]]: f32)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?xf32>
// CHECK: %[[ACC0:.*]] = tensor.splat %[[INIT]][%[[N]]] : tensor<?xf32>
// CHECK: %[[R:.*]] = scf.for %[[I:.*]] = %{{.*}} to %[[K]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[ACC0]]) -> (tensor<?xf32>) {
// CHECK: %[[STEP:.*]] = soac.map ins(%[[ACC]], %[[X]] : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[V:.*]]: f32):
// CHECK: arith.index_cast %[[I]]
// CHECK: scf.yield %[[STEP]] : tensor<?xf32>
// CHECK: return %[[R]]
func.func @interchange(%xs: tensor<?xf32>, %k: index, %init: f32) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = soac.map ins(%xs : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%x: f32):
    %acc = scf.for %i = %c0 to %k step %c1 iter_args(%a = %init) -> (f32) {
      %ii = arith.index_cast %i : index to i64
      %fi = arith.sitofp %ii : i64 to f32
      %p = arith.mulf %a, %x : f32
      %q = arith.addf %p, %fi : f32
      scf.yield %q : f32
    }
    soac.yield %acc : f32
  }
  return %r : tensor<?xf32>
}

// -----

// Initial values from the rows of an input: the input is the initial tensor
// (a constant initial value: a constant tensor). Two carried values, one of
// them not a result of the map.
// CHECK-LABEL: func.func @interchange_row_init
// CHECK-SAME: (%[[X:.*]]: tensor<8xf64>, %[[Y:.*]]: tensor<8xf64>)
// CHECK: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf64>
// CHECK: %[[R:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[Y]], %[[B:.*]] = %[[ONES]]) -> (tensor<8xf64>, tensor<8xf64>) {
// CHECK: soac.map ins(%[[A]], %[[B]], %[[X]] : tensor<8xf64>, tensor<8xf64>, tensor<8xf64>) -> tensor<8xf64>, tensor<8xf64>
// CHECK: return %[[R]]#0
func.func @interchange_row_init(%xs: tensor<8xf64>, %ys: tensor<8xf64>) -> tensor<8xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %one = arith.constant 1.0 : f64
  %r = soac.map ins(%xs, %ys : tensor<8xf64>, tensor<8xf64>) -> tensor<8xf64> {
  ^bb0(%x: f64, %y: f64):
    %acc:2 = scf.for %i = %c0 to %c5 step %c1 iter_args(%a = %y, %b = %one) -> (f64, f64) {
      %p = arith.mulf %a, %x : f64
      %q = arith.addf %p, %b : f64
      %h = arith.mulf %b, %x : f64
      scf.yield %q, %h : f64, f64
    }
    soac.yield %acc#0 : f64
  }
  return %r : tensor<8xf64>
}

// -----

// A loop whose trip count depends on the row stays inside the map.
// CHECK-LABEL: func.func @no_interchange_row_trip_count
// CHECK: soac.map
// CHECK: scf.for
// CHECK-NOT: tensor.splat
func.func @no_interchange_row_trip_count(%xs: tensor<?xf32>, %ks: tensor<?xindex>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = soac.map ins(%xs, %ks : tensor<?xf32>, tensor<?xindex>) -> tensor<?xf32> {
  ^bb0(%x: f32, %k: index):
    %acc = scf.for %i = %c0 to %k step %c1 iter_args(%a = %zero) -> (f32) {
      %s = arith.addf %a, %x : f32
      scf.yield %s : f32
    }
    soac.yield %acc : f32
  }
  return %r : tensor<?xf32>
}

// -----

// A loop carrying a tensor is not interchanged.
// CHECK-LABEL: func.func @no_interchange_tensor_carry
// CHECK: soac.map
// CHECK: scf.for
// CHECK-SAME: -> (tensor<2xf32>)
func.func @no_interchange_tensor_carry(%xs: tensor<?xf32>, %v: tensor<2xf32>) -> tensor<?x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = soac.map ins(%xs : tensor<?xf32>) -> tensor<?x2xf32> {
  ^bb0(%x: f32):
    %acc = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %v) -> (tensor<2xf32>) {
      %e = tensor.extract %a[%c0] : tensor<2xf32>
      %s = arith.addf %e, %x : f32
      %t = tensor.insert %s into %a[%c1] : tensor<2xf32>
      scf.yield %t : tensor<2xf32>
    }
    soac.yield %acc : tensor<2xf32>
  }
  return %r : tensor<?x2xf32>
}

// -----

// The two reductions read a slice whose length depends on the row: as a
// result of a map of its own it would be an irregular array, so no split.
// CHECK-LABEL: func.func @no_distribute_irregular
// CHECK: soac.map ins(%{{.*}}, %{{.*}} : tensor<?x?xf32>, tensor<?xindex>)
// CHECK: tensor.extract_slice
// CHECK: soac.reduce
// CHECK: soac.reduce
// CHECK-NOT: soac.map
// CHECK: return
func.func @no_distribute_irregular(%A: tensor<?x?xf32>, %ks: tensor<?xindex>) -> (tensor<?xf32>, tensor<?xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %r:2 = soac.map ins(%A, %ks : tensor<?x?xf32>, tensor<?xindex>) -> tensor<?xf32>, tensor<?xf32> {
  ^bb0(%row: tensor<?xf32>, %k: index):
    %c0 = arith.constant 0 : index
    %m = tensor.dim %row, %c0 : tensor<?xf32>
    %len = arith.minui %k, %m : index
    %t = tensor.extract_slice %row[0] [%len] [1] : tensor<?xf32> to tensor<?xf32>
    %s = soac.reduce ins(%t : tensor<?xf32>) init(%zero : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %u = arith.addf %a, %b : f32
      soac.yield %u : f32
    }
    %x = soac.reduce ins(%t : tensor<?xf32>) init(%ninf : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %u = arith.maximumf %a, %b : f32
      soac.yield %u : f32
    }
    soac.yield %s, %x : f32, f32
  }
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xf32>
}

// -----

// A reduce of matrices combined elementwise: its operator combines two rows,
// which is no parallelism to flatten, and the lowerings combine such rows
// element by element themselves. The operator's map∘map stays as it is.
// CHECK-LABEL: func.func @no_collapse_in_operator
// CHECK-NOT: tensor.collapse_shape
// CHECK: soac.reduce ins(%{{.*}} : tensor<?x?x?xf32>)
// CHECK: soac.map ins(%{{.*}}, %{{.*}} : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK: soac.map ins(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xf32>)
// CHECK: arith.addf
// CHECK-NOT: tensor.collapse_shape
// CHECK: return
func.func @no_collapse_in_operator(%A: tensor<?x?x?xf32>, %init: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = soac.reduce ins(%A : tensor<?x?x?xf32>) init(%init : tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>):
    %m = soac.map ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32> {
    ^bb0(%ra: tensor<?xf32>, %rb: tensor<?xf32>):
      %e = soac.map ins(%ra, %rb : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
      ^bb0(%x: f32, %y: f32):
        %s = arith.addf %x, %y : f32
        soac.yield %s : f32
      }
      soac.yield %e : tensor<?xf32>
    }
    soac.yield %m : tensor<?x?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

// Distribution across a matrix computed per row as a map over a tensor of the
// function (not a row) yielding a map over the row: its inner size is
// dynamic, yet the same in every row (GMM's x - mu_k per component), so its
// rows stack. That map then goes over the n x K positions (reading the rows
// by index), and the two reductions over its rows become segmented maps over
// all n x K rows.
// CHECK-LABEL: func.func @distribute_nested_regular
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[M:.*]]: tensor<?x?xf32>)
// CHECK: %[[POSITIONS:.*]] = soac.iota
// CHECK: %[[D:.*]] = soac.map ins(%[[POSITIONS]] : tensor<?xindex>) -> tensor<?x?xf32>
// CHECK: tensor.extract_slice %[[X]]
// CHECK: tensor.extract_slice %[[M]]
// CHECK: arith.subf
// CHECK: soac.map ins(%[[D]] : tensor<?x?xf32>) -> tensor<?xf32>
// CHECK: arith.addf
// CHECK: } {soac.segmented}
// CHECK: soac.map ins(%[[D]] : tensor<?x?xf32>) -> tensor<?xf32>
// CHECK: arith.maximumf
// CHECK: } {soac.segmented}
// CHECK: return
func.func @distribute_nested_regular(%X: tensor<?x?xf32>, %M: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %r:2 = soac.map ins(%X : tensor<?x?xf32>) -> tensor<?x?xf32>, tensor<?x?xf32> {
  ^bb0(%x: tensor<?xf32>):
    %D = soac.map ins(%M : tensor<?x?xf32>) -> tensor<?x?xf32> {
    ^bb0(%m: tensor<?xf32>):
      %d = soac.map ins(%x, %m : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
      ^bb0(%a: f32, %b: f32):
        %t = arith.subf %a, %b : f32
        soac.yield %t : f32
      }
      soac.yield %d : tensor<?xf32>
    }
    %s = soac.map ins(%D : tensor<?x?xf32>) -> tensor<?xf32> {
    ^bb0(%row: tensor<?xf32>):
      %v = soac.reduce ins(%row : tensor<?xf32>) init(%zero : f32) -> f32 {
      ^bb0(%a: f32, %b: f32):
        %t = arith.addf %a, %b : f32
        soac.yield %t : f32
      }
      soac.yield %v : f32
    }
    %t = soac.map ins(%D : tensor<?x?xf32>) -> tensor<?xf32> {
    ^bb0(%row: tensor<?xf32>):
      %v = soac.reduce ins(%row : tensor<?xf32>) init(%ninf : f32) -> f32 {
      ^bb0(%a: f32, %b: f32):
        %u = arith.maximumf %a, %b : f32
        soac.yield %u : f32
      }
      soac.yield %v : f32
    }
    soac.yield %s, %t : tensor<?xf32>, tensor<?xf32>
  }
  return %r#0, %r#1 : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// An iota of a size the same in every row crosses the split as rows of its own
// (GMM's argmax over the components of a point).
// CHECK-LABEL: func.func @distribute_iota
// CHECK: %[[I:.*]] = soac.map ins(%{{.*}} : tensor<?x?xf32>) -> tensor<?x?xindex>
// CHECK: soac.iota
// CHECK: soac.map ins(%{{.*}}, %[[I]] : tensor<?x?xf32>, tensor<?x?xindex>) -> tensor<?xf32>
// CHECK: } {soac.segmented}
// CHECK: soac.map ins(%[[I]] : tensor<?x?xindex>) -> tensor<?xindex>
// CHECK: } {soac.segmented}
// CHECK: return
func.func @distribute_iota(%A: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xindex>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %r:2 = soac.map ins(%A : tensor<?x?xf32>) -> tensor<?xf32>, tensor<?xindex> {
  ^bb0(%row: tensor<?xf32>):
    %m = tensor.dim %row, %c0 : tensor<?xf32>
    %i = soac.iota %m : tensor<?xindex>
    %w = soac.map ins(%row, %i : tensor<?xf32>, tensor<?xindex>) -> tensor<?xf32> {
    ^bb0(%x: f32, %k: index):
      %ki = arith.index_cast %k : index to i32
      %kf = arith.sitofp %ki : i32 to f32
      %y = arith.mulf %x, %kf : f32
      soac.yield %y : f32
    }
    %s = soac.reduce ins(%w : tensor<?xf32>) init(%zero : f32) -> f32 {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      soac.yield %t : f32
    }
    %sq = soac.map ins(%i : tensor<?xindex>) -> tensor<?xindex> {
    ^bb0(%k: index):
      %k2 = arith.muli %k, %k : index
      soac.yield %k2 : index
    }
    %t = soac.reduce ins(%sq : tensor<?xindex>) init(%c0 : index) -> index {
    ^bb0(%a: index, %b: index):
      %u = arith.addi %a, %b : index
      soac.yield %u : index
    }
    soac.yield %s, %t : f32, index
  }
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xindex>
}

// -----

// A map over a tensor of the function (K means) inside a map over points: no
// rows to merge, so one map over the n x K positions, reading the point at
// i / K and the mean (and the weight of this point and mean) at i mod K. The
// body reads the point's row too.
// CHECK-LABEL: func.func @collapse_by_index
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[W:.*]]: tensor<?x?xf32>, %[[M:.*]]: tensor<?xf32>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[K:.*]] = tensor.dim %[[M]], %c0
// CHECK: %[[NK:.*]] = arith.muli %[[N]], %[[K]]
// CHECK: %[[I:.*]] = soac.iota %[[NK]] : tensor<?xindex>
// CHECK: %[[FLAT:.*]] = soac.map ins(%[[I]] : tensor<?xindex>) -> tensor<?xf32> {
// CHECK: ^bb0(%[[POS:.*]]: index):
// CHECK: %[[P:.*]] = arith.divui %[[POS]], %[[K]]
// CHECK: %[[Q:.*]] = arith.remui %[[POS]], %[[K]]
// CHECK: tensor.extract_slice %[[X]][%[[P]], 0]
// CHECK: tensor.extract %[[M]][%[[Q]]]
// CHECK: tensor.extract %[[W]][%[[P]], %[[Q]]]
// CHECK-NOT: soac.map
// CHECK: tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]]
func.func @collapse_by_index(%X: tensor<?x?xf32>, %W: tensor<?x?xf32>, %M: tensor<?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %r = soac.map ins(%X, %W : tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%x: tensor<?xf32>, %w: tensor<?xf32>):
    %d = soac.map ins(%M, %w : tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%m: f32, %weight: f32):
      %first = tensor.extract %x[%c0] : tensor<?xf32>
      %t = arith.subf %first, %m : f32
      %u = arith.mulf %t, %weight : f32
      soac.yield %u : f32
    }
    soac.yield %d : tensor<?xf32>
  }
  return %r : tensor<?x?xf32>
}

// -----

// A size read at an index of the row (here the row itself) may differ
// between rows: the iota of that size cannot cross a split, and the map stays
// whole.
// CHECK-LABEL: func.func @no_distribute_row_dim_index
// CHECK: soac.map ins(%{{.*}} : tensor<?xindex>) -> tensor<?xindex>, tensor<?xindex> {
// CHECK: tensor.dim %{{.*}}, %{{.*}} : tensor<?x?xf32>
// CHECK: soac.iota
// CHECK: soac.reduce
// CHECK: soac.reduce
// CHECK: return
func.func @no_distribute_row_dim_index(%a: tensor<?xindex>, %T: tensor<?x?xf32>) -> (tensor<?xindex>, tensor<?xindex>) {
  %c0 = arith.constant 0 : index
  %r:2 = soac.map ins(%a : tensor<?xindex>) -> tensor<?xindex>, tensor<?xindex> {
  ^bb0(%j: index):
    %m = tensor.dim %T, %j : tensor<?x?xf32>
    %i = soac.iota %m : tensor<?xindex>
    %sq = soac.map ins(%i : tensor<?xindex>) -> tensor<?xindex> {
    ^bb0(%k: index):
      %k2 = arith.muli %k, %k : index
      soac.yield %k2 : index
    }
    %s = soac.reduce ins(%sq : tensor<?xindex>) init(%c0 : index) -> index {
    ^bb0(%x: index, %y: index):
      %z = arith.addi %x, %y : index
      soac.yield %z : index
    }
    %t = soac.reduce ins(%i : tensor<?xindex>) init(%c0 : index) -> index {
    ^bb0(%x: index, %y: index):
      %z = arith.addi %x, %y : index
      soac.yield %z : index
    }
    soac.yield %s, %t : index, index
  }
  return %r#0, %r#1 : tensor<?xindex>, tensor<?xindex>
}
