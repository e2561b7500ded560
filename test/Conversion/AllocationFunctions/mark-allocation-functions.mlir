// The runtime's allocation functions return new memory: their declarations
// get a noalias result, so that LLVM knows that buffers from different
// allocations do not overlap. Other functions are left alone.
// RUN: soac-opt %s --soac-mark-allocation-functions | FileCheck %s
// RUN: soac-opt %s --soac-lower-to-cpu | FileCheck %s --check-prefix=LOWERED

// CHECK-LABEL: llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> (!llvm.ptr {llvm.noalias})
// CHECK-LABEL: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> (!llvm.ptr {llvm.noalias})
// CHECK-LABEL: llvm.func @other_allocator(i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> !llvm.ptr
llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
llvm.func @other_allocator(i64) -> !llvm.ptr
llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)

// The CPU pipeline allocates through the aligned function, whose result is
// the pointer the code uses (no alignment through integers), and marks it.
// LOWERED: llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> (!llvm.ptr {llvm.noalias})
// LOWERED-LABEL: llvm.func @temporary
// LOWERED: llvm.call @_mlir_memref_to_llvm_aligned_alloc
// LOWERED-NOT: llvm.inttoptr
// LOWERED: llvm.return
func.func @temporary(%x: tensor<?xf64>) -> tensor<?xf64> {
  %r = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64):
    %s = arith.mulf %a, %a : f64
    soac.yield %s : f64
  }
  return %r : tensor<?xf64>
}
