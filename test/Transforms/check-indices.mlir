// soac-check-indices: every tensor access at an index not known to be in
// range reads a checked index.
// RUN: soac-opt %s --soac-check-indices --split-input-file | FileCheck %s

// A gather in a map body.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[IDX:.*]]: tensor<?xindex>)
// CHECK: ^bb0(%[[I:.*]]: index):
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK: %[[J:.*]] = soac.check_index %[[I]] below %[[N]], "'tensor.extract' dimension 0"
// CHECK: tensor.extract %[[X]][%[[J]]]
func.func @gather(%x: tensor<?xf32>, %idx: tensor<?xindex>) -> tensor<?xf32> {
  %r = soac.map ins(%idx : tensor<?xindex>) -> tensor<?xf32> {
  ^bb0(%i: index):
    %v = tensor.extract %x[%i] : tensor<?xf32>
    soac.yield %v : f32
  }
  return %r : tensor<?xf32>
}

// -----

// Constant indices below static sizes need no check; every other index of
// a 2-D access is checked against its own dimension.
// CHECK-LABEL: func.func @two_dims
// CHECK-SAME: (%[[X:.*]]: tensor<4x?xf32>, %[[I:.*]]: index)
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[M:.*]] = tensor.dim %[[X]], %[[C1]]
// CHECK: %[[J:.*]] = soac.check_index %[[I]] below %[[M]], "'tensor.extract' dimension 1"
// CHECK: tensor.extract %[[X]][%[[C3]], %[[J]]]
// CHECK-NOT: soac.check_index
func.func @two_dims(%x: tensor<4x?xf32>, %i: index) -> f32 {
  %c3 = arith.constant 3 : index
  %v = tensor.extract %x[%c3, %i] : tensor<4x?xf32>
  return %v : f32
}

// -----

// A constant index past a static size is checked (it fails when reached).
// CHECK-LABEL: func.func @constant_past_the_end
// CHECK: soac.check_index
func.func @constant_past_the_end(%x: tensor<4xf32>) -> f32 {
  %c4 = arith.constant 4 : index
  %v = tensor.extract %x[%c4] : tensor<4xf32>
  return %v : f32
}

// -----

// Writes are checked too.
// CHECK-LABEL: func.func @insert
// CHECK: %[[J:.*]] = soac.check_index %{{.*}} below %{{.*}}, "'tensor.insert' dimension 0"
// CHECK: tensor.insert %{{.*}} into %{{.*}}[%[[J]]]
func.func @insert(%x: tensor<?xf32>, %i: index, %v: f32) -> tensor<?xf32> {
  %r = tensor.insert %v into %x[%i] : tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A slice with a dynamic offset and size: the offset is checked against the
// offsets at which the slice fits (size - count + 1, or size + 1 for an
// empty slice), and the slice reads the checked offset.
// CHECK-LABEL: func.func @slice
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[O:.*]]: index, %[[S:.*]]: index)
// CHECK: %[[N:.*]] = tensor.dim %[[X]]
// CHECK: %[[EMPTY:.*]] = arith.cmpi eq, %[[S]], %{{.*}}
// CHECK: %[[BOUND:.*]] = arith.select %[[EMPTY]]
// CHECK: %[[OFFSET:.*]] = soac.check_index %[[O]] below %[[BOUND]], "'tensor.extract_slice' dimension 0 (the offsets at which the slice fits)"
// CHECK: tensor.extract_slice %[[X]][%[[OFFSET]]] [%[[S]]] [1]
func.func @slice(%x: tensor<?xf32>, %o: index, %s: index) -> tensor<?xf32> {
  %r = tensor.extract_slice %x[%o] [%s] [1] : tensor<?xf32> to tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// An insert_slice's offset is checked as soon as the destination and the
// offset exist, before the map computing what it inserts: convert-soac-to-
// loops then computes the map in the slice.
// CHECK-LABEL: func.func @insert_slice_checked_early
// CHECK-SAME: (%[[X:.*]]: tensor<?xf32>, %[[D:.*]]: tensor<?xf32>, %[[O:.*]]: index)
// CHECK: %[[OFFSET:.*]] = soac.check_index %[[O]] below %{{.*}}, "'tensor.insert_slice' dimension 0 (the offsets at which the slice fits)"
// CHECK: %[[M:.*]] = soac.map
// CHECK: tensor.insert_slice %[[M]] into %[[D]][%[[OFFSET]]]
func.func @insert_slice_checked_early(%x: tensor<?xf32>, %d: tensor<?xf32>, %o: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %m = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%a: f32):
    %e = math.exp %a : f32
    soac.yield %e : f32
  }
  %r = tensor.insert_slice %m into %d[%o] [%n] [1] : tensor<?xf32> into tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

// A static slice of a dynamic row of a 2-D tensor: static offsets become
// checked operands where the dimension is dynamic.
// CHECK-LABEL: func.func @row
// CHECK: %[[ROW:.*]] = soac.check_index %{{.*}} below %{{.*}}, "'tensor.extract_slice' dimension 0
// CHECK: %[[COLUMN:.*]] = soac.check_index %{{.*}} below %{{.*}}, "'tensor.extract_slice' dimension 1
// CHECK: tensor.extract_slice %{{.*}}[%[[ROW]], %[[COLUMN]]] [1, 4] [1, 1]
func.func @row(%x: tensor<?x?xf32>, %i: index) -> tensor<4xf32> {
  %r = tensor.extract_slice %x[%i, 0] [1, 4] [1, 1] : tensor<?x?xf32> to tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Code marked soac.assume_in_bounds is left alone.
// CHECK-LABEL: func.func @assumed
// CHECK-NOT: soac.check_index
func.func @assumed(%x: tensor<?xf32>, %i: index) -> f32 attributes {soac.assume_in_bounds} {
  %v = tensor.extract %x[%i] : tensor<?xf32>
  return %v : f32
}
