// Known crash (open), of the same family: soac-opt aborts while recovering
// from a parse error inside soac.map ("operation destroyed but still has
// uses"). Found by test/fuzz/ir_fuzz.py (seed 1, mutant 128).
      soac.yield %m : f64
    %p = soac.map ins(%row, %v : tensor<?xf64>, tensor<?xf64>) -> tensor<?xf64> {
      %m = arith.mulf %a, %b : f64
  ^bb0(%row: tensor<?xf64>):
