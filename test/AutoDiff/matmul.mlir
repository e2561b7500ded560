// The derivatives of soac.matmul are products: reverse mode pulls C̄ back
// to C̄·Bᵀ and Aᵀ·C̄ (transposes as flags, never copies), forward mode
// pushes Ȧ·B + A·Ḃ.
// RUN: soac-opt %s --soac-autodiff --canonicalize --cse --split-input-file | FileCheck %s

// CHECK-LABEL: func.func private @product__vjp_wrt_0_1(
// CHECK-SAME: %[[A:[^:]*]]: tensor<?x?xf64>, %[[B:[^:]*]]: tensor<?x?xf64>, %[[CB:[^:]*]]: tensor<?x?xf64>)
// CHECK: %[[C:.*]] = soac.matmul ins(%[[A]], %[[B]] : {{.*}}) -> tensor<?x?xf64>
// CHECK: %[[GA:.*]] = soac.matmul ins(%[[CB]], %[[B]] : {{.*}}) transpose_rhs -> tensor<?x?xf64>
// CHECK: %[[GB:.*]] = soac.matmul ins(%[[A]], %[[CB]] : {{.*}}) transpose_lhs -> tensor<?x?xf64>
// CHECK: return %[[C]], %[[GA]], %[[GB]]
func.func @product(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  return %c : tensor<?x?xf64>
}
func.func @grad(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %s: tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>) {
  %r:3 = soac.vjp @product(%a, %b, %s) : (tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?xf64>)
  return %r#1, %r#2 : tensor<?x?xf64>, tensor<?x?xf64>
}

// -----

// A operand read transposed: Ā = op(B)·C̄ᵀ, B̄ = C̄ᵀ·op(A).
// CHECK-LABEL: func.func private @transposed__vjp_wrt_0_1(
// CHECK-SAME: %[[A:[^:]*]]: tensor<3x4xf64>, %[[B:[^:]*]]: tensor<5x3xf64>, %[[CB:[^:]*]]: tensor<4x5xf64>)
// CHECK: %[[GA:.*]] = soac.matmul ins(%[[B]], %[[CB]] : tensor<5x3xf64>, tensor<4x5xf64>) transpose_lhs transpose_rhs -> tensor<3x4xf64>
// CHECK: %[[GB:.*]] = soac.matmul ins(%[[CB]], %[[A]] : tensor<4x5xf64>, tensor<3x4xf64>) transpose_lhs transpose_rhs -> tensor<5x3xf64>
func.func @transposed(%a: tensor<3x4xf64>, %b: tensor<5x3xf64>) -> tensor<4x5xf64> {
  %c = soac.matmul ins(%a, %b : tensor<3x4xf64>, tensor<5x3xf64>) transpose_lhs transpose_rhs -> tensor<4x5xf64>
  return %c : tensor<4x5xf64>
}
func.func @grad_transposed(%a: tensor<3x4xf64>, %b: tensor<5x3xf64>, %s: tensor<4x5xf64>) -> (tensor<3x4xf64>, tensor<5x3xf64>) {
  %r:3 = soac.vjp @transposed(%a, %b, %s) : (tensor<3x4xf64>, tensor<5x3xf64>, tensor<4x5xf64>) -> (tensor<4x5xf64>, tensor<3x4xf64>, tensor<5x3xf64>)
  return %r#1, %r#2 : tensor<3x4xf64>, tensor<5x3xf64>
}

// -----

// Only the active operand gets an adjoint.
// CHECK-LABEL: func.func private @product__vjp_wrt_1(
// CHECK-SAME: %[[A:[^:]*]]: tensor<?x?xf64>, %[[B:[^:]*]]: tensor<?x?xf64>, %[[CB:[^:]*]]: tensor<?x?xf64>)
// CHECK: %[[GB:.*]] = soac.matmul ins(%[[A]], %[[CB]] : {{.*}}) transpose_lhs -> tensor<?x?xf64>
// CHECK-NOT: soac.matmul
// CHECK: return
func.func @product(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  return %c : tensor<?x?xf64>
}
func.func @grad_b(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %s: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %r:2 = soac.vjp @product(%a, %b, %s) wrt [1] : (tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>)
  return %r#1 : tensor<?x?xf64>
}

// -----

// CHECK-LABEL: func.func private @product__jvp_wrt_0_1(
// CHECK-SAME: %[[A:[^:]*]]: tensor<?x?xf64>, %[[B:[^:]*]]: tensor<?x?xf64>, %[[DA:[^:]*]]: tensor<?x?xf64>, %[[DB:[^:]*]]: tensor<?x?xf64>)
// CHECK: %[[C:.*]] = soac.matmul ins(%[[A]], %[[B]] :
// CHECK: %[[T1:.*]] = soac.matmul ins(%[[DA]], %[[B]] :
// CHECK: %[[T2:.*]] = soac.matmul ins(%[[A]], %[[DB]] :
// CHECK: soac.map ins(%[[T1]], %[[T2]] :
func.func @product(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  return %c : tensor<?x?xf64>
}
func.func @tangent(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %da: tensor<?x?xf64>, %db: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %r:2 = soac.jvp @product(%a, %b, %da, %db) : (tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?xf64>, tensor<?x?xf64>) -> (tensor<?x?xf64>, tensor<?x?xf64>)
  return %r#1 : tensor<?x?xf64>
}
