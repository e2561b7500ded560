// soac-hoist-branch-buffers: an allocation in scf.ifs inside a loop moves
// before the outermost of them, where buffer-loop-hoisting can take it out
// of the loop, when its sizes are defined before the branch and are sizes a
// buffer may always take, and no view of it leaves the branch.
// RUN: soac-opt %s --soac-hoist-branch-buffers | FileCheck %s

// CHECK-LABEL: func.func @static_and_dims
// CHECK: scf.for
// CHECK-NEXT: %[[STATIC:.*]] = memref.alloc() : memref<4xf64>
// CHECK-NEXT: %[[DYNAMIC:.*]] = memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK-NEXT: scf.if
// CHECK-NEXT: scf.if
// CHECK-NOT: memref.alloc
func.func @static_and_dims(%x: memref<?xf64>, %n: index, %c: i1, %d: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %size = memref.dim %x, %c0 : memref<?xf64>
  %four = arith.constant 4 : index
  %chosen = arith.select %c, %size, %four : index
  scf.for %i = %c0 to %n step %c1 {
    scf.if %c {
      scf.if %d {
        %a = memref.alloc() : memref<4xf64>
        memref.store %zero, %a[%c0] : memref<4xf64>
        %b = memref.alloc(%chosen) : memref<?xf64>
        %view = memref.subview %b[0] [1] [1] : memref<?xf64> to memref<1xf64, strided<[1]>>
        memref.store %zero, %view[%c0] : memref<1xf64, strided<[1]>>
      }
    }
  }
  return
}

// Left where they are: a size computed from data (the branch may guard
// against it), a size computed in the branch, a buffer the branch yields,
// and a branch outside any loop.
// CHECK-LABEL: func.func @stay
// CHECK: scf.for
// CHECK-NEXT: %[[LESS:.*]] = arith.subi
// CHECK-NEXT: scf.if
// CHECK-NEXT: memref.alloc(%[[LESS]])
// CHECK: scf.if
// CHECK-NEXT: %[[INSIDE:.*]] = arith.addi
// CHECK-NEXT: memref.alloc(%[[INSIDE]])
// CHECK: scf.if {{.*}} -> (memref<?xf64>)
// CHECK-NEXT: memref.alloc(%{{.*}}) : memref<?xf64>
// CHECK: }
// CHECK: scf.if
// CHECK-NEXT: memref.alloc() : memref<8xf64>
func.func @stay(%x: memref<?xf64>, %n: index, %c: i1) -> memref<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %size = memref.dim %x, %c0 : memref<?xf64>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%carried = %x) -> (memref<?xf64>) {
    %less = arith.subi %n, %i : index
    scf.if %c {
      %a = memref.alloc(%less) : memref<?xf64>
    }
    scf.if %c {
      %inside = arith.addi %size, %size : index
      %b = memref.alloc(%inside) : memref<?xf64>
    }
    %next = scf.if %c -> (memref<?xf64>) {
      %y = memref.alloc(%size) : memref<?xf64>
      scf.yield %y : memref<?xf64>
    } else {
      scf.yield %carried : memref<?xf64>
    }
    scf.yield %next : memref<?xf64>
  }
  scf.if %c {
    %e = memref.alloc() : memref<8xf64>
  }
  return %last : memref<?xf64>
}
