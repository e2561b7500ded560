// The HM-LSTM cell update (Chung et al.; the benchmark of Revels et al.,
// "Dynamic automatic differentiation of GPU broadcast kernels"):
//   c' = z == 1 ? σ(i)·tanh(g) : (zb == 0 ? c : σ(f)·c + σ(i)·tanh(g))
// elementwise over N×N matrices, with control matrices z and zb of 0s and 1s.
// Its gradient with respect to c, f, i and g is the mixed-mode benchmark
// (bench/mixed_mode.py).
func.func @hm_lstm_cell(%c: tensor<?x?xf32>, %f: tensor<?x?xf32>, %i: tensor<?x?xf32>, %g: tensor<?x?xf32>, %z: tensor<?x?xf32>, %zb: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %rows = soac.map ins(%c, %f, %i, %g, %z, %zb : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32> {
  ^bb0(%cr: tensor<?xf32>, %fr: tensor<?xf32>, %ir: tensor<?xf32>, %gr: tensor<?xf32>, %zr: tensor<?xf32>, %zbr: tensor<?xf32>):
    %r = soac.map ins(%cr, %fr, %ir, %gr, %zr, %zbr : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32> {
    ^bb0(%cv: f32, %fv: f32, %iv: f32, %gv: f32, %zv: f32, %zbv: f32):
      %one = arith.constant 1.0 : f32
      %zero = arith.constant 0.0 : f32
      %is_z = arith.cmpf oeq, %zv, %one : f32
      %out = scf.if %is_z -> (f32) {
        %ni = arith.negf %iv : f32
        %ei = math.exp %ni : f32
        %di = arith.addf %one, %ei : f32
        %si = arith.divf %one, %di : f32
        %tg = math.tanh %gv : f32
        %p = arith.mulf %si, %tg : f32
        scf.yield %p : f32
      } else {
        %is_zb = arith.cmpf oeq, %zbv, %zero : f32
        %inner = scf.if %is_zb -> (f32) {
          scf.yield %cv : f32
        } else {
          %nf = arith.negf %fv : f32
          %ef = math.exp %nf : f32
          %df = arith.addf %one, %ef : f32
          %sf = arith.divf %one, %df : f32
          %ni = arith.negf %iv : f32
          %ei = math.exp %ni : f32
          %di = arith.addf %one, %ei : f32
          %si = arith.divf %one, %di : f32
          %tg = math.tanh %gv : f32
          %fc = arith.mulf %sf, %cv : f32
          %ig = arith.mulf %si, %tg : f32
          %s = arith.addf %fc, %ig : f32
          scf.yield %s : f32
        }
        scf.yield %inner : f32
      }
      soac.yield %out : f32
    }
    soac.yield %r : tensor<?xf32>
  }
  return %rows : tensor<?x?xf32>
}
