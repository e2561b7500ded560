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

// -----

// Threads that synchronize run as an OpenMP team per block: workgroup
// memory is a stack buffer made once, a barrier a team barrier, a shuffle a
// store into the thread's slot, a barrier, a load of the source lane's slot
// (the thread's own where the source is out of the width) and a barrier.
// CHECK-LABEL: func.func @warp_sums
// CHECK-NOT: gpu.launch
// CHECK: memref.alloca_scope
// CHECK: %[[SHARED:.*]] = memref.alloca() : memref<8xf32>
// CHECK: %[[SLOTS:.*]] = memref.alloca(%{{.*}}) : memref<?xf32>
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: omp.parallel num_threads(%{{.*}} : i32)
// CHECK: %[[ID:.*]] = func.call @soac_omp_thread_number() : () -> i32
// CHECK: %[[T:.*]] = arith.index_castui %[[ID]] : i32 to index
// CHECK: memref.store %{{.*}}, %[[SLOTS]][%[[T]]] : memref<?xf32>
// CHECK: omp.barrier
// CHECK: %[[LANE:.*]] = arith.remui %[[T]], %{{.*}} : index
// CHECK: %[[SOURCE:.*]] = arith.xori %[[LANE]], %{{.*}} : index
// CHECK: %[[VALID:.*]] = arith.cmpi ult, %[[SOURCE]], %{{.*}} : index
// CHECK: arith.select %[[VALID]], %[[SOURCE]], %[[LANE]] : index
// CHECK: memref.load %[[SLOTS]]
// CHECK: omp.barrier
// CHECK: memref.store %{{.*}}, %[[SHARED]]
// CHECK: omp.barrier
// CHECK: memref.load %[[SHARED]]
// CHECK: omp.terminator
// CHECK: func.func private @soac_omp_thread_number() -> i32
func.func @warp_sums(%x: memref<?xf32>, %blocks: index) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1 : i32
  %width = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %blocks, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1)
             workgroup(%shared : memref<8xf32, #gpu.address_space<workgroup>>) {
    %base = arith.muli %bx, %sx : index
    %i = arith.addi %base, %tx : index
    %v = memref.load %x[%i] : memref<?xf32>
    %other, %valid = gpu.shuffle xor %v, %one, %width : f32
    %pair = arith.addf %v, %other : f32
    %warp = arith.divui %tx, %c32 : index
    memref.store %pair, %shared[%warp] : memref<8xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %first = memref.load %shared[%warp] : memref<8xf32, #gpu.address_space<workgroup>>
    memref.store %first, %x[%i] : memref<?xf32>
    gpu.terminator
  }
  return
}

// -----

// A product on the tensor cores (mma.sync m8n8k4 of float64): each thread
// stores its fragments of A and B into its two slots, all wait, each adds
// the 4 products of its warp's row of A and column of B to its two results
// by fused multiply-adds
// (lane l: row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1), all wait.
// CHECK-LABEL: func.func @warp_product
// CHECK-NOT: nvvm.mma.sync
// CHECK: cf.assert %{{.*}}, "soac-emulate-gpu-launches: a block computing products on the tensor cores must have whole warps (a multiple of 32 threads)"
// CHECK: %[[SLOTS:.*]] = memref.alloca(%{{.*}}) : memref<?xf64>
// CHECK: omp.parallel
// CHECK: %[[T:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK: memref.store %{{.*}}, %[[SLOTS]][%[[T]]] : memref<?xf64>
// CHECK: %[[BSLOT:.*]] = arith.addi %{{.*}}, %[[T]] : index
// CHECK: memref.store %{{.*}}, %[[SLOTS]][%[[BSLOT]]] : memref<?xf64>
// CHECK: omp.barrier
// CHECK-COUNT-8: math.fma
// CHECK: omp.barrier
// CHECK-NOT: llvm.extractvalue
// CHECK: omp.terminator
func.func @warp_product(%a: memref<?xf64>, %b: memref<?xf64>, %c: memref<?xf64>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %x = memref.load %a[%tx] : memref<?xf64>
    %y = memref.load %b[%tx] : memref<?xf64>
    %at = arith.muli %tx, %c2 : index
    %next = arith.addi %at, %c1 : index
    %c0v = memref.load %c[%at] : memref<?xf64>
    %c1v = memref.load %c[%next] : memref<?xf64>
    %d = nvvm.mma.sync A[%x] B[%y] C[%c0v, %c1v] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 8, n = 8, k = 4>} : (f64, f64, f64) -> !llvm.struct<(f64, f64)>
    %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f64, f64)>
    %d1 = llvm.extractvalue %d[1] : !llvm.struct<(f64, f64)>
    memref.store %d0, %c[%at] : memref<?xf64>
    memref.store %d1, %c[%next] : memref<?xf64>
    gpu.terminator
  }
  return
}
