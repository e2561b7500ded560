// soac-lower-kernel-checks: a failed check in a kernel records itself (its
// kind, the address of its message, its values) in the calling thread's
// failure record and skips what it guards; after the launch, host code hands
// the record to the runtime (soac_check_kernel_failures), which reports it
// once the kernel is done.
// RUN: soac-opt %s --soac-lower-kernel-checks --split-input-file | FileCheck %s

// CHECK: llvm.mlir.global private constant @[[$MESSAGE:soac_check_[0-9]+]]("f.py:4:7: 'tensor.extract' dimension 0: index %lld is out of range for size %lld\00")
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[X:.*]]: memref<?xf32>, %[[I:.*]]: index, %[[N:.*]]: index)
// CHECK: %[[RECORD:.*]] = llvm.call @soac_failure_record() : () -> !llvm.ptr
// CHECK: %[[ADDRESS:.*]] = llvm.mlir.addressof @[[$MESSAGE]] : !llvm.ptr
// CHECK: %[[MESSAGE:.*]] = llvm.ptrtoint %[[ADDRESS]] : !llvm.ptr to i64
// CHECK: gpu.launch
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[I]], %[[N]] : index
// CHECK: %[[FAILED:.*]] = arith.xori %[[OK]], %true
// CHECK: scf.if %[[FAILED]] {
// CHECK: %[[KIND:.*]] = arith.constant 2 : i64
// CHECK: %[[FIRST:.*]] = llvm.cmpxchg %[[RECORD]], %c0_i64{{.*}}, %[[KIND]] monotonic monotonic
// CHECK: %[[WON:.*]] = llvm.extractvalue %[[FIRST]][1]
// CHECK: scf.if %[[WON]] {
// CHECK: %[[AT_MESSAGE:.*]] = llvm.getelementptr %[[RECORD]][1]
// CHECK: llvm.store %[[MESSAGE]], %[[AT_MESSAGE]]
// CHECK: llvm.getelementptr %[[RECORD]][2]
// CHECK: llvm.store
// CHECK: llvm.getelementptr %[[RECORD]][3]
// CHECK: llvm.store
// CHECK: scf.if %[[OK]] {
// CHECK-NEXT: memref.load %[[X]][%[[I]]]
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK: gpu.terminator
// CHECK: }
// CHECK-NEXT: llvm.call @soac_check_kernel_failures() : () -> ()
// CHECK-NEXT: return
func.func @gather(%x: memref<?xf32>, %i: index, %n: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %j = soac.check_index %i below %n, "'tensor.extract' dimension 0" loc("f.py":4:7)
    %v = memref.load %x[%j] : memref<?xf32>
    memref.store %v, %x[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// The threads of a block meet at a barrier: a thread that failed skips its
// read (and gives a zero to what follows) but not the barrier.
// CHECK-LABEL: func.func @before_a_barrier
// CHECK: gpu.launch
// CHECK: %[[OK:.*]] = arith.cmpi ult
// CHECK: llvm.cmpxchg
// CHECK: %[[READ:.*]] = scf.if %[[OK]] -> (f32) {
// CHECK-NEXT: %[[V:.*]] = memref.load
// CHECK-NEXT: scf.yield %[[V]] : f32
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: scf.yield %[[ZERO]] : f32
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.store %[[READ]]
func.func @before_a_barrier(%x: memref<?xf32>, %i: index, %n: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %j = soac.check_index %i below %n, "'tensor.extract' dimension 0"
    %v = memref.load %x[%j] : memref<?xf32>
    gpu.barrier
    memref.store %v, %x[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A checked index used past a barrier cannot be guarded without skipping
// the barrier, nor a buffer (a subview) used past one (it has no zero to
// give what follows): those checks stay, for soac-lower-checks to make
// traps. A kernel's cf.assert is a check of kind 1, with the assert's
// message; the checks that stay get none.
// CHECK: llvm.mlir.global private constant @[[$ASSERT:soac_check_[0-9]+]]("sizes differ\00")
// CHECK-NOT: llvm.mlir.global
// CHECK-LABEL: func.func @unguardable
// CHECK: llvm.call @soac_failure_record
// CHECK: llvm.mlir.addressof @[[$ASSERT]]
// CHECK: gpu.launch
// CHECK: soac.check_index
// CHECK: gpu.barrier
// CHECK: soac.check_index
// CHECK: memref.subview
// CHECK: gpu.barrier
// CHECK: memref.store
// CHECK: llvm.cmpxchg %{{.*}}, %c0_i64{{.*}}, %c1_i64
// CHECK: gpu.terminator
// CHECK: llvm.call @soac_check_kernel_failures
func.func @unguardable(%x: memref<?xf32>, %i: index, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %j = soac.check_index %i below %n, "'tensor.extract' dimension 0"
    gpu.barrier
    %v = memref.load %x[%j] : memref<?xf32>
    %k = soac.check_index %i below %n, "'tensor.extract_slice' offset"
    %view = memref.subview %x[%k] [1] [1] : memref<?xf32> to memref<1xf32, strided<[1], offset: ?>>
    gpu.barrier
    memref.store %v, %view[%c0] : memref<1xf32, strided<[1], offset: ?>>
    %same = arith.cmpi eq, %i, %n : index
    cf.assert %same, "sizes differ"
    gpu.terminator
  }
  return
}

// -----

// A launch without checks is left alone.
// CHECK-LABEL: func.func @unchecked
// CHECK-NOT: soac_failure_record
// CHECK: gpu.launch
// CHECK-NOT: llvm.call @soac_check_kernel_failures
func.func @unchecked(%x: memref<?xf32>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %zero, %x[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A soac.check in a kernel records its kind (a size check: 1), its
// message and its two values.
// CHECK: llvm.mlir.global private constant @[[$SIZES:soac_check_[0-9]+]]("f.py:9:3: 'tensor.cast': dimension 0 of the source has size %lld, but the result type has %lld\00")
// CHECK-LABEL: func.func @size_check
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK: llvm.mlir.addressof @[[$SIZES]]
// CHECK: gpu.launch
// CHECK: %[[KIND:.*]] = arith.constant 1 : i64
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %[[KIND]]
// CHECK: %[[FIRST:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: llvm.store %[[FIRST]]
// CHECK: %[[SECOND:.*]] = arith.index_cast %c4 : index to i64
// CHECK: llvm.store %[[SECOND]]
// CHECK-NOT: soac.check
// CHECK: gpu.terminator
// CHECK: llvm.call @soac_check_kernel_failures
func.func @size_check(%n: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %same = arith.cmpi eq, %n, %c4 : index
    soac.check %same, "'tensor.cast': dimension 0 of the source has size %lld, but the result type has %lld" with %n, %c4 : index, index loc("f.py":9:3)
    gpu.terminator
  }
  return
}
