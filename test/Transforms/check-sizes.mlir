// soac-check-indices: the sizes ops take on trust (expand_shape's output
// sizes, a cast to a static size, reshape's shape, insert_slice's source,
// concat's inputs) get a soac.check each, unless the verifier compared them
// or the IR shows them equal.
// RUN: soac-opt %s --soac-check-indices --split-input-file | FileCheck %s
// RUN: soac-opt %s --soac-check-indices=assume-in-bounds --split-input-file | FileCheck %s --check-prefix=NONE
// RUN: soac-opt %s --soac-lower-to-cpu --split-input-file | FileCheck %s --check-prefix=CPU

// NONE-NOT: soac.check

// Two dynamic sizes: first neither is negative and their product does not
// overflow, then it is the source's size (or both tensors are empty).
// CHECK-LABEL: func.func @expand_two_sizes
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[A:.*]]: index, %[[B:.*]]: index)
// CHECK: %[[N:.*]] = tensor.dim %[[X]]
// CHECK: %[[LOW:.*]], %[[HIGH:.*]] = arith.mului_extended %[[A]], %[[B]]
// CHECK: soac.check %{{.*}}, "'tensor.expand_shape': one of the sizes of group 0 is negative, or their product overflows"
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[LOW]], %[[N]]
// CHECK: %[[EMPTY:.*]] = arith.andi
// CHECK: %[[OK:.*]] = arith.ori %[[SAME]], %[[EMPTY]]
// CHECK: soac.check %[[OK]], "'tensor.expand_shape': the sizes of group 0 multiply to %lld, but the source has %lld" with %[[LOW]], %[[N]] : index, index
// CHECK: tensor.expand_shape %[[X]] {{\[\[}}0, 1]] output_shape [%[[A]], %[[B]]]
// CPU: llvm.mlir.global private constant @soac_check_{{[0-9]+}}("{{.*}}check-sizes.mlir:{{[0-9]+}}:8: 'tensor.expand_shape': the sizes of group 0 multiply to %lld, but the source has %lld\00")
// CPU-LABEL: llvm.func @expand_two_sizes
// CPU: llvm.call @soac_report_error
func.func @expand_two_sizes(%x: tensor<?xf32>, %a: index, %b: index) -> tensor<?x?xf32> {
  %r = tensor.expand_shape %x [[0, 1]] output_shape [%a, %b] : tensor<?xf32> into tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// -----

// A static size beside a dynamic one: their product.
// CHECK-LABEL: func.func @expand_static_factor
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[A:.*]]: index)
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[LOW:.*]], %[[HIGH:.*]] = arith.mului_extended %[[A]], %[[C4]]
// CHECK: soac.check %{{.*}}, "'tensor.expand_shape': one of the sizes of group 0 is negative, or their product overflows"
// CHECK: soac.check %{{.*}}, "'tensor.expand_shape': the sizes of group 0 multiply to %lld, but the source has %lld" with %[[LOW]], %{{.*}} : index, index
func.func @expand_static_factor(%x: tensor<?xf32>, %a: index) -> tensor<?x4xf32> {
  %r = tensor.expand_shape %x [[0, 1]] output_shape [%a, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// -----

// One dynamic size beside a unit one: no product, the size itself, which
// must not be negative.
// CHECK-LABEL: func.func @expand_one_size
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[A:.*]]: index)
// CHECK-NOT: mului_extended
// CHECK: %[[NEGATIVE:.*]] = arith.cmpi slt, %[[A]]
// CHECK: soac.check %{{.*}}, "'tensor.expand_shape': one of the sizes of group 0 is negative, or their product overflows"
// CHECK: soac.check %{{.*}}, "'tensor.expand_shape': the sizes of group 0 multiply to %lld, but the source has %lld" with %[[A]], %{{.*}} : index, index
func.func @expand_one_size(%x: tensor<?xf32>, %a: index) -> tensor<?x1xf32> {
  %r = tensor.expand_shape %x [[0, 1]] output_shape [%a, 1] : tensor<?xf32> into tensor<?x1xf32>
  return %r : tensor<?x1xf32>
}

// -----

// Sizes the IR shows equal get no check: the source's own dimensions
// (expand_dims), an expansion back of a collapsed tensor through a map (the
// frontend's `along`), static sizes on both sides, and a row size of a map
// over collapsed rows, which is 0 without rows (the zero then empties the
// result too).
// CHECK-LABEL: func.func @no_checks
// CHECK-NOT: soac.check
// CHECK: return
func.func @no_checks(%x: tensor<?x?xf32>, %y: tensor<?x?x?xf32>, %s: tensor<6xf32>)
    -> (tensor<1x?x?xf32>, tensor<?x?xf32>, tensor<2x3xf32>, tensor<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %dims = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, %d0, %d1] : tensor<?x?xf32> into tensor<1x?x?xf32>
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %doubled = soac.map ins(%flat : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    %t = arith.addf %v, %v : f32
    soac.yield %t : f32
  }
  %back = tensor.expand_shape %doubled [[0, 1]] output_shape [%d0, %d1] : tensor<?xf32> into tensor<?x?xf32>
  %static = tensor.expand_shape %s [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
  %rows = tensor.collapse_shape %y [[0, 1], [2]] : tensor<?x?x?xf32> into tensor<?x?xf32>
  %copied = soac.map ins(%rows : tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %c = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%v: f32):
      soac.yield %v : f32
    }
    soac.yield %c : tensor<?xf32>
  }
  %e0 = tensor.dim %y, %c0 : tensor<?x?x?xf32>
  %e1 = tensor.dim %y, %c1 : tensor<?x?x?xf32>
  %e2 = tensor.dim %y, %c2 : tensor<?x?x?xf32>
  %unrows = tensor.expand_shape %copied [[0, 1], [2]] output_shape [%e0, %e1, %e2] : tensor<?x?xf32> into tensor<?x?x?xf32>
  return %dims, %back, %static, %unrows : tensor<1x?x?xf32>, tensor<?x?xf32>, tensor<2x3xf32>, tensor<?x?x?xf32>
}

// -----

// A row size of a map is not its input's row size when the map has no rows:
// an expansion to the input's row size is checked.
// CHECK-LABEL: func.func @rows_of_an_empty_map
// CHECK: soac.check %{{.*}}, "'tensor.expand_shape': the sizes of group 1 multiply to %lld, but the source has %lld"
func.func @rows_of_an_empty_map(%y: tensor<?x?xf32>, %n: index) -> tensor<?x1x?xf32> {
  %c1 = arith.constant 1 : index
  %copied = soac.map ins(%y : tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%row: tensor<?xf32>):
    %c = soac.map ins(%row : tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%v: f32):
      soac.yield %v : f32
    }
    soac.yield %c : tensor<?xf32>
  }
  %d1 = tensor.dim %y, %c1 : tensor<?x?xf32>
  %r = tensor.expand_shape %copied [[0], [1, 2]] output_shape [%n, 1, %d1] : tensor<?x?xf32> into tensor<?x1x?xf32>
  return %r : tensor<?x1x?xf32>
}

// -----

// An op or a function marked soac.assume_in_bounds gets no checks.
// CHECK-LABEL: func.func @assumed
// CHECK-NOT: soac.check
// CHECK-LABEL: func.func @assumed_function
// CHECK-NOT: soac.check
// CHECK: return
func.func @assumed(%x: tensor<?xf32>, %a: index, %b: index) -> tensor<?x?xf32> {
  %r = tensor.expand_shape %x [[0, 1]] output_shape [%a, %b] {soac.assume_in_bounds} : tensor<?xf32> into tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
func.func @assumed_function(%x: tensor<?xf32>) -> tensor<4xf32> attributes {soac.assume_in_bounds} {
  %r = tensor.cast %x : tensor<?xf32> to tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// A cast to a static size: the source's dynamic size is that size (or both
// tensors are empty); a cast that only forgets sizes needs none.
// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>)
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %[[C1]]
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[N]], %[[C4]]
// CHECK: %[[OK:.*]] = arith.ori %[[SAME]], %{{.*}}
// CHECK: soac.check %[[OK]], "'tensor.cast': dimension 1 of the source has size %lld, but the result type has %lld" with %[[N]], %[[C4]] : index, index
// CHECK-NOT: soac.check
// CHECK: return
// CPU-LABEL: llvm.func @cast
// CPU: llvm.call @soac_report_error
func.func @cast(%x: tensor<?x?xf32>) -> (tensor<?x4xf32>, tensor<?x?xf32>) {
  %static = tensor.cast %x : tensor<?x?xf32> to tensor<?x4xf32>
  %dynamic = tensor.cast %static : tensor<?x4xf32> to tensor<?x?xf32>
  return %static, %dynamic : tensor<?x4xf32>, tensor<?x?xf32>
}

// -----

// A cast of a map over a tensor of static size has that size.
// CHECK-LABEL: func.func @cast_known
// CHECK-NOT: soac.check
// CHECK: return
func.func @cast_known(%x: tensor<4xf32>) -> tensor<4xf32> {
  %m = soac.map ins(%x : tensor<4xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    soac.yield %v : f32
  }
  %r = tensor.cast %m : tensor<?xf32> to tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// reshape: the shape's sizes at static dimensions of the result are those,
// and all multiply to the source's number of elements.
// CHECK-LABEL: func.func @reshape
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[SHAPE:.*]]: tensor<2xi64>)
// CHECK: %[[S0:.*]] = tensor.extract %[[SHAPE]][%{{.*}}]
// CHECK: %[[I0:.*]] = arith.index_cast %[[S0]] : i64 to index
// CHECK: %[[S1:.*]] = tensor.extract %[[SHAPE]][%{{.*}}]
// CHECK: %[[I1:.*]] = arith.index_cast %[[S1]] : i64 to index
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: soac.check %{{.*}}, "'tensor.reshape': dimension 1 of the shape is %lld, but the result type has %lld" with %[[I1]], %[[C3]] : index, index
// CHECK: %[[ELEMENTS:.*]] = arith.muli
// CHECK: soac.check %{{.*}}, "'tensor.reshape': one of the shape's sizes is negative, or their product overflows"
// CHECK: soac.check %{{.*}}, "'tensor.reshape': the shape's sizes multiply to %lld, but the source has %lld elements" with %{{.*}}, %[[ELEMENTS]] : index, index
// CHECK: tensor.reshape %[[X]](%[[SHAPE]])
func.func @reshape(%x: tensor<?x?xf32>, %shape: tensor<2xi64>) -> tensor<?x3xf32> {
  %r = tensor.reshape %x(%shape) : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}

// -----

// A constant shape of a static source needs none.
// CHECK-LABEL: func.func @reshape_constant
// CHECK-NOT: soac.check
// CHECK: return
func.func @reshape_constant(%x: tensor<12xf32>) -> tensor<3x4xf32> {
  %shape = arith.constant dense<[3, 4]> : tensor<2xindex>
  %r = tensor.reshape %x(%shape) : (tensor<12xf32>, tensor<2xindex>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}

// -----

// insert_slice: each source size is the slice's, after the offsets' checks;
// a row written at its own size needs none.
// CHECK-LABEL: func.func @insert_slice
// CHECK-SAME: (%[[ROW:.*]]: tensor<?xf32>, %[[DEST:.*]]: tensor<?x?xf32>, %[[I:.*]]: index, %[[S:.*]]: index)
// CHECK: soac.check_index
// CHECK: soac.check_index
// CHECK: %[[N:.*]] = tensor.dim %[[ROW]], %{{.*}}
// CHECK: soac.check %{{.*}}, "'tensor.insert_slice': dimension 0 of the source has size %lld, but the slice has %lld" with %[[N]], %[[S]] : index, index
// CHECK: tensor.insert_slice %[[ROW]] into %[[DEST]]
// CHECK-NOT: soac.check %
// CHECK: tensor.insert_slice %[[ROW]] into
// CHECK: return
func.func @insert_slice(%row: tensor<?xf32>, %dest: tensor<?x?xf32>, %i: index, %s: index) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %r = tensor.insert_slice %row into %dest[%i, 0] [1, %s] [1, 1] : tensor<?xf32> into tensor<?x?xf32>
  %n = tensor.dim %row, %c0 : tensor<?xf32>
  %own = tensor.insert_slice %row into %dest[%i, 0] [1, %n] [1, 1] : tensor<?xf32> into tensor<?x?xf32>
  return %r, %own : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// concat: the inputs agree outside the concatenated dimension and add up to
// its static size.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[X:.*]]: tensor<?x?xf32>, %[[Y:.*]]: tensor<?x3xf32>)
// CHECK: soac.check %{{.*}}, "'tensor.concat': input 0 has size %lld in dimension 1, but the result has %lld"
// CHECK-NOT: "'tensor.concat': input 1
// CHECK: %[[SUM:.*]] = arith.addi
// CHECK: soac.check %{{.*}}, "'tensor.concat': the inputs' sizes in dimension 0 add up to %lld, but the result has %lld" with %[[SUM]], %{{.*}} : index, index
// CHECK: tensor.concat
// CPU-LABEL: llvm.func @concat
// CPU: llvm.call @soac_report_error
func.func @concat(%x: tensor<?x?xf32>, %y: tensor<?x3xf32>) -> tensor<6x3xf32> {
  %r = tensor.concat dim(0) %x, %y : (tensor<?x?xf32>, tensor<?x3xf32>) -> tensor<6x3xf32>
  return %r : tensor<6x3xf32>
}

// -----

// assume-in-bounds removes the checks an earlier run made.
// NONE-LABEL: func.func @checked_before
// NONE-NOT: soac.check
// NONE: return
func.func @checked_before(%ok: i1) {
  soac.check %ok, "'tensor.cast': made earlier"
  return
}
