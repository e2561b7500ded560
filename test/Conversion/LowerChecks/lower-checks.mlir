// soac-lower-checks: run-time checks of host code call soac's runtime when
// they fail: on the calling thread soac_report_error (which stops the call),
// in parallel code soac_record_error, with the rest of the block skipped.
// RUN: soac-opt %s --soac-lower-checks --split-input-file | FileCheck %s

// CHECK-LABEL: llvm.func @soac_report_error(i32, !llvm.ptr, i64, i64) attributes {passthrough = ["cold", "nounwind", "noreturn"]}
// CHECK-LABEL: func.func @host_assert
// CHECK-SAME: (%[[A:.*]]: index, %[[B:.*]]: index)
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[A]], %[[B]]
// CHECK-NOT: cf.assert
// CHECK: %[[FAILED:.*]] = arith.xori %[[SAME]], %true
// CHECK: scf.if %[[FAILED]] {
// CHECK: %[[KIND:.*]] = arith.constant 1 : i32
// CHECK: %[[FORMAT:.*]] = llvm.mlir.addressof @soac_check_0 : !llvm.ptr
// CHECK: llvm.call @soac_report_error(%[[KIND]], %[[FORMAT]], %{{.*}}, %{{.*}})
// CHECK: }
// CHECK: %[[N:.*]] = arith.minui %[[A]], %[[B]]
// CHECK: return %[[N]]
func.func @host_assert(%a: index, %b: index) -> index {
  %same = arith.cmpi eq, %a, %b : index
  cf.assert %same, "f.py:1:1: 100% different"
  %n = arith.minui %a, %b : index
  return %n : index
}

// -----

// An index check on the host: the message has the location, what was
// accessed, and printf conversions for the index and the size.
// CHECK: llvm.mlir.global private constant @soac_check_0("f.py:3:5: 'tensor.extract' dimension 0: index %lld is out of range for size %lld\00")
// CHECK-LABEL: func.func @host_index
// CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[I:.*]]: index, %[[N:.*]]: index)
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[I]], %[[N]]
// CHECK: scf.if
// CHECK: %[[KIND:.*]] = arith.constant 2 : i32
// CHECK: %[[I64:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK: %[[N64:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: llvm.call @soac_report_error(%[[KIND]], %{{.*}}, %[[I64]], %[[N64]])
// CHECK-NOT: soac.check_index
// CHECK: memref.load %[[X]][%[[I]]]
func.func @host_index(%x: memref<?xf32>, %i: index, %n: index) -> f32 {
  %j = soac.check_index %i below %n, "'tensor.extract' dimension 0" loc("f.py":3:5)
  %v = memref.load %x[%j] : memref<?xf32>
  return %v : f32
}

// -----

// In a parallel loop the failure is recorded and the rest of the iteration
// is skipped: the load runs only when the index is in range. The call stops
// after the loop (which runs on one thread here: openmp=false).
// CHECK-LABEL: func.func @parallel_index
// CHECK: %[[CALL:.*]] = llvm.call @soac_parallel_call()
// CHECK: scf.parallel (%[[K:.*]]) =
// CHECK: %[[I:.*]] = memref.load
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[I]], %{{.*}}
// CHECK: llvm.call @soac_record_error
// CHECK: scf.if %[[OK]] {
// CHECK-NEXT: %[[V:.*]] = memref.load %{{.*}}[%[[I]]]
// CHECK-NEXT: memref.store %[[V]]
// CHECK-NEXT: }
// CHECK-NEXT: scf.reduce
// CHECK: llvm.call @soac_parallel_check(%[[CALL]])
func.func @parallel_index(%x: memref<?xf32>, %idx: memref<?xindex>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %idx, %c0 : memref<?xindex>
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.parallel (%k) = (%c0) to (%m) step (%c1) {
    %i = memref.load %idx[%k] : memref<?xindex>
    %j = soac.check_index %i below %n, "'tensor.extract' dimension 0"
    %v = memref.load %x[%j] : memref<?xf32>
    memref.store %v, %out[%k] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Values the skipped code yields to the rest are zeros when it is skipped.
// CHECK-LABEL: func.func @parallel_assert_yields
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = {{.*}}) -> (f32)
// CHECK: llvm.call @soac_record_error(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, !llvm.ptr, i64, i64) -> ()
// CHECK: %[[SUM:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK: %[[ADDED:.*]] = arith.addf %[[ACC]]
// CHECK: scf.yield %[[ADDED]] : f32
// CHECK: } else {
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.yield %[[ZERO]] : f32
// CHECK: scf.yield %[[SUM]] : f32
func.func @parallel_assert_yields(%x: memref<?xf32>, %n: index, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%k) = (%c0) to (%n) step (%c1) {
    %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %m = memref.dim %x, %c0 : memref<?xf32>
      %same = arith.cmpi eq, %m, %n : index
      cf.assert %same, "sizes differ"
      %v = memref.load %x[%i] : memref<?xf32>
      %added = arith.addf %acc, %v : f32
      scf.yield %added : f32
    }
    memref.store %s, %out[%k] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// Every allocation: its size in bytes must not overflow, and it must succeed.
// CHECK-LABEL: func.func @allocation
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK: %[[LOW:.*]], %[[HIGH:.*]] = arith.mului_extended %{{.*}}, %[[N]] : index
// CHECK: llvm.call @soac_report_error
// CHECK: %[[BUFFER:.*]] = memref.alloc(%[[N]]) : memref<?xf64>
// CHECK: %[[ADDRESS:.*]] = memref.extract_aligned_pointer_as_index %[[BUFFER]]
// CHECK: %[[ALLOCATED:.*]] = arith.cmpi ne, %[[ADDRESS]], %{{.*}}
// CHECK: %[[KIND:.*]] = arith.constant 3 : i32
// CHECK: llvm.call @soac_report_error(%[[KIND]]
// CHECK: return %[[BUFFER]]
func.func @allocation(%n: index) -> memref<?xf64> {
  %buffer = memref.alloc(%n) : memref<?xf64>
  return %buffer : memref<?xf64>
}

// -----

// The threads of a parallel region learn the call they work for; the call
// stops after the region if one of them failed.
// CHECK-LABEL: func.func @region
// CHECK: %[[CALL:.*]] = llvm.call @soac_parallel_call() : () -> !llvm.ptr
// CHECK: omp.parallel {
// CHECK-NEXT: llvm.call @soac_parallel_enter(%[[CALL]])
// CHECK: llvm.call @soac_parallel_exit()
// CHECK-NEXT: omp.terminator
// CHECK: llvm.call @soac_parallel_check(%[[CALL]])
func.func @region() {
  omp.parallel {
    omp.terminator
  }
  return
}

// -----

// A condition asserted again where an earlier assert of it dominates cannot
// fail there: only the first one is checked. An assert of it in a branch
// the first does not dominate stays.
// CHECK-LABEL: func.func @repeated_asserts
// CHECK: scf.if
// CHECK: llvm.call @soac_report_error
// CHECK: }
// CHECK: llvm.call @soac_report_error
// CHECK-NOT: llvm.call @soac_report_error
// CHECK: return
func.func @repeated_asserts(%a: index, %b: index, %c: i1) {
  %same = arith.cmpi eq, %a, %b : index
  scf.if %c {
    cf.assert %same, "sizes differ"
  }
  cf.assert %same, "sizes differ"
  cf.assert %same, "sizes differ"
  scf.for %i = %a to %b step %a {
    cf.assert %same, "sizes differ"
  }
  return
}

// -----

// A check of values that do not change in the sequential loops around it
// (a constant index into a row of a fixed size) runs once, before them,
// unless they do not run; one of a value an outer loop changes runs in
// that loop, before the inner one.
// CHECK-LABEL: func.func @invariant_checks
// CHECK-SAME: (%[[X:.*]]: memref<?xf64>, %[[N:.*]]: index, %[[M:.*]]: index, %[[SIZE:.*]]: index)
// CHECK: %[[OK:.*]] = arith.cmpi ult, %c9, %[[SIZE]]
// CHECK: %[[INNER_RUNS:.*]] = arith.cmpi slt, %c0, %[[M]]
// CHECK: %[[INNER_EMPTY:.*]] = arith.xori %[[INNER_RUNS]], %true
// CHECK: %[[OK_OR_INNER:.*]] = arith.ori %[[OK]], %[[INNER_EMPTY]]
// CHECK: %[[OUTER_RUNS:.*]] = arith.cmpi slt, %c0, %[[N]]
// CHECK: %[[OUTER_EMPTY:.*]] = arith.xori %[[OUTER_RUNS]], %true
// CHECK: %[[HOISTED:.*]] = arith.ori %[[OK_OR_INNER]], %[[OUTER_EMPTY]]
// CHECK: %[[FAILED:.*]] = arith.xori %[[HOISTED]], %true
// CHECK: scf.if %[[FAILED]] {
// CHECK: llvm.call @soac_report_error
// CHECK: }
// CHECK: scf.for %[[I:.*]] =
// CHECK: arith.cmpi ult, %[[I]], %[[SIZE]]
// CHECK: arith.cmpi slt, %c0, %[[M]]
// CHECK: llvm.call @soac_report_error
// CHECK: scf.for
// CHECK-NOT: soac_report_error
// CHECK: memref.load %[[X]][%c9]
// CHECK: memref.store
func.func @invariant_checks(%x: memref<?xf64>, %n: index, %m: index, %size: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %m step %c1 {
      %k = soac.check_index %c9 below %size, "'tensor.extract' dimension 0"
      %v = memref.load %x[%k] : memref<?xf64>
      %l = soac.check_index %i below %size, "'tensor.extract' dimension 0"
      memref.store %v, %x[%l] : memref<?xf64>
    }
  }
  return
}

// -----

// A soac.check on the host reports its message as a format for its values
// (a failed size check: kind 1, an ExecutionError in Python), after the
// location.
// CHECK: llvm.mlir.global private constant @soac_check_0("f.py:7:3: 'tensor.cast': dimension 0 of the source has size %lld, but the result type has %lld\00")
// CHECK-LABEL: func.func @host_size
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK: %[[C4:.*]] = arith.constant 4 : index
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[N]], %[[C4]]
// CHECK: %[[FAILED:.*]] = arith.xori %[[SAME]], %true
// CHECK: scf.if %[[FAILED]] {
// CHECK: %[[KIND:.*]] = arith.constant 1 : i32
// CHECK: %[[N64:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: %[[C464:.*]] = arith.index_cast %[[C4]] : index to i64
// CHECK: llvm.call @soac_report_error(%[[KIND]], %{{.*}}, %[[N64]], %[[C464]])
// CHECK-NOT: soac.check
func.func @host_size(%n: index) {
  %c4 = arith.constant 4 : index
  %same = arith.cmpi eq, %n, %c4 : index
  soac.check %same, "'tensor.cast': dimension 0 of the source has size %lld, but the result type has %lld" with %n, %c4 : index, index loc("f.py":7:3)
  return
}

// -----

// Checks left inside a GPU kernel (those soac-lower-kernel-checks could not
// guard) trap it (cf.assert).
// CHECK-LABEL: func.func @kernel_checks
// CHECK: gpu.launch
// CHECK: %[[OK:.*]] = arith.cmpi ult
// CHECK: cf.assert %[[OK]], "{{.*}}'tensor.extract' dimension 0: index out of range"
// CHECK: cf.assert
// CHECK-NOT: soac_report_error
func.func @kernel_checks(%a: index, %b: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %i = soac.check_index %a below %b, "'tensor.extract' dimension 0"
    %same = arith.cmpi eq, %i, %b : index
    cf.assert %same, "in a kernel"
    gpu.terminator
  }
  return
}


// -----

// In a kernel (one soac-lower-kernel-checks could not guard) a soac.check
// traps it: a cf.assert, whose message shows `?`
// for the values (and `%` for `%%`).
// CHECK-LABEL: func.func @kernel_size
// CHECK: gpu.launch
// CHECK: cf.assert %{{.*}}, "f.py:8:3: 'tensor.cast': size ? is not ?, 100% sure"
// CHECK-NOT: soac_report_error
func.func @kernel_size(%n: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %same = arith.cmpi eq, %n, %c4 : index
    soac.check %same, "'tensor.cast': size %lld is not %lld, 100%% sure" with %n, %c4 : index, index loc("f.py":8:3)
    gpu.terminator
  }
  return
}
