// RUN: soac-opt %s --soac-host-buffer-copies --split-input-file | FileCheck %s

// A host read of a buffer: the element copied into a stack buffer by the
// runtime, then loaded from there; the stack buffer is made at the entry.
// CHECK-LABEL: func.func @read
// CHECK: %[[STAGE:.*]] = memref.alloca() : memref<f32>
// CHECK: scf.for
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}, %[[STRIDE:.*]] = memref.extract_strided_metadata %arg0
// CHECK: memref.extract_aligned_pointer_as_index %arg0
// CHECK: arith.muli %{{.*}}, %[[STRIDE]]
// CHECK: %[[FROM:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK: %[[TO:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: call @soac_gpu_copy(%[[TO]], %[[FROM]], %[[FOUR]]) : (i64, i64, i64) -> ()
// CHECK: memref.load %[[STAGE]][] : memref<f32>
// CHECK: func.func private @soac_gpu_copy(i64, i64, i64)
func.func @read(%b: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %v = memref.load %b[%i] : memref<?xf32>
    %t = arith.addf %acc, %v : f32
    scf.yield %t : f32
  }
  return %s : f32
}

// -----

// A host write: the value stored into a stack buffer, which is copied to
// the element (of a buffer allocated by the function: device memory too).
// CHECK-LABEL: func.func @write
// CHECK: %[[STAGE:.*]] = memref.alloca() : memref<f64>
// CHECK: %[[B:.*]] = memref.alloc() : memref<3xf64>
// CHECK: memref.store %arg0, %[[STAGE]][] : memref<f64>
// CHECK: call @soac_gpu_copy
// CHECK-NOT: memref.store
// CHECK: return %[[B]]
func.func @write(%v: f64) -> memref<3xf64> {
  %c2 = arith.constant 2 : index
  %b = memref.alloc() : memref<3xf64>
  memref.store %v, %b[%c2] : memref<3xf64>
  return %b : memref<3xf64>
}

// -----

// A copy between contiguous GPU buffers: one copy of all their bytes,
// queued on the stream (the host waits for nothing).
// CHECK-LABEL: func.func @copy
// CHECK: %[[BYTES:.*]] = arith.constant 8 : index
// CHECK: %[[DIM:.*]] = memref.dim %arg0, %{{.*}} : memref<?xi64>
// CHECK: %[[COUNT:.*]] = arith.muli %[[BYTES]], %[[DIM]]
// CHECK: %[[SIZE:.*]] = arith.index_cast %[[COUNT]] : index to i64
// CHECK: call @soac_gpu_copy_buffers(%{{.*}}, %{{.*}}, %[[SIZE]])
// CHECK-NOT: memref.copy
// CHECK: func.func private @soac_gpu_copy_buffers(i64, i64, i64)
// CHECK-NOT: func.func private @soac_gpu_copy(
func.func @copy(%a: memref<?xi64>, %b: memref<?xi64>) {
  memref.copy %a, %b : memref<?xi64> to memref<?xi64>
  return
}

// -----

// A copy from host memory (the stack) into a GPU buffer: waited for, as the
// host may write its side again next.
// CHECK-LABEL: func.func @copy_from_host
// CHECK: call @soac_gpu_copy(
// CHECK-NOT: soac_gpu_copy_buffers
// CHECK-NOT: memref.copy
func.func @copy_from_host(%b: memref<4xf32>) {
  %stack = memref.alloca() : memref<4xf32>
  memref.copy %stack, %b : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A copy between GPU buffers that are not contiguous (a slice of rows): the
// runtime's strided copy, given the sizes, then the source's and the
// target's strides, in a stack buffer made at the entry.
// CHECK-LABEL: func.func @strided_copy
// CHECK-SAME: (%[[SRC:.*]]: memref<?x?xf64>, %[[DST:.*]]: memref<?x?xf64, strided<[?, 1], offset: ?>>)
// CHECK: %[[SHAPE:.*]] = memref.alloca() : memref<6xi64>
// CHECK: %{{.*}}, %{{.*}}, %[[SIZES:.*]]:2, %[[FROM:.*]]:2 = memref.extract_strided_metadata %[[SRC]]
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[TO:.*]]:2 = memref.extract_strided_metadata %[[DST]]
// CHECK: %[[W0:.*]] = arith.index_cast %[[SIZES]]#0 : index to i64
// CHECK: memref.store %[[W0]], %[[SHAPE]][%c0{{.*}}]
// CHECK: %[[W5:.*]] = arith.index_cast %[[TO]]#1 : index to i64
// CHECK: memref.store %[[W5]], %[[SHAPE]][%c5{{.*}}]
// CHECK: call @soac_gpu_copy_strided(%{{.*}}, %{{.*}}, %c8_i64, %c2_i64, %{{.*}}) : (i64, i64, i64, i64, i64) -> ()
// CHECK-NOT: memref.copy
// CHECK: func.func private @soac_gpu_copy_strided(i64, i64, i64, i64, i64)
func.func @strided_copy(%a: memref<?x?xf64>, %b: memref<?x?xf64, strided<[?, 1], offset: ?>>) {
  memref.copy %a, %b : memref<?x?xf64> to memref<?x?xf64, strided<[?, 1], offset: ?>>
  return
}

// -----

// Left alone: the stack, buffers of i1, strided copies with a side on the
// host (memrefCopy), kernels.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: soac_gpu_copy
// CHECK: memref.load %{{.*}}[] : memref<f32>
// CHECK: memref.load %arg0[%{{.*}}] : memref<?xi1>
// CHECK: memref.copy %arg1, %[[VIEW:.*]] :
// CHECK: gpu.launch
// CHECK: memref.store
func.func @left_alone(%flags: memref<?xi1>, %a: memref<2xf32, strided<[2]>>, %out: memref<?xf32>) -> (f32, i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %stack = memref.alloca() : memref<f32>
  %s = memref.load %stack[] : memref<f32>
  %f = memref.load %flags[%c0] : memref<?xi1>
  %row = memref.alloca() : memref<4xf32>
  %b = memref.subview %row[0] [2] [2] : memref<4xf32> to memref<2xf32, strided<[2]>>
  memref.copy %a, %b : memref<2xf32, strided<[2]>> to memref<2xf32, strided<[2]>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %s, %out[%c0] : memref<?xf32>
    gpu.terminator
  }
  return %s, %f : f32, i1
}

// -----

// Host-only scratch (the deallocation pipeline's arrays for its helper):
// static, used in its block by loads, stores, its dealloc and a private
// helper that only loads, stores and measures it; it moves to the stack, so
// neither the helper's accesses nor the caller's become copies.
// CHECK-LABEL: func.func @scratch
// CHECK: %[[STACK:.*]] = memref.alloca() : memref<2xindex>
// CHECK-NOT: memref.alloc()
// CHECK: memref.store %{{.*}}, %[[STACK]][%{{.*}}] : memref<2xindex>
// CHECK: call @helper
// CHECK-NOT: memref.dealloc
// CHECK-NOT: soac_gpu_copy
// CHECK: func.func private @helper
// CHECK-NOT: soac_gpu_copy
// CHECK: memref.load %arg0
func.func @scratch(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %a = memref.alloc() : memref<2xindex>
    memref.store %i, %a[%c0] : memref<2xindex>
    %cast = memref.cast %a : memref<2xindex> to memref<?xindex>
    func.call @helper(%cast) : (memref<?xindex>) -> ()
    memref.dealloc %a : memref<2xindex>
  }
  return
}
func.func private @helper(%a: memref<?xindex>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<?xindex>
  %d = memref.dim %a, %c0 : memref<?xindex>
  memref.store %d, %a[%c0] : memref<?xindex>
  return
}
