// Bad pass options are errors, not crashes.
// RUN: not soac-opt %s --soac-autodiff=checkpoint-levels=0 2>&1 | FileCheck %s --check-prefix=LEVELS
// RUN: not soac-opt %s --convert-soac-to-loops=num-chunks=0 2>&1 | FileCheck %s --check-prefix=CHUNKS
// LEVELS: error: checkpoint-levels must be at least 1, got 0
// CHUNKS: error: num-chunks must be at least 1, got 0
func.func @empty() {
  return
}
