// soac-report-failed-asserts: a cf.assert of host code calls the runtime's
// soac_report_error with its message when it fails (which stops the call);
// one in a GPU kernel is left alone (the kernel traps).
// RUN: soac-opt %s --soac-report-failed-asserts --split-input-file | FileCheck %s

// CHECK-LABEL: llvm.mlir.global private constant @soac_failed_check_1("f.py:2:1: second\00")
// CHECK-LABEL: llvm.mlir.global private constant @soac_failed_check_0("f.py:1:1: first\00")
// CHECK-LABEL: llvm.func @soac_report_error(!llvm.ptr)
// CHECK-LABEL: func.func @checks
// CHECK-SAME: (%[[A:.*]]: index, %[[B:.*]]: index)
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[A]], %[[B]]
// CHECK-NOT: cf.assert
// CHECK: %[[FAILED:.*]] = arith.xori %[[SAME]], %true
// CHECK: scf.if %[[FAILED]] {
// CHECK: %[[MESSAGE:.*]] = llvm.mlir.addressof @soac_failed_check_0 : !llvm.ptr
// CHECK: llvm.call @soac_report_error(%[[MESSAGE]]) : (!llvm.ptr) -> ()
// CHECK: }
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: llvm.mlir.addressof @soac_failed_check_1
// CHECK: %[[N:.*]] = arith.minui %[[A]], %[[B]]
// CHECK: return %[[N]]
func.func @checks(%a: index, %b: index) -> index {
  %same = arith.cmpi eq, %a, %b : index
  cf.assert %same, "f.py:1:1: first"
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%a) step (%c1) {
    %inside = arith.cmpi ult, %i, %b : index
    cf.assert %inside, "f.py:2:1: second"
    scf.reduce
  }
  %n = arith.minui %a, %b : index
  return %n : index
}

// -----

// CHECK-LABEL: func.func @kernel_asserts_stay
// CHECK: gpu.launch
// CHECK: cf.assert
// CHECK-NOT: soac_report_error
func.func @kernel_asserts_stay(%a: index, %b: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%x = %c1, %y = %c1, %z = %c1)
             threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    %same = arith.cmpi eq, %a, %b : index
    cf.assert %same, "in a kernel"
    gpu.terminator
  }
  return
}
