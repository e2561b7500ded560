// Every soac op round-trips through its custom form and through the generic form.
// RUN: soac-opt %s | soac-opt | FileCheck %s
// RUN: soac-opt %s --mlir-print-op-generic | soac-opt | FileCheck %s

// CHECK-LABEL: func.func @map_one
// CHECK: %[[R:.*]] = soac.map ins(%{{.*}} : tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32):
// CHECK-NEXT:   %[[M:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT:   soac.yield %[[M]] : f32
// CHECK-NEXT: }
// CHECK: return %[[R]]
func.func @map_one(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %m = arith.mulf %a, %a : f32
    soac.yield %m : f32
  }
  return %r : tensor<?xf32>
}

// Two inputs (one static, one dynamic), two results of different element types,
// and a free value %s from above.
// CHECK-LABEL: func.func @map_many
// CHECK: soac.map ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<?xi32>) -> tensor<4xf32>, tensor<?xi1> {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: i32):
// CHECK: soac.yield %{{.*}}, %{{.*}} : f32, i1
func.func @map_many(%x: tensor<4xf32>, %k: tensor<?xi32>, %s: f32) -> (tensor<4xf32>, tensor<?xi1>) {
  %c0 = arith.constant 0 : i32
  %r:2 = soac.map ins(%x, %k : tensor<4xf32>, tensor<?xi32>) -> tensor<4xf32>, tensor<?xi1> {
  ^bb0(%a: f32, %b: i32):
    %m = arith.mulf %a, %s : f32
    %p = arith.cmpi sgt, %b, %c0 : i32
    soac.yield %m, %p : f32, i1
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<?xi1>
}

// Matrix-vector product: a map over rows with a nested map and reduce; %v is free.
// CHECK-LABEL: func.func @matvec
// CHECK: soac.map ins(%{{.*}} : tensor<?x?xf64>) -> tensor<?xf64> {
// CHECK-NEXT: ^bb0(%[[ROW:.*]]: tensor<?xf64>):
// CHECK: soac.map ins(%[[ROW]], %{{.*}} : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64>
// CHECK: soac.reduce ins(%{{.*}} : tensor<?xf64>) init(%{{.*}} : f64) -> f64
func.func @matvec(%A: tensor<?x?xf64>, %v: tensor<?xf64>) -> tensor<?xf64> {
  %zero = arith.constant 0.0 : f64
  %r = soac.map ins(%A : tensor<?x?xf64>) -> tensor<?xf64> {
  ^bb0(%row: tensor<?xf64>):
    %p = soac.map ins(%row, %v : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%a: f64, %b: f64):
      %m = arith.mulf %a, %b : f64
      soac.yield %m : f64
    }
    %s = soac.reduce ins(%p : tensor<?xf64>) init(%zero : f64) -> f64 {
    ^bb0(%acc: f64, %e: f64):
      %t = arith.addf %acc, %e : f64
      soac.yield %t : f64
    }
    soac.yield %s : f64
  }
  return %r : tensor<?xf64>
}

// A map yielding rows: the result has rank 2.
// CHECK-LABEL: func.func @map_yields_rows
// CHECK: soac.map ins(%{{.*}} : tensor<3xindex>) -> tensor<3x5xf32>
// CHECK: soac.yield %{{.*}} : tensor<5xf32>
func.func @map_yields_rows(%i: tensor<3xindex>, %row: tensor<5xf32>) -> tensor<3x5xf32> {
  %r = soac.map ins(%i : tensor<3xindex>) -> tensor<3x5xf32> {
  ^bb0(%j: index):
    soac.yield %row : tensor<5xf32>
  }
  return %r : tensor<3x5xf32>
}

// CHECK-LABEL: func.func @reduce_tuple
// CHECK: soac.reduce ins(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xindex>) init(%{{.*}}, %{{.*}} : f32, index) -> f32, index {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: f32, %{{.*}}: index):
func.func @reduce_tuple(%x: tensor<?xf32>, %i: tensor<?xindex>) -> (f32, index) {
  %inf = arith.constant 0x7F800000 : f32
  %c0 = arith.constant 0 : index
  // argmin: (value, index) pairs, the first index on ties
  %r:2 = soac.reduce ins(%x, %i : tensor<?xf32>, tensor<?xindex>) init(%inf, %c0 : f32, index) -> f32, index {
  ^bb0(%a: f32, %ai: index, %b: f32, %bi: index):
    %lt = arith.cmpf olt, %b, %a : f32
    %v = arith.select %lt, %b, %a : f32
    %j = arith.select %lt, %bi, %ai : index
    soac.yield %v, %j : f32, index
  }
  return %r#0, %r#1 : f32, index
}

// Reducing rows: the neutral element and the operator work on whole rows.
// CHECK-LABEL: func.func @reduce_rows
// CHECK: soac.reduce ins(%{{.*}} : tensor<?x4xf32>) init(%{{.*}} : tensor<4xf32>) -> tensor<4xf32>
func.func @reduce_rows(%m: tensor<?x4xf32>, %zeros: tensor<4xf32>) -> tensor<4xf32> {
  %r = soac.reduce ins(%m : tensor<?x4xf32>) init(%zeros : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %s = soac.map ins(%a, %b : tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x: f32, %y: f32):
      %t = arith.addf %x, %y : f32
      soac.yield %t : f32
    }
    soac.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @scan_sum
// CHECK: soac.scan ins(%{{.*}} : tensor<7xi64>) init(%{{.*}} : i64) -> tensor<7xi64>
func.func @scan_sum(%x: tensor<7xi64>) -> tensor<7xi64> {
  %zero = arith.constant 0 : i64
  %r = soac.scan ins(%x : tensor<7xi64>) init(%zero : i64) -> tensor<7xi64> {
  ^bb0(%a: i64, %b: i64):
    %s = arith.addi %a, %b : i64
    soac.yield %s : i64
  }
  return %r : tensor<7xi64>
}

// A tuple scan (linear recurrence pairs).
// CHECK-LABEL: func.func @scan_pairs
// CHECK: soac.scan ins(%{{.*}}, %{{.*}} : tensor<?xf64>, tensor<?xf64>) init(%{{.*}}, %{{.*}} : f64, f64) -> tensor<?xf64>, tensor<?xf64>
func.func @scan_pairs(%a: tensor<?xf64>, %b: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xf64>) {
  %one = arith.constant 1.0 : f64
  %zero = arith.constant 0.0 : f64
  %r:2 = soac.scan ins(%a, %b : tensor<?xf64>, tensor<?xf64>) init(%one, %zero : f64, f64) -> tensor<?xf64>, tensor<?xf64> {
  ^bb0(%a1: f64, %b1: f64, %a2: f64, %b2: f64):
    %a12 = arith.mulf %a1, %a2 : f64
    %t = arith.mulf %b1, %a2 : f64
    %b12 = arith.addf %t, %b2 : f64
    soac.yield %a12, %b12 : f64, f64
  }
  return %r#0, %r#1 : tensor<?xf64>, tensor<?xf64>
}

// CHECK-LABEL: func.func @scatter_scalars
// CHECK: soac.scatter dest(%{{.*}} : tensor<8xf32>) indices(%{{.*}} : tensor<?xindex>) ins(%{{.*}} : tensor<?xf32>) -> tensor<8xf32>
func.func @scatter_scalars(%d: tensor<8xf32>, %i: tensor<?xindex>, %v: tensor<?xf32>) -> tensor<8xf32> {
  %r = soac.scatter dest(%d : tensor<8xf32>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// CHECK-LABEL: func.func @scatter_rows
// CHECK: soac.scatter dest(%{{.*}} : tensor<?x3xf64>) indices(%{{.*}} : tensor<2xi32>) ins(%{{.*}} : tensor<2x3xf64>) -> tensor<?x3xf64>
func.func @scatter_rows(%d: tensor<?x3xf64>, %i: tensor<2xi32>, %v: tensor<2x3xf64>) -> tensor<?x3xf64> {
  %r = soac.scatter dest(%d : tensor<?x3xf64>) indices(%i : tensor<2xi32>) ins(%v : tensor<2x3xf64>) -> tensor<?x3xf64>
  return %r : tensor<?x3xf64>
}

// CHECK-LABEL: func.func @histogram
// CHECK: soac.reduce_by_index dest(%{{.*}} : tensor<1000xf32>) indices(%{{.*}} : tensor<?xindex>) ins(%{{.*}} : tensor<?xf32>) init(%{{.*}} : f32) -> tensor<1000xf32> {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
func.func @histogram(%h: tensor<1000xf32>, %i: tensor<?xindex>, %v: tensor<?xf32>) -> tensor<1000xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.reduce_by_index dest(%h : tensor<1000xf32>) indices(%i : tensor<?xindex>) ins(%v : tensor<?xf32>) init(%zero : f32) -> tensor<1000xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  return %r : tensor<1000xf32>
}

// Two destinations combined by one operator (max with its position), i64 indices.
// CHECK-LABEL: func.func @histogram_argmax
// CHECK: soac.reduce_by_index dest(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xi64>) indices(%{{.*}} : tensor<?xi64>) ins(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xi64>) init(%{{.*}}, %{{.*}} : f32, i64) -> tensor<?xf32>, tensor<?xi64>
func.func @histogram_argmax(%h: tensor<?xf32>, %hi: tensor<?xi64>, %i: tensor<?xi64>, %v: tensor<?xf32>, %vi: tensor<?xi64>) -> (tensor<?xf32>, tensor<?xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %r:2 = soac.reduce_by_index dest(%h, %hi : tensor<?xf32>, tensor<?xi64>) indices(%i : tensor<?xi64>) ins(%v, %vi : tensor<?xf32>, tensor<?xi64>) init(%ninf, %c0 : f32, i64) -> tensor<?xf32>, tensor<?xi64> {
  ^bb0(%a: f32, %ai: i64, %b: f32, %bi: i64):
    %gt = arith.cmpf ogt, %b, %a : f32
    %m = arith.select %gt, %b, %a : f32
    %mi = arith.select %gt, %bi, %ai : i64
    soac.yield %m, %mi : f32, i64
  }
  return %r#0, %r#1 : tensor<?xf32>, tensor<?xi64>
}

// CHECK-LABEL: func.func @iotas
// CHECK: soac.iota %{{.*}} : tensor<?xindex>
// CHECK: soac.iota : tensor<8xi32>
func.func @iotas(%n: index) -> (tensor<?xindex>, tensor<8xi32>) {
  %a = soac.iota %n : tensor<?xindex>
  %b = soac.iota : tensor<8xi32>
  return %a, %b : tensor<?xindex>, tensor<8xi32>
}

func.func @scaled_sum(%x: tensor<?xf64>, %scale: f64, %n: index) -> f64 {
  %zero = arith.constant 0.0 : f64
  %s = soac.reduce ins(%x : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %t = arith.addf %a, %b : f64
    soac.yield %t : f64
  }
  %r = arith.mulf %s, %scale : f64
  return %r : f64
}

// CHECK-LABEL: func.func @derivatives
// CHECK: soac.vjp @scaled_sum(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) wrt [0, 1] : (tensor<?xf64>, f64, index, f64) -> (f64, tensor<?xf64>, f64)
// CHECK: soac.vjp @scaled_sum(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) wrt [1] : (tensor<?xf64>, f64, index, f64) -> (f64, f64)
// CHECK: soac.jvp @scaled_sum(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) wrt [0] : (tensor<?xf64>, f64, index, tensor<?xf64>) -> (f64, f64)
// CHECK: soac.jvp @scaled_sum(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) wrt [1] width 3 : (tensor<?xf64>, f64, index, f64, f64, f64) -> (f64, f64, f64, f64)
func.func @derivatives(%x: tensor<?xf64>, %s: f64, %n: index, %dy: f64, %dx: tensor<?xf64>) -> (tensor<?xf64>, f64, f64) {
  %g:3 = soac.vjp @scaled_sum(%x, %s, %n, %dy) wrt [0, 1] : (tensor<?xf64>, f64, index, f64) -> (f64, tensor<?xf64>, f64)
  %h:2 = soac.vjp @scaled_sum(%x, %s, %n, %dy) wrt [1] : (tensor<?xf64>, f64, index, f64) -> (f64, f64)
  %t:2 = soac.jvp @scaled_sum(%x, %s, %n, %dx) wrt [0] : (tensor<?xf64>, f64, index, tensor<?xf64>) -> (f64, f64)
  %v:4 = soac.jvp @scaled_sum(%x, %s, %n, %dy, %dy, %dy) wrt [1] width 3 : (tensor<?xf64>, f64, index, f64, f64, f64) -> (f64, f64, f64, f64)
  return %g#1, %h#1, %t#1 : tensor<?xf64>, f64, f64
}

func.func @cube(%x: f32) -> f32 {
  %x2 = arith.mulf %x, %x : f32
  %x3 = arith.mulf %x2, %x : f32
  return %x3 : f32
}

// Without wrt every argument is differentiated.
func.func @grad_cube(%x: f32) -> f32 {
  %one = arith.constant 1.0 : f32
  %r:2 = soac.vjp @cube(%x, %one) : (f32, f32) -> (f32, f32)
  return %r#1 : f32
}

// jvp of a function that contains a vjp: a Hessian-vector product.
// CHECK-LABEL: func.func @second_derivative
// CHECK: soac.jvp @grad_cube(%{{.*}}, %{{.*}}) : (f32, f32) -> (f32, f32)
func.func @second_derivative(%x: f32, %t: f32) -> f32 {
  %r:2 = soac.jvp @grad_cube(%x, %t) : (f32, f32) -> (f32, f32)
  return %r#1 : f32
}
