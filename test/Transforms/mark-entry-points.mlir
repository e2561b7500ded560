// Public functions with a body become C entry points whose tensor arguments
// are read-only; private functions and declarations are left alone.
// RUN: soac-opt %s --soac-mark-entry-points | FileCheck %s

// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%{{.*}}: tensor<?xf32> {bufferization.writable = false}, %{{.*}}: f32)
// CHECK-SAME: attributes {llvm.emit_c_interface}
func.func @entry(%x: tensor<?xf32>, %s: f32) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// CHECK-LABEL: func.func private @helper
// CHECK-NOT: llvm.emit_c_interface
// CHECK-NOT: bufferization.writable
// CHECK: return
func.func private @helper(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}

// CHECK-LABEL: func.func private @external
// CHECK-NOT: llvm.emit_c_interface
func.func private @external(tensor<?xf32>)
