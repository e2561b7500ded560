// soac.matmul stays a contraction: a zero-filled tensor and a linalg.matmul
// whose indexing maps read transposed operands in place; inner sizes known
// only at run time are compared first.
// RUN: soac-opt %s --convert-soac-to-loops --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[A:.*]]: tensor<?x?xf64>, %[[B:.*]]: tensor<?x?xf64>)
// CHECK: %[[K1:.*]] = tensor.dim %[[A]], %c1
// CHECK: %[[K2:.*]] = tensor.dim %[[B]], %c0
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[K1]], %[[K2]]
// CHECK: cf.assert %[[SAME]], "{{.*}}'soac.matmul' contracts operands of different inner sizes"
// CHECK: %[[E:.*]] = tensor.empty
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f64) outs(%[[E]] : tensor<?x?xf64>)
// CHECK: linalg.matmul ins(%[[A]], %[[B]] : tensor<?x?xf64>, tensor<?x?xf64>) outs(%[[Z]] : tensor<?x?xf64>)
func.func @dynamic(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  return %c : tensor<?x?xf64>
}

// -----

// Static inner sizes were checked by the verifier; transposes are maps.
// CHECK-DAG: #[[$LHS:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[$RHS:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @transposed
// CHECK-NOT: cf.assert
// CHECK: linalg.matmul indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$OUT]]] ins(%{{.*}}, %{{.*}} : tensor<3x4xf32>, tensor<5x3xf32>) outs(%{{.*}} : tensor<4x5xf32>)
func.func @transposed(%a: tensor<3x4xf32>, %b: tensor<5x3xf32>) -> tensor<4x5xf32> {
  %c = soac.matmul ins(%a, %b : tensor<3x4xf32>, tensor<5x3xf32>) transpose_lhs transpose_rhs -> tensor<4x5xf32>
  return %c : tensor<4x5xf32>
}
