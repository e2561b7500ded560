// RUN: soac-opt %s --soac-parallel-loops-by-work --split-input-file --verify-diagnostics
// soac-parallel-loops-by-work has no failure of its own (loops it does not
// choose for stay as they are); a parallel loop with a step of the wrong
// type is rejected by the verifier before it runs.

// expected-note @+1 {{prior use here}}
func.func @bad_step(%n: index, %s: i32) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{use of value '%s' expects different type than prior uses: 'index' vs 'i32'}}
  scf.parallel (%i) = (%c0) to (%n) step (%s) {
    scf.reduce
  }
  return
}
