// RUN: soac-opt %s --soac-contractions-to-calls --canonicalize --split-input-file | FileCheck %s

// A product after a zero fill of its result: one call, which overwrites
// (last argument 1); each operand as its aligned pointer, offset, strides.
// CHECK-LABEL: func.func @product
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf64>, %[[B:.*]]: memref<?x?xf64>, %[[C:.*]]: memref<?x?xf64>)
// CHECK-NOT: linalg.fill
// CHECK: %[[BASE:.*]], %{{.*}}, %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[A]]
// CHECK: %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[BASE]]
// CHECK: call @soac_matmul_f64(%c0, %c0, %{{.*}}, %{{.*}}, %{{.*}}, %[[PA]], %c0, %[[STRIDES]]#0, %c1, {{.*}}, %c1)
// CHECK-NOT: linalg.matmul
// CHECK: func.func private @soac_matmul_f64(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index)
func.func @product(%a: memref<?x?xf64>, %b: memref<?x?xf64>, %c: memref<?x?xf64>) {
  %zero = arith.constant 0.0 : f64
  linalg.fill ins(%zero : f64) outs(%c : memref<?x?xf64>)
  linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
  return
}

// -----

// Transposed operands (their maps) are flags; without a fill the call
// accumulates (last argument 0).
// CHECK-LABEL: func.func @accumulate
// CHECK: call @soac_matmul_f32(%c1, %c1, %c4, %c5, %c3, %{{.*}}, %c0, %c4, %c1, %{{.*}}, %c0, %c3, %c1, %{{.*}}, %c0, %c5, %c1, %c0)
func.func @accumulate(%a: memref<3x4xf32>, %b: memref<5x3xf32>, %c: memref<4x5xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : memref<3x4xf32>, memref<5x3xf32>) outs(%c : memref<4x5xf32>)
  return
}

// -----

// Integers, and products on tensors, are left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<2x2xi32>, memref<2x2xi32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x2xf64>, tensor<2x2xf64>)
// CHECK-NOT: call
func.func @left_alone(%a: memref<2x2xi32>, %c: memref<2x2xi32>, %t: tensor<2x2xf64>) -> tensor<2x2xf64> {
  linalg.matmul ins(%a, %a : memref<2x2xi32>, memref<2x2xi32>) outs(%c : memref<2x2xi32>)
  %r = linalg.matmul ins(%t, %t : tensor<2x2xf64>, tensor<2x2xf64>) outs(%t : tensor<2x2xf64>) -> tensor<2x2xf64>
  return %r : tensor<2x2xf64>
}
