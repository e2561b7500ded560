// soac-sink-scalar-reads: a scalar that kernels wrote into a buffer and only
// later kernels use (directly or through host arithmetic) is loaded by those
// kernels, which redo the arithmetic; the host no longer reads it.
// RUN: soac-opt %s --soac-sink-scalar-reads --split-input-file | FileCheck %s

// The softmax normaliser of a time step: log(total + 2), used by the next
// kernel (and by a second one, which gets its own copy).
// CHECK-LABEL: func.func @normaliser
// CHECK: %[[TOTALS:.*]] = memref.alloc
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[TOTALS]]
// CHECK: gpu.terminator
// CHECK-NOT: memref.load
// CHECK-NOT: math.log
// CHECK: gpu.launch
// CHECK-NEXT: %[[T1:.*]] = memref.load %[[TOTALS]][%{{.*}}] : memref<?xf32>
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[T1]], %{{.*}} : f32
// CHECK-NEXT: %[[L1:.*]] = math.log %[[S1]] : f32
// CHECK: arith.subf %{{.*}}, %[[L1]] : f32
// CHECK: gpu.terminator
// CHECK: gpu.launch
// CHECK-NEXT: %[[T2:.*]] = memref.load %[[TOTALS]]
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[T2]]
// CHECK-NEXT: %[[L2:.*]] = math.log %[[S2]] : f32
// CHECK: arith.mulf %{{.*}}, %[[L2]] : f32
// CHECK: return
func.func @normaliser(%x: memref<?xf32>, %y: memref<?xf32>, %z: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %two = arith.constant 2.0 : f32
  %totals = memref.alloc(%c1) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<?xf32>
    memref.store %v, %totals[%c0] : memref<?xf32>
    gpu.terminator
  }
  %total = memref.load %totals[%c0] : memref<?xf32>
  %shifted = arith.addf %total, %two : f32
  %log = math.log %shifted : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<?xf32>
    %d = arith.subf %v, %log : f32
    memref.store %d, %y[%tx] : memref<?xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<?xf32>
    %p = arith.mulf %v, %log : f32
    memref.store %p, %z[%tx] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// In a loop: the normaliser is read by a kernel of the same step, and the
// loss the loop carries is carried in a buffer instead: a one-thread kernel
// stores its initial value before the loop, another adds each step's term
// at the end of the step, and the host reads it once, after the loop.
// CHECK-LABEL: func.func @steps
// CHECK: %[[CARRY:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: gpu.launch
// CHECK: memref.store %{{.*}}, %[[CARRY]]
// CHECK: scf.for {{.*}} iter_args(%[[UNCHANGED:.*]] = %{{.*}}) -> (f32)
// CHECK-NEXT: %[[NORMALISER:.*]] = memref.alloc
// CHECK-NEXT: %[[TERM:.*]] = memref.alloc
// CHECK: gpu.launch
// CHECK: gpu.terminator
// CHECK-NOT: memref.load %[[NORMALISER]]
// CHECK: gpu.launch
// CHECK-NEXT: memref.load %[[NORMALISER]][
// CHECK: gpu.terminator
// CHECK-NOT: memref.load
// CHECK: gpu.launch
// CHECK: %[[TOTAL:.*]] = memref.load %[[CARRY]]
// CHECK-NEXT: %[[ADDED:.*]] = memref.load %[[TERM]]
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[TOTAL]], %[[ADDED]]
// CHECK-NEXT: memref.store %[[SUM]], %[[CARRY]]
// CHECK: scf.yield %[[UNCHANGED]]
// CHECK: %[[FINAL:.*]] = memref.load %[[CARRY]]
// CHECK-NEXT: return %[[FINAL]]
func.func @steps(%x: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%total = %zero) -> f32 {
    %normaliser = memref.alloc(%c1) : memref<?xf32>
    %term = memref.alloc(%c1) : memref<?xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<?xf32>
      memref.store %v, %normaliser[%c0] : memref<?xf32>
      gpu.terminator
    }
    %s = memref.load %normaliser[%c0] : memref<?xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[%tx] : memref<?xf32>
      %d = arith.divf %v, %s : f32
      memref.store %d, %term[%c0] : memref<?xf32>
      gpu.terminator
    }
    %m = memref.load %term[%c0] : memref<?xf32>
    %next = arith.addf %total, %m : f32
    scf.yield %next : f32
  }
  return %r : f32
}

// -----

// Left to the host: a scalar the host returns, one whose buffer a kernel
// writes after the load, and one read from a buffer the caller passed.
// CHECK-LABEL: func.func @stay
// CHECK: gpu.terminator
// CHECK: %[[RETURNED:.*]] = memref.load
// CHECK: %[[REWRITTEN:.*]] = memref.load
// CHECK: %[[PASSED:.*]] = memref.load %arg1
// CHECK: gpu.launch
// CHECK-NOT: memref.load %{{.*}}[%{{.*}}] : memref<?xf32>
// CHECK: arith.addf %[[REWRITTEN]], %[[PASSED]]
// CHECK: return %[[RETURNED]]
func.func @stay(%x: memref<?xf32>, %given: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %returned = memref.alloc(%c1) : memref<?xf32>
  %rewritten = memref.alloc(%c1) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<?xf32>
    memref.store %v, %returned[%c0] : memref<?xf32>
    memref.store %v, %rewritten[%c0] : memref<?xf32>
    gpu.terminator
  }
  %a = memref.load %returned[%c0] : memref<?xf32>
  %b = memref.load %rewritten[%c0] : memref<?xf32>
  %g = memref.load %given[%c0] : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %sum = arith.addf %b, %g : f32
    memref.store %sum, %x[%tx] : memref<?xf32>
    memref.store %sum, %rewritten[%c0] : memref<?xf32>
    gpu.terminator
  }
  return %a : f32
}
