// RUN: soac-opt %s --soac-scope-launch-stack | FileCheck %s

// A launch in a loop of host code (already LLVM): its argument array is
// given back after each launch, so the loop does not grow the stack.
// CHECK-LABEL: llvm.func @launches_in_a_loop
// CHECK: ^[[BODY:.*]](%{{.*}}: i64):
// CHECK: %[[SAVED:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT: gpu.launch_func @kernels::@scale
// CHECK-NEXT: llvm.intr.stackrestore %[[SAVED]] : !llvm.ptr
// CHECK: llvm.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%x: !llvm.ptr, %n: i64) kernel {
      gpu.return
    }
  }
  llvm.func @launches_in_a_loop(%x: !llvm.ptr, %steps: i64) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %c128 = llvm.mlir.constant(128 : i64) : i64
    llvm.br ^body(%c0 : i64)
  ^body(%t: i64):
    gpu.launch_func @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c128, %c1, %c1) : i64 args(%x : !llvm.ptr, %steps : i64)
    %next = llvm.add %t, %c1 : i64
    %more = llvm.icmp "slt" %next, %steps : i64
    llvm.cond_br %more, ^body(%next : i64), ^done
  ^done:
    llvm.return
  }
}
