// One case per verifier rule of soac.matmul (dialect/SoacContraction.cpp).
// RUN: soac-opt %s --split-input-file --verify-diagnostics

func.func @rank(%a: tensor<?xf64>, %b: tensor<?x?xf64>) {
  // expected-error @+1 {{'soac.matmul' op multiplies matrices: operands of rank 2 expected, got 'tensor<?xf64>' and 'tensor<?x?xf64>'}}
  %p = soac.matmul ins(%a, %b : tensor<?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  return
}

// -----

func.func @element(%a: tensor<2x2xindex>, %b: tensor<2x2xindex>) {
  // expected-error @+1 {{'soac.matmul' op needs integer or float elements, got 'index'}}
  %p = soac.matmul ins(%a, %b : tensor<2x2xindex>, tensor<2x2xindex>) -> tensor<2x2xindex>
  return
}

// -----

func.func @mixed(%a: tensor<2x2xf32>, %b: tensor<2x2xf64>) {
  // expected-error @+1 {{'soac.matmul' op needs one element type for operands and result}}
  %p = soac.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf64>) -> tensor<2x2xf64>
  return
}

// -----

func.func @inner(%a: tensor<4x3xf64>, %b: tensor<4x5xf64>) {
  // expected-error @+1 {{'soac.matmul' op contracts 3 columns of the left operand with 4 rows of the right one}}
  %p = soac.matmul ins(%a, %b : tensor<4x3xf64>, tensor<4x5xf64>) -> tensor<4x5xf64>
  return
}

// -----

func.func @inner_transposed(%a: tensor<4x3xf64>, %b: tensor<5x4xf64>) {
  // transpose_lhs makes the left operand 3 x 4, transpose_rhs the right one 4 x 5
  %ok = soac.matmul ins(%a, %b : tensor<4x3xf64>, tensor<5x4xf64>) transpose_lhs transpose_rhs -> tensor<3x5xf64>
  // expected-error @+1 {{'soac.matmul' op contracts 3 columns of the left operand with 5 rows of the right one}}
  %p = soac.matmul ins(%a, %b : tensor<4x3xf64>, tensor<5x4xf64>) -> tensor<4x4xf64>
  return
}

// -----

func.func @result(%a: tensor<4x3xf64>, %b: tensor<3x?xf64>) {
  // expected-error @+1 {{'soac.matmul' op result type 'tensor<4x5xf64>' differs from 'tensor<4x?xf64>', the type of the product of its operands}}
  %p = soac.matmul ins(%a, %b : tensor<4x3xf64>, tensor<3x?xf64>) -> tensor<4x5xf64>
  return
}
