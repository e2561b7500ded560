// With report-to-runtime=false (the GPU pipeline's host code), index checks
// become cf.asserts and nothing else changes.
// RUN: soac-opt %s --soac-lower-checks=report-to-runtime=false | FileCheck %s

// CHECK-LABEL: func.func @host_index
// CHECK: %[[OK:.*]] = arith.cmpi ult
// CHECK: cf.assert %[[OK]], "f.py:3:5: 'tensor.extract' dimension 0: index out of range"
// CHECK: memref.alloc
// CHECK-NOT: soac_report_error
// CHECK-NOT: extract_aligned_pointer
func.func @host_index(%x: memref<?xf32>, %i: index, %n: index) -> memref<?xf32> {
  %j = soac.check_index %i below %n, "'tensor.extract' dimension 0" loc("f.py":3:5)
  %v = memref.load %x[%j] : memref<?xf32>
  %buffer = memref.alloc(%n) : memref<?xf32>
  return %buffer : memref<?xf32>
}

// CHECK-LABEL: func.func @host_size
// CHECK: cf.assert %{{.*}}, "f.py:7:3: 'tensor.cast': dimension 0 of the source has size ?, but the result type has ?"
// CHECK-NOT: soac.check
func.func @host_size(%n: index) {
  %c4 = arith.constant 4 : index
  %same = arith.cmpi eq, %n, %c4 : index
  soac.check %same, "'tensor.cast': dimension 0 of the source has size %lld, but the result type has %lld" with %n, %c4 : index, index loc("f.py":7:3)
  return
}
