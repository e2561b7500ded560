// The runtime's allocation functions return new memory: their declarations
// get a noalias result, so that LLVM knows that buffers from different
// allocations do not overlap; its free keeps no copy of the pointer it is
// given (nocapture). Other functions are left alone.
// RUN: soac-opt %s --soac-mark-allocation-functions | FileCheck %s
// RUN: soac-opt %s --soac-lower-to-cpu | FileCheck %s --check-prefix=LOWERED

// CHECK-LABEL: llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> (!llvm.ptr {llvm.noalias})
// CHECK-LABEL: llvm.func @_mlir_memref_to_llvm_alloc(i64) -> (!llvm.ptr {llvm.noalias})
// CHECK-LABEL: llvm.func @other_allocator(i64) -> !llvm.ptr
// CHECK-LABEL: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr {llvm.nocapture})
llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> !llvm.ptr
llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
llvm.func @other_allocator(i64) -> !llvm.ptr
llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)

// The CPU pipeline allocates through the aligned function, whose result is
// the pointer the code uses (no alignment through integers), frees the scan's
// temporary, and marks both functions.
// LOWERED-DAG: llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr {llvm.nocapture})
// LOWERED-DAG: llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64, i64) -> (!llvm.ptr {llvm.noalias})
// LOWERED-LABEL: llvm.func @temporary
// LOWERED-NOT: llvm.inttoptr
// LOWERED: llvm.call @_mlir_memref_to_llvm_aligned_alloc
// LOWERED-NOT: llvm.inttoptr
// LOWERED: llvm.call @_mlir_memref_to_llvm_free
func.func @temporary(%x: tensor<?xf64>) -> f64 {
  %zero = arith.constant 0.0 : f64
  %e = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
  ^bb0(%a: f64):
    %s = math.exp %a : f64
    soac.yield %s : f64
  }
  %sums = soac.scan ins(%e : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {
  ^bb0(%a: f64, %b: f64):
    %s = arith.addf %a, %b : f64
    soac.yield %s : f64
  }
  %largest = soac.reduce ins(%sums : tensor<?xf64>) init(%zero : f64) -> f64 {
  ^bb0(%a: f64, %b: f64):
    %s = arith.maximumf %a, %b : f64
    soac.yield %s : f64
  }
  return %largest : f64
}
