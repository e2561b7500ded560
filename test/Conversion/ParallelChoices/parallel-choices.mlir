// soac-parallel-choices: soac.parallel_pays becomes its condition; where the
// parallel form may run on one thread (soac.serializable), only it stays,
// its OpenMP regions run on threads only when the work pays.
// RUN: soac-opt %s --soac-parallel-choices --split-input-file | FileCheck %s

// CHECK-NOT: @soac.parallel_pays
// CHECK: func.func private @omp_get_max_threads() -> i32
// CHECK-LABEL: func.func @serializable_map
// CHECK-SAME: (%[[X:.*]]: memref<?xf64>, %[[N:.*]]: index)
// CHECK: %[[MIN:.*]] = arith.constant 16384 : index
// CHECK: %[[ENOUGH:.*]] = arith.cmpi uge, %[[N]], %[[MIN]] : index
// CHECK: %[[T:.*]] = call @omp_get_max_threads() : () -> i32
// CHECK: %[[THREADS:.*]] = arith.index_cast %[[T]] : i32 to index
// CHECK: %[[MANY:.*]] = arith.cmpi ugt, %[[THREADS]], %{{.*}} : index
// CHECK: %[[PAYS:.*]] = arith.andi %[[ENOUGH]], %[[MANY]] : i1
// CHECK-NOT: scf.if
// CHECK: omp.parallel if(%[[PAYS]]) {
// CHECK: omp.wsloop
// CHECK: memref.store
// CHECK: omp.terminator
// CHECK-NOT: scf.for
// CHECK: return %[[X]]
func.func private @soac.parallel_pays(index) -> i1
func.func @serializable_map(%x: memref<?xf64>, %n: index) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %pays = func.call @soac.parallel_pays(%n) {soac.serializable} : (index) -> i1
  %r = scf.if %pays -> (memref<?xf64>) {
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
          memref.store %one, %x[%i] : memref<?xf64>
          omp.yield
        }
      }
      omp.terminator
    }
    scf.yield %x : memref<?xf64>
  } else {
    scf.for %i = %c0 to %n step %c1 {
      memref.store %one, %x[%i] : memref<?xf64>
    }
    scf.yield %x : memref<?xf64>
  }
  return %r : memref<?xf64>
}

// -----

// Without soac.serializable (a scan, which reads its rows twice), both forms
// stay, chosen by the condition.
// CHECK-LABEL: func.func @two_forms
// CHECK: %[[PAYS:.*]] = arith.andi
// CHECK: scf.if %[[PAYS]] {
// CHECK-NEXT: omp.parallel {
// CHECK: } else {
// CHECK-NEXT: scf.for
func.func private @soac.parallel_pays(index) -> i1
func.func @two_forms(%x: memref<?xf64>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %pays = func.call @soac.parallel_pays(%n) : (index) -> i1
  scf.if %pays {
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
          memref.store %one, %x[%i] : memref<?xf64>
          omp.yield
        }
      }
      omp.terminator
    }
  } else {
    scf.for %i = %c0 to %n step %c1 {
      memref.store %one, %x[%i] : memref<?xf64>
    }
  }
  return
}

// -----

// Every outermost region of the parallel form gets the condition (a region
// with its own if clause: both), not the regions nested in them; the values
// the parallel form yields replace the choice's results.
// CHECK-LABEL: func.func @two_regions
// CHECK-SAME: (%[[X:.*]]: memref<?xf64>, %[[N:.*]]: index, %[[OWN:.*]]: i1)
// CHECK: %[[PAYS:.*]] = arith.andi
// CHECK: omp.parallel if(%[[PAYS]]) {
// CHECK: omp.parallel {
// CHECK: %[[BOTH:.*]] = arith.andi %[[OWN]], %[[PAYS]] : i1
// CHECK: omp.parallel if(%[[BOTH]]) {
// CHECK: %[[SUM:.*]] = arith.addf
// CHECK: return %[[SUM]]
func.func private @soac.parallel_pays(index) -> i1
func.func @two_regions(%x: memref<?xf64>, %n: index, %own: i1) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %two = arith.constant 2.0 : f64
  %pays = func.call @soac.parallel_pays(%n) {soac.serializable} : (index) -> i1
  %r = scf.if %pays -> (f64) {
    omp.parallel {
      omp.parallel {
        memref.store %one, %x[%c0] : memref<?xf64>
        omp.terminator
      }
      omp.terminator
    }
    omp.parallel if(%own) {
      memref.store %two, %x[%c1] : memref<?xf64>
      omp.terminator
    }
    %sum = arith.addf %one, %two : f64
    scf.yield %sum : f64
  } else {
    scf.yield %one : f64
  }
  return %r : f64
}

// -----

// Bufferization may use the choice outside its scf.if (a select of the
// buffer the branch taken wrote): the parallel branch is the one taken now,
// whatever the if clause decides.
// CHECK-LABEL: func.func @buffer_of_the_branch_taken
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK: %[[PARALLEL:.*]] = memref.alloc(%[[N]])
// CHECK: %[[SEQUENTIAL:.*]] = memref.alloc(%[[N]])
// CHECK: %[[PAYS:.*]] = arith.andi
// CHECK: %[[TAKEN:.*]] = arith.constant true
// CHECK: %[[RESULT:.*]] = arith.select %[[TAKEN]], %[[PARALLEL]], %[[SEQUENTIAL]]
// CHECK: omp.parallel if(%[[PAYS]])
// CHECK: return %[[RESULT]]
func.func private @soac.parallel_pays(index) -> i1
func.func @buffer_of_the_branch_taken(%n: index) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f64
  %parallel = memref.alloc(%n) : memref<?xf64>
  %sequential = memref.alloc(%n) : memref<?xf64>
  %pays = func.call @soac.parallel_pays(%n) {soac.serializable} : (index) -> i1
  %result = arith.select %pays, %parallel, %sequential : memref<?xf64>
  scf.if %pays {
    omp.parallel {
      omp.wsloop {
        omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
          memref.store %one, %parallel[%i] : memref<?xf64>
          omp.yield
        }
      }
      omp.terminator
    }
  } else {
    scf.for %i = %c0 to %n step %c1 {
      memref.store %one, %sequential[%i] : memref<?xf64>
    }
  }
  return %result : memref<?xf64>
}
