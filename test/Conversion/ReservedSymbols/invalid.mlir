// RUN: soac-opt %s --soac-rename-reserved-symbols --verify-diagnostics

// A program that already uses the name a reserved function moves to.
// expected-error @+1 {{cannot move 'exp' out of the C library's names: 'soac.reserved.exp' is taken}}
func.func @exp() { return }
func.func @soac.reserved.exp() { return }
