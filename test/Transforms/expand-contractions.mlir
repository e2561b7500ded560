// RUN: soac-opt %s --soac-expand-contractions --split-input-file | FileCheck %s
// RUN: soac-opt %s --soac-expand-contractions --soac-check-indices --split-input-file | FileCheck %s --check-prefix=CHECKED
// RUN: soac-opt %s --soac-expand-contractions=nested-only --split-input-file | FileCheck %s --check-prefix=NESTED

// A product as maps over the result's rows and columns of a reduce (+) of
// products read with tensor.extract; transposes swap the indices.
// CHECK-LABEL: func.func @product
// CHECK-SAME: (%[[A:.*]]: tensor<?x?xf32>, %[[B:.*]]: tensor<?x?xf32>)
// CHECK: soac.map ins(%{{.*}} : tensor<?xindex>) -> tensor<?x?xf32>
// CHECK: ^bb0(%[[I:.*]]: index):
// CHECK: soac.map ins(%{{.*}} : tensor<?xindex>) -> tensor<?xf32>
// CHECK: ^bb0(%[[J:.*]]: index):
// CHECK: soac.map
// CHECK: ^bb0(%[[P:.*]]: index):
// CHECK: tensor.extract %[[A]][%[[I]], %[[P]]]
// CHECK: tensor.extract %[[B]][%[[J]], %[[P]]]
// CHECK: arith.mulf
// CHECK: soac.reduce
// CHECK: arith.addf
// CHECK-NOT: soac.matmul
// The right operand's reads are checked: its inner size may differ.
// CHECKED-LABEL: func.func @product
// CHECKED: soac.check_index
func.func @product(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) transpose_rhs -> tensor<?x?xf32>
  return %c : tensor<?x?xf32>
}

// -----

// Static result types are kept (a cast of the maps' dynamic result).
// CHECK-LABEL: func.func @static_ints
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK: tensor.cast %{{.*}} : tensor<?x?xi32> to tensor<2x4xi32>
func.func @static_ints(%a: tensor<2x3xi32>, %b: tensor<3x4xi32>) -> tensor<2x4xi32> {
  %c = soac.matmul ins(%a, %b : tensor<2x3xi32>, tensor<3x4xi32>) -> tensor<2x4xi32>
  return %c : tensor<2x4xi32>
}

// -----

// nested-only (the GPU pipeline, whose kernels run products outside SOAC
// bodies themselves): a product inside a map's body is expanded, one
// outside is kept.
// NESTED-LABEL: func.func @products_inside_and_outside
// NESTED: soac.matmul ins(%{{.*}}, %{{.*}} : tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
// NESTED: soac.map ins(%{{.*}} : tensor<?x?x?xf32>)
// NESTED-NOT: soac.matmul
// NESTED: soac.reduce
func.func @products_inside_and_outside(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %batch: tensor<?x?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?x?xf32>) {
  %c = soac.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %d = soac.map ins(%batch : tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  ^bb0(%m: tensor<?x?xf32>):
    %p = soac.matmul ins(%m, %b : tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    soac.yield %p : tensor<?x?xf32>
  }
  return %c, %d : tensor<?x?xf32>, tensor<?x?x?xf32>
}
