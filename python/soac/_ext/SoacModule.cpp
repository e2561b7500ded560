//===- SoacModule.cpp - the soac Python extension -------------------------===//
//
// Registers the soac dialect with the upstream MLIR Python bindings, and
// gives Python the signature of derivatives (dialect/DerivativeSignature.h)
// and parsing that never aborts (Parsing.h), and the host CPU as LLVM names
// it (what the JIT compiles for).
// The bindings hand over C API handles; unwrapping them gives the C++ objects
// this extension shares with them through libMLIRPythonCAPI.so.
//
//===----------------------------------------------------------------------===//

#include "dialect/DerivativeSignature.h"
#include "dialect/SoacDialect.h"
#include "passes/Passes.h"
#include "python/soac/_ext/Parsing.h"

#include "mlir-c/IR.h"
#include "mlir/Bindings/Python/Nanobind.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include "mlir/CAPI/IR.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include "nanobind/stl/optional.h"
#include "nanobind/stl/pair.h"
#include "nanobind/stl/string.h"
#include "nanobind/stl/vector.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb = nanobind;

NB_MODULE(_soac, m) {
  m.doc() = "soac dialect registration for the upstream MLIR Python bindings";

  // Passes and pipelines live in a process-wide registry: register them once,
  // so that PassManager.parse knows soac-lower-to-cpu and friends.
  soac::registerSoacPasses();
  soac::python::defineParsing(m);

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

  m.def(
      "derivative_type",
      [](const std::string &kind, MlirType function,
         std::optional<std::vector<int64_t>> wrt, int64_t width) {
        if (kind != "vjp" && kind != "jvp")
          throw nb::value_error("kind must be \"vjp\" or \"jvp\"");
        auto type = llvm::dyn_cast<mlir::FunctionType>(unwrap(function));
        if (!type)
          throw nb::type_error("expected a FunctionType");
        std::optional<llvm::ArrayRef<int64_t>> positions;
        if (wrt)
          positions = llvm::ArrayRef<int64_t>(*wrt);
        llvm::SmallVector<int64_t> differentiated =
            soac::wrtPositions(positions, type.getNumInputs());
        for (int64_t position : differentiated)
          if (position < 0 ||
              position >= static_cast<int64_t>(type.getNumInputs()))
            throw nb::index_error(
                ("wrt position " + std::to_string(position) +
                 " is out of range: the function has " +
                 std::to_string(type.getNumInputs()) + " arguments")
                    .c_str());
        return wrap(mlir::Type(soac::getDerivativeType(
            kind == "vjp" ? soac::DerivativeKind::Vjp
                          : soac::DerivativeKind::Jvp,
            type, differentiated, width)));
      },
      nb::arg("kind"), nb::arg("function_type"), nb::arg("wrt").none(),
      nb::arg("width") = 1,
      "The type of soac.vjp or soac.jvp (kind) of a function of "
      "`function_type` with respect to the arguments at `wrt` (None: all) "
      "with `width` lanes: vjp (args..., width cotangents per result) -> "
      "(results..., width gradients per wrt argument); jvp (args..., width "
      "tangents per wrt argument) -> (results..., width tangents per result).");

  m.def(
      "host_cpu",
      []() {
        std::vector<std::string> features;
        for (const auto &feature : llvm::sys::getHostCPUFeatures())
          features.push_back((feature.getValue() ? "+" : "-") +
                             feature.getKey().str());
        std::sort(features.begin(), features.end());
        return std::make_pair(llvm::sys::getHostCPUName().str(), features);
      },
      "The host CPU's LLVM name and features (\"+avx2\", \"-avx512f\"), "
      "which MLIR's ExecutionEngine compiles for.");

  m.def(
      "set_llvm_options",
      [](const std::vector<std::string> &options) {
        // LLVM's options are global to the process (every ExecutionEngine
        // in it) and each may be given once: the caller sets them once.
        std::vector<const char *> argv{"soac"};
        for (const std::string &option : options)
          argv.push_back(option.c_str());
        std::string errors;
        llvm::raw_string_ostream stream(errors);
        if (!llvm::cl::ParseCommandLineOptions(
                static_cast<int>(argv.size()), argv.data(), "", &stream))
          throw std::invalid_argument(errors);
      },
      nb::arg("options"),
      "Sets LLVM command-line options (\"-name=value\") for the code this "
      "process compiles from now on; raises ValueError on an unknown option "
      "or value.");
}
