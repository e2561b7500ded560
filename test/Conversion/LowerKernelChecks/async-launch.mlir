// A kernel's failed checks are read after its launch: an asynchronous
// launch would be read before it ran.
// RUN: soac-opt %s --soac-lower-kernel-checks -verify-diagnostics

func.func @asynchronous(%x: memref<?xf32>, %i: index, %n: index) {
  %c1 = arith.constant 1 : index
  %ready = gpu.wait async
  // expected-error @below {{is asynchronous: the failures of the checks in its kernel cannot be read after it}}
  %done = gpu.launch async [%ready] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %j = soac.check_index %i below %n, "'tensor.extract' dimension 0"
    %v = memref.load %x[%j] : memref<?xf32>
    memref.store %v, %x[%tx] : memref<?xf32>
    gpu.terminator
  }
  gpu.wait [%done]
  return
}
