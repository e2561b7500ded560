// Known crash (open): a gpu.launch of 2^31 threads per block makes the NVVM
// lowering assert (an APInt of the wrong width) instead of an error about the
// block size. Found by make fuzz (seed 1, mutant 2689), pipeline soac-lower-to-nvvm.
func.func @ids_from_ops(%x: memref<256xindex>, %blocks: index) {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 2147483648 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %blocks, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %t = gpu.thread_id x
    %b = gpu.block_id x
    memref.store %b, %x[%t] : memref<256xindex>
    gpu.terminator
  }
  return
}
