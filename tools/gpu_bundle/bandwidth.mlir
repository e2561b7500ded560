// The kernels the GPU bundle times at 1e8 f32 elements against the device's
// own copy bandwidth (tools/gpu_bundle/bundle/gpu_runner/bandwidth.py makes
// their inputs, checks their results and counts the bytes each moves).

// map: one read, one write per element
func.func @scale(%x: tensor<?xf32>) -> tensor<?xf32> {
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  %r = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
    %m = arith.mulf %v, %two : f32
    %s = arith.addf %m, %one : f32
    soac.yield %s : f32
  }
  return %r : tensor<?xf32>
}

// reduce: one read per element
func.func @sum(%x: tensor<?xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %s = soac.reduce ins(%x : tensor<?xf32>) init(%zero : f32) -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    soac.yield %r : f32
  }
  return %s : f32
}

// scan: one read, one write per element (the lowering reads the input twice)
func.func @cumsum(%x: tensor<?xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.scan ins(%x : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  return %r : tensor<?xf32>
}

// reduce_by_index: an index and a value read per element, atomics into the bins
func.func @histogram(%bins: tensor<?xf32>, %idx: tensor<?xi32>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %zero = arith.constant 0.0 : f32
  %r = soac.reduce_by_index dest(%bins : tensor<?xf32>) indices(%idx : tensor<?xi32>) ins(%x : tensor<?xf32>) init(%zero : f32) -> tensor<?xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    soac.yield %s : f32
  }
  return %r : tensor<?xf32>
}

// scatter: an index and a value read, a value written per element
func.func @scatter(%dest: tensor<?xf32>, %idx: tensor<?xi32>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = soac.scatter dest(%dest : tensor<?xf32>) indices(%idx : tensor<?xi32>) ins(%x : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
