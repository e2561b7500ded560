//===- SoacModule.cpp - the soac Python extension -------------------------===//
//
// Registers the soac dialect with the upstream MLIR Python bindings. The
// bindings hand over C API handles; unwrapping them gives the C++ objects this
// extension shares with them through libMLIRPythonCAPI.so.
//
//===----------------------------------------------------------------------===//

#include "dialect/SoacDialect.h"
#include "passes/Passes.h"

#include "mlir-c/IR.h"
#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include "mlir/CAPI/IR.h"
#include "mlir/IR/MLIRContext.h"

namespace nb = nanobind;

NB_MODULE(_soac, m) {
  m.doc() = "soac dialect registration for the upstream MLIR Python bindings";

  // Passes and pipelines live in a process-wide registry: register them once,
  // so that PassManager.parse knows soac-lower-to-cpu and friends.
  soac::registerSoacPasses();

  m.def(
      "register_dialects",
      [](MlirDialectRegistry registry) {
        soac::registerSoacDialects(*unwrap(registry));
        soac::registerSoacExtensions(*unwrap(registry));
      },
      nb::arg("registry"),
      "Adds the soac dialects to a DialectRegistry; contexts created from it "
      "know soac.");

  m.def(
      "load_dialects",
      [](MlirContext context) {
        mlir::DialectRegistry registry;
        soac::registerSoacDialects(registry);
        soac::registerSoacExtensions(registry);
        unwrap(context)->appendDialectRegistry(registry);
        unwrap(context)->getOrLoadDialect("soac");
      },
      nb::arg("context"), "Registers and loads the soac dialects in a context.");
}
