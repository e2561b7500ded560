// RUN: soac-opt %s --soac-stack-temporaries --split-input-file --verify-diagnostics
// soac-stack-temporaries has no failure of its own (buffers it does not
// move stay on the heap); a parallel loop whose body does not end in
// scf.reduce is rejected by the verifier before it runs.

func.func @no_terminator(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'scf.parallel' op expects region #0 to have 0 or 1 blocks}}
  "scf.parallel"(%c0, %n, %c1) <{operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%i: index):
    cf.br ^bb1
  ^bb1:
    scf.reduce
  }) : (index, index, index) -> ()
  return
}
