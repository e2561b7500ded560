// soac.matmul: round trip, custom and generic forms.
// RUN: soac-opt %s | soac-opt | FileCheck %s
// RUN: soac-opt %s --mlir-print-op-generic | soac-opt | FileCheck %s

// CHECK-LABEL: func.func @products
func.func @products(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>, %c: tensor<4x3xi32>, %d: tensor<3x5xi32>)
    -> (tensor<?x?xf64>, tensor<?x?xf64>, tensor<4x5xi32>) {
  // CHECK: soac.matmul ins(%{{.*}}, %{{.*}} : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  %p = soac.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  // CHECK: soac.matmul ins(%{{.*}}, %{{.*}} : tensor<?x?xf64>, tensor<?x?xf64>) transpose_lhs transpose_rhs -> tensor<?x?xf64>
  %q = soac.matmul ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) transpose_lhs transpose_rhs -> tensor<?x?xf64>
  // CHECK: soac.matmul ins(%{{.*}}, %{{.*}} : tensor<4x3xi32>, tensor<3x5xi32>) -> tensor<4x5xi32>
  %r = soac.matmul ins(%c, %d : tensor<4x3xi32>, tensor<3x5xi32>) -> tensor<4x5xi32>
  return %p, %q, %r : tensor<?x?xf64>, tensor<?x?xf64>, tensor<4x5xi32>
}
