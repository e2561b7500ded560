// A histogram of rows updates the row of each bin in place: the map over the
// bin's row and the value's row computes its result in the bin's row (a
// slice of the loop's accumulator that only the branch taking the bin reads),
// so bufferization copies nothing per row: the one allocation left in the
// sequential lowering is the copy of the destination argument. With OpenMP,
// the chunked form chosen at run time for few bins (soac-to-loops.mlir)
// allocates all chunks' bins once, before its loops, and computes each
// chunk's in place in its slice; the merge writes into the copy of the
// destination: no allocation inside either parallel loop.
// RUN: soac-opt %s --convert-soac-to-loops | FileCheck %s
// RUN: soac-opt %s --soac-lower-to-cpu=openmp=false | FileCheck %s --check-prefix=LOWERED
// RUN: soac-opt %s --soac-lower-to-cpu -mlir-print-ir-after=soac-copies-to-loops -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUFFERS

// CHECK-LABEL: func.func @histogram_of_rows
// CHECK: } else {
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<?x?xf64>)
// CHECK: scf.if
// CHECK: %[[BIN:.*]] = tensor.extract_slice %[[ACC]]
// CHECK: scf.for {{.*}} iter_args(%[[ROW:.*]] = %[[BIN]]) -> (tensor<?xf64>)
// CHECK: tensor.extract %[[ROW]]
// CHECK: tensor.insert {{.*}} into %[[ROW]]
// CHECK: tensor.insert_slice {{.*}} into %[[ACC]]
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[ACC]]

// BUFFERS-LABEL: func.func @histogram_of_rows
// BUFFERS: scf.if
// BUFFERS: memref.alloc({{.*}}) {{.*}} : memref<?x?x?xf64>
// BUFFERS: scf.forall
// BUFFERS-NOT: memref.alloc
// BUFFERS: memref.alloc({{.*}}) {{.*}} : memref<?x?xf64>
// BUFFERS-NEXT: memref.copy %arg0
// BUFFERS-NEXT: scf.forall
// BUFFERS-NOT: memref.alloc
// BUFFERS: } else {

// LOWERED-LABEL: llvm.func @histogram_of_rows
// LOWERED-COUNT-1: llvm.call @_mlir_memref_to_llvm_aligned_alloc
// LOWERED-NOT: llvm.call @_mlir_memref_to_llvm_aligned_alloc
func.func @histogram_of_rows(%dest: tensor<?x?xf64>, %idx: tensor<?xindex>, %rows: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %m = tensor.dim %rows, %c1 : tensor<?x?xf64>
  %neutral = tensor.splat %zero[%m] : tensor<?xf64>
  %r = soac.reduce_by_index dest(%dest : tensor<?x?xf64>) indices(%idx : tensor<?xindex>) ins(%rows : tensor<?x?xf64>) init(%neutral : tensor<?xf64>) -> tensor<?x?xf64> {
  ^bb0(%a: tensor<?xf64>, %b: tensor<?xf64>):
    %s = soac.map ins(%a, %b : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
    ^bb0(%x: f64, %y: f64):
      %z = arith.addf %x, %y : f64
      soac.yield %z : f64
    }
    soac.yield %s : tensor<?xf64>
  }
  return %r : tensor<?x?xf64>
}
