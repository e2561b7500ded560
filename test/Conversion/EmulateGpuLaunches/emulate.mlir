// Each gpu.launch becomes loops over blocks, then threads (x innermost),
// around its body; ids and sizes are the loops' values.
// RUN: soac-opt %s --soac-emulate-gpu-launches --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @double
// CHECK-NOT: gpu.launch
// CHECK: scf.for %[[BZ:.*]] = %{{.*}} to %[[GZ:.*]] step
// CHECK: scf.for %[[BY:.*]] = %{{.*}} to %[[GY:.*]] step
// CHECK: scf.for %[[BX:.*]] = %{{.*}} to %[[BLOCKS:.*]] step
// CHECK: scf.for %[[TZ:.*]] =
// CHECK: scf.for %[[TY:.*]] =
// CHECK: scf.for %[[TX:.*]] = %{{.*}} to %[[THREADS:.*]] step
// CHECK: %[[BASE:.*]] = arith.muli %[[BX]], %[[THREADS]]
// CHECK: %[[I:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK: memref.load %{{.*}}[%[[I]]]
// CHECK: memref.store
func.func @double(%x: memref<?xf32>, %blocks: index) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %blocks, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %base, %tx : index
    %v = memref.load %x[%i] : memref<?xf32>
    %d = arith.addf %v, %v : f32
    memref.store %d, %x[%i] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// Id ops inside the body read the same loops.
// CHECK-LABEL: func.func @ids_from_ops
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[BX:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %[[TX:.*]] =
// CHECK-NOT: gpu.thread_id
// CHECK: memref.store %[[BX]], %{{.*}}[%[[TX]]]
func.func @ids_from_ops(%x: memref<256xindex>, %blocks: index) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %blocks, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %t = gpu.thread_id x
    %b = gpu.block_id x
    memref.store %b, %x[%t] : memref<256xindex>
    gpu.terminator
  }
  return
}
