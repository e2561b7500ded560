//===- ObjectCode.h - object code on several threads, and its loading ------===//
#ifndef SOAC_PYTHON_EXT_OBJECTCODE_H
#define SOAC_PYTHON_EXT_OBJECTCODE_H

#include "mlir/Bindings/Python/Nanobind.h"

namespace soac::python {

/// Adds compile_objects and ObjectJit to `m`: a module in MLIR's LLVM
/// dialect compiled into object files on several threads, and those files
/// linked into this process.
void defineObjectCode(nanobind::module_ &m);

} // namespace soac::python

#endif // SOAC_PYTHON_EXT_OBJECTCODE_H
