// soac-expand-shape-to-reinterpret-cast: an expand_shape with several
// dynamic sizes in one group becomes a reinterpret_cast with the sizes it
// names (expand-strided-metadata asserts on it); others are left alone.
// RUN: soac-opt %s --soac-expand-shape-to-reinterpret-cast --canonicalize --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @two_dynamic_sizes(
// CHECK-SAME: %[[M:.*]]: memref<?xf32>, %[[A:.*]]: index, %[[B:.*]]: index)
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[M]] to offset: [0], sizes: [%[[A]], %[[B]]], strides: [%[[B]], 1]
// CHECK-NOT: memref.expand_shape
// CHECK: return %[[V]]
func.func @two_dynamic_sizes(%m: memref<?xf32>, %a: index, %b: index) -> memref<?x?xf32> {
  %e = memref.expand_shape %m [[0, 1]] output_shape [%a, %b] : memref<?xf32> into memref<?x?xf32>
  return %e : memref<?x?xf32>
}

// -----

// A strided source: each new dimension's stride is the source's times the
// sizes after it in its group.
// CHECK-LABEL: func.func @strided_source(
// CHECK-SAME: %[[M:.*]]: memref<?x4xf32, strided<[?, 1], offset: ?>>, %[[A:.*]]: index, %[[B:.*]]: index)
// CHECK: %{{.*}}, %[[OFFSET:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[M]]
// CHECK: %[[S0:.*]] = arith.muli %[[STRIDES]]#0, %[[B]]
// CHECK: memref.reinterpret_cast %[[M]] to offset: [%[[OFFSET]]], sizes: [%[[A]], %[[B]], 4], strides: [%[[S0]], %[[STRIDES]]#0, 1]
func.func @strided_source(%m: memref<?x4xf32, strided<[?, 1], offset: ?>>, %a: index, %b: index)
    -> memref<?x?x4xf32, strided<[?, ?, 1], offset: ?>> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%a, %b, 4]
      : memref<?x4xf32, strided<[?, 1], offset: ?>> into memref<?x?x4xf32, strided<[?, ?, 1], offset: ?>>
  return %e : memref<?x?x4xf32, strided<[?, ?, 1], offset: ?>>
}

// -----

// One dynamic size per group: expand-strided-metadata handles it.
// CHECK-LABEL: func.func @one_dynamic_size
// CHECK: memref.expand_shape
// CHECK-NOT: memref.reinterpret_cast
func.func @one_dynamic_size(%m: memref<?xf32>, %a: index) -> memref<?x4xf32> {
  %e = memref.expand_shape %m [[0, 1]] output_shape [%a, 4] : memref<?xf32> into memref<?x4xf32>
  return %e : memref<?x4xf32>
}
