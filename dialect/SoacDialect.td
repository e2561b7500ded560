//===- SoacDialect.td - the soac dialect ------------------------*- tablegen -*-===//
//
// Second-order array combinators (SOACs) over builtin ranked tensors, with value
// semantics: every op returns new tensors and never writes its operands.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_DIALECT_TD
#define SOAC_DIALECT_TD

include "mlir/IR/DialectBase.td"

def Soac_Dialect : Dialect {
  let name = "soac";
  let cppNamespace = "::soac";
  let summary = "Second-order array combinators: map, reduce, scan, scatter, reduce_by_index";
  let description = [{
    The soac dialect describes data-parallel array programs as compositions of
    second-order array combinators over ranked tensors (value semantics).

    Conventions shared by every op:
    - An op iterates over the *outer* dimension of its tensor inputs. The *row*
      of a tensor of rank 1 is its element type; the row of a tensor of rank r > 1
      is the tensor of rank r-1 made of the remaining dimensions. Nested
      parallelism is a SOAC in the body of another SOAC, applied to rows.
    - Operators are regions with one block ending in `soac.yield`. Values defined
      above may be used inside bodies (they are not isolated from above).
    - Operand groups are spelled with keywords: `ins(...)`, `init(...)`,
      `dest(...)`, `indices(...)`, each listing values then their types.
  }];
}

#endif // SOAC_DIALECT_TD
