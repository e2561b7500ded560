//===- Parsing.cpp - parsing and verification that never abort -----------===//
//
// soac.parse, soac.parse_file and soac.verify: the upstream bindings'
// Module.parse verifies as it parses, and some of MLIR's verifiers abort on
// input they should report (passes/Utils/VerifyInput.h). Here text is
// parsed with verification off, then verified by soac::verifyInput. Errors
// come back as (location, message, notes) for soac.diagnostics to format.
//
//===----------------------------------------------------------------------===//

#include "python/soac/_ext/Parsing.h"

#include "passes/Utils/VerifyInput.h"

#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include "mlir/CAPI/IR.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"

#include "nanobind/stl/optional.h"
#include "nanobind/stl/pair.h"
#include "nanobind/stl/string.h"
#include "nanobind/stl/tuple.h"
#include "nanobind/stl/vector.h"

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace soac::python {

namespace {

using Note = std::pair<MlirLocation, std::string>;
using Error = std::tuple<MlirLocation, std::string, std::vector<Note>>;

/// The errors (with their notes) emitted in a context while it lives; other
/// diagnostics go on to the handlers before it.
class ErrorCollector {
public:
  explicit ErrorCollector(mlir::MLIRContext *context)
      : handler(context, [this](mlir::Diagnostic &diagnostic) {
          if (diagnostic.getSeverity() != mlir::DiagnosticSeverity::Error)
            return mlir::failure();
          std::vector<Note> notes;
          for (mlir::Diagnostic &note : diagnostic.getNotes())
            notes.emplace_back(wrap(note.getLocation()), note.str());
          errors.emplace_back(wrap(diagnostic.getLocation()), diagnostic.str(),
                              std::move(notes));
          return mlir::success();
        }) {}

  std::vector<Error> errors;

private:
  mlir::ScopedDiagnosticHandler handler;
};

using Parsed = std::pair<std::optional<MlirModule>, std::vector<Error>>;

/// The module `parse` makes (with verification off), verified; or none and
/// the errors.
Parsed verified(MlirContext context, llvm::StringRef text,
                llvm::StringRef sourceName,
                llvm::function_ref<mlir::OwningOpRef<mlir::ModuleOp>(
                    const mlir::ParserConfig &)>
                    parse) {
  mlir::MLIRContext *ctx = unwrap(context);
  ErrorCollector collector(ctx);
  if (failed(soac::checkTextBeforeParsing(ctx, text, sourceName)))
    return {std::nullopt, std::move(collector.errors)};
  mlir::OwningOpRef<mlir::ModuleOp> module =
      parse(mlir::ParserConfig(ctx, /*verifyAfterParse=*/false));
  if (!module || failed(soac::verifyInput(*module)))
    return {std::nullopt, std::move(collector.errors)};
  return {wrap(module.release()), {}};
}

} // namespace

void defineParsing(nb::module_ &m) {
  m.def(
      "parse_module",
      [](const std::string &text, const std::string &sourceName,
         MlirContext context) {
        return verified(context, text, sourceName,
                        [&](const mlir::ParserConfig &config) {
                          return mlir::parseSourceString<mlir::ModuleOp>(
                              text, config, sourceName);
                        });
      },
      nb::arg("text"), nb::arg("source_name"), nb::arg("context"),
      "(module or None, errors): `text` parsed and verified, never aborting "
      "on what MLIR's verifiers assert on.");
  m.def(
      "parse_module_file",
      [](const std::string &path, MlirContext context) {
        std::string error;
        std::unique_ptr<llvm::MemoryBuffer> file =
            mlir::openInputFile(path, &error);
        // Read once: the check before parsing and the parser take the same
        // text; a file that cannot be read is reported by the parser.
        llvm::StringRef text = file ? file->getBuffer() : llvm::StringRef();
        return verified(context, text, path,
                        [&](const mlir::ParserConfig &config) {
                          return file ? mlir::parseSourceString<mlir::ModuleOp>(
                                            text, config, path)
                                      : mlir::parseSourceFile<mlir::ModuleOp>(
                                            path, config);
                        });
      },
      nb::arg("path"), nb::arg("context"),
      "As parse_module, reading the file at `path`.");
  m.def(
      "verify_operation",
      [](MlirOperation operation) {
        mlir::Operation *op = unwrap(operation);
        ErrorCollector collector(op->getContext());
        (void)soac::verifyInput(op);
        return std::move(collector.errors);
      },
      nb::arg("operation"),
      "The errors of verifying `operation` and what it holds (none: it is "
      "valid), never aborting on what MLIR's verifiers assert on.");
}

} // namespace soac::python
