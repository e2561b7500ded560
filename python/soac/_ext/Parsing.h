//===- Parsing.h - parsing and verification that never abort ---*- C++ -*-===//
#ifndef SOAC_PYTHON_EXT_PARSING_H
#define SOAC_PYTHON_EXT_PARSING_H

#include "mlir/Bindings/Python/Nanobind.h"

namespace soac::python {

/// Adds parse_module, parse_module_file and verify_operation to `m`.
void defineParsing(nanobind::module_ &m);

} // namespace soac::python

#endif // SOAC_PYTHON_EXT_PARSING_H
