//===- Redomap.h - a reduce folded in its map's loop ------------*- C++ -*-===//
//
// Futhark's redomap with map outputs: a map lowered to a sequential loop
// also folds a reduce that alone reads some of its results, so that those
// rows are never stored.
//
//===----------------------------------------------------------------------===//

#ifndef SOAC_PASSES_CONVERSION_SOACTOLOOPS_REDOMAP_H
#define SOAC_PASSES_CONVERSION_SOACTOLOOPS_REDOMAP_H

#include "dialect/SoacOps.h"

namespace soac::loops {

/// A reduce, in the block of a map lowered to a sequential loop, that folds
/// rows of map's results nothing else reads while map's other results are
/// read elsewhere (else the map fuses into the reduce). The map's loop also
/// folds the reduce (Futhark's redomap with map outputs), so the rows it
/// folds are never stored. Null when there is none.
ReduceOp foldedReduce(MapOp map);

/// Whether `reduce` is folded in the loop of the map it reads (foldedReduce).
bool foldedWithItsMap(ReduceOp reduce);

} // namespace soac::loops

#endif // SOAC_PASSES_CONVERSION_SOACTOLOOPS_REDOMAP_H
