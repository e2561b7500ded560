// RUN: soac-opt %s --soac-parallel-choices --split-input-file -verify-diagnostics

func.func private @soac.parallel_pays(i64) -> i1
func.func @work_not_an_index(%n: i64) -> i1 {
  // expected-error @+1 {{'func.call' op to @soac.parallel_pays must take the work (index) and return i1}}
  %pays = func.call @soac.parallel_pays(%n) : (i64) -> i1
  return %pays : i1
}

// -----

func.func private @soac.parallel_pays(index, index) -> i1
func.func @two_operands(%n: index) -> i1 {
  // expected-error @+1 {{'func.call' op to @soac.parallel_pays must take the work (index) and return i1}}
  %pays = func.call @soac.parallel_pays(%n, %n) : (index, index) -> i1
  return %pays : i1
}
