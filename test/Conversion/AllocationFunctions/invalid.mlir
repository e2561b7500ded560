// RUN: soac-opt %s --soac-mark-allocation-functions --split-input-file --verify-diagnostics

// A declaration of the runtime's function with another signature.
// expected-error @+1 {{'llvm.func' op is the runtime's allocation function: it must be declared (i64, i64) -> !llvm.ptr, as the runtime defines it}}
llvm.func @_mlir_memref_to_llvm_aligned_alloc(i64) -> !llvm.ptr

// -----

// A definition: the runtime's would clash with it.
// expected-error @+1 {{'llvm.func' op is the runtime's allocation function: it must be declared (i64) -> !llvm.ptr, as the runtime defines it}}
llvm.func @_mlir_memref_to_llvm_alloc(%size: i64) -> !llvm.ptr {
  %p = llvm.mlir.zero : !llvm.ptr
  llvm.return %p : !llvm.ptr
}

// -----

// No result.
// expected-error @+1 {{'llvm.func' op is the runtime's allocation function: it must be declared (i64) -> !llvm.ptr, as the runtime defines it}}
llvm.func @_mlir_memref_to_llvm_alloc(i64)

// -----

// The deallocation function with a result.
// expected-error @+1 {{'llvm.func' op is the runtime's deallocation function: it must be declared (!llvm.ptr) -> (), as the runtime defines it}}
llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr) -> i64
