// Known crash (open): soac-opt aborts on this truncated program while
// recovering from its parse error ("Cannot destroy a value that still has
// uses!"), instead of only reporting the error. Found by test/fuzz/ir_fuzz.py
// (seed 1, mutant 935); test_fuzz.py reports it as a warning until it is fixed.
  %sq = soac.map ins(%x : tensor<?xf32>) -> tensor<?xf32> {
    %m = arith.mulf %v, %v : f32
  }
  %r = soac.map ins(%sq : tensor<?xf32>) -> tensor<?xf32> {
  ^bb0(%v: f32):
  ^bb0(%v: f32):
