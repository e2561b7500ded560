//===- ObjectCode.cpp - object code on several threads, and its loading ---===//
//
// LLVM's code generation took most of the time of compiling a gradient
// (ADBench GMM: 1.1 of 1.6 s), on one thread in MLIR's ExecutionEngine. Here
// the module is translated and optimized as the ExecutionEngine does, then
// cut into parts (llvm::SplitModule) that are compiled to object code each
// on its own thread, in its own LLVMContext. The objects are linked into
// the process by an ORC LLJIT, and are what a shared library of the disk
// cache is linked from.
//
//===----------------------------------------------------------------------===//

#include "python/soac/_ext/ObjectCode.h"

#include "mlir-c/IR.h"
#include "mlir/Bindings/Python/NanobindAdaptors.h"
#include "mlir/CAPI/IR.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/Operation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include "nanobind/stl/string.h"
#include "nanobind/stl/vector.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace nb = nanobind;

namespace soac::python {
namespace {

std::string message(llvm::Error error) {
  return llvm::toString(std::move(error));
}

/// A target machine for this host (its CPU and features, as the JIT's),
/// emitting position-independent code: a shared library may be linked from
/// it too.
std::unique_ptr<llvm::TargetMachine> hostMachine(unsigned optLevel) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    throw std::runtime_error("no target for this host: " +
                             message(builder.takeError()));
  builder->setRelocationModel(llvm::Reloc::PIC_);
  builder->setCodeGenOptLevel(optLevel == 0   ? llvm::CodeGenOptLevel::None
                              : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                              : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                              : llvm::CodeGenOptLevel::Aggressive);
  auto machine = builder->createTargetMachine();
  if (!machine)
    throw std::runtime_error("no target machine for this host: " +
                             message(machine.takeError()));
  return std::move(*machine);
}

/// Defines `_mlir_<name>(void **arguments)`, which calls `function` on the
/// values the pointers at `arguments` point to and stores its result, if
/// any, where the pointer after them points: one entry point for any
/// number of arguments (what MLIR's ExecutionEngine calls a packed
/// interface, and what soac's Python runtime calls).
void definePackedInterface(llvm::Function &function) {
  llvm::Module &module = *function.getParent();
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> b(context);
  auto *type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()},
                                       /*isVarArg=*/false);
  auto *packed =
      llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                             "_mlir_" + function.getName(), module);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", packed));
  llvm::Value *arguments = packed->getArg(0);
  llvm::SmallVector<llvm::Value *> values;
  for (llvm::Argument &argument : function.args()) {
    llvm::Value *slot = b.CreateConstGEP1_64(b.getPtrTy(), arguments,
                                             argument.getArgNo());
    values.push_back(
        b.CreateLoad(argument.getType(), b.CreateLoad(b.getPtrTy(), slot)));
  }
  llvm::CallInst *result = b.CreateCall(&function, values);
  if (!result->getType()->isVoidTy()) {
    llvm::Value *slot = b.CreateConstGEP1_64(b.getPtrTy(), arguments,
                                             function.arg_size());
    b.CreateStore(result, b.CreateLoad(b.getPtrTy(), slot));
  }
  b.CreateRetVoid();
}

/// Object code of `module` for `machine`.
std::string emitObject(llvm::Module &module, llvm::TargetMachine &machine) {
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream stream(object);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    throw std::runtime_error("this target cannot emit object files");
  passes.run(module);
  return std::string(object.begin(), object.end());
}

/// Object code of each part of `bitcode`, each compiled on its own thread
/// in its own context.
std::vector<std::string> emitInParallel(const std::vector<std::string> &bitcode,
                                        unsigned optLevel) {
  std::vector<std::string> objects(bitcode.size()), errors(bitcode.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < bitcode.size(); ++i)
    threads.emplace_back([&, i] {
      try {
        llvm::LLVMContext context;
        auto part = llvm::parseBitcodeFile(
            llvm::MemoryBufferRef(bitcode[i], "part"), context);
        if (!part)
          throw std::runtime_error(message(part.takeError()));
        objects[i] = emitObject(**part, *hostMachine(optLevel));
      } catch (const std::exception &error) {
        errors[i] = error.what();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::string &error : errors)
    if (!error.empty())
      throw std::runtime_error(error);
  return objects;
}

/// `operation` (a module in the LLVM dialect) as object files: translated,
/// packed interfaces defined for `entryPoints`, optimized at `optLevel`
/// like MLIR's ExecutionEngine, then cut into at most `threads` parts
/// compiled in parallel.
std::vector<nb::bytes> compileObjects(MlirOperation operation,
                                      unsigned optLevel, unsigned threads,
                                      const std::vector<std::string> &entryPoints) {
  std::unique_ptr<llvm::TargetMachine> machine = hostMachine(optLevel);
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module =
      mlir::translateModuleToLLVMIR(unwrap(operation), context, "soac");
  if (!module)
    throw std::runtime_error("the module could not be translated to LLVM IR");
  module->setDataLayout(machine->createDataLayout());
  module->setTargetTriple(machine->getTargetTriple());
  for (const std::string &name : entryPoints) {
    llvm::Function *function = module->getFunction(name);
    if (!function || function->isDeclaration())
      throw std::runtime_error("no function @" + name + " to call");
    definePackedInterface(*function);
  }
  if (llvm::Error error = mlir::makeOptimizingTransformer(
          optLevel, /*sizeLevel=*/0, machine.get())(module.get()))
    throw std::runtime_error("LLVM's optimization failed: " +
                             message(std::move(error)));

  std::vector<std::string> objects;
  unsigned definitions = llvm::count_if(
      module->functions(), [](llvm::Function &f) { return !f.isDeclaration(); });
  unsigned parts = std::max(1u, std::min(threads, definitions));
  if (parts == 1) {
    objects.push_back(emitObject(*module, *machine));
  } else {
    // Functions are dealt out by size; locals used across parts become
    // hidden globals, which the parts' linking resolves.
    std::vector<std::string> bitcode;
    llvm::SplitModule(
        *module, parts,
        [&](std::unique_ptr<llvm::Module> part) {
          std::string buffer;
          llvm::raw_string_ostream stream(buffer);
          llvm::WriteBitcodeToFile(*part, stream);
          stream.flush();
          bitcode.push_back(std::move(buffer));
        },
        /*PreserveLocals=*/false, /*RoundRobin=*/true);
    objects = emitInParallel(bitcode, optLevel);
  }
  std::vector<nb::bytes> result;
  for (const std::string &object : objects)
    result.emplace_back(object.data(), object.size());
  return result;
}

/// Object files linked into this process, their undefined symbols resolved
/// in `libraries` and the process.
class ObjectJit {
public:
  ObjectJit(const std::vector<nb::bytes> &objects,
            const std::vector<std::string> &libraries) {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    auto jit = llvm::orc::LLJITBuilder().create();
    if (!jit)
      throw std::runtime_error("no JIT for this host: " +
                               message(jit.takeError()));
    this->jit = std::move(*jit);
    llvm::orc::JITDylib &main = this->jit->getMainJITDylib();
    char prefix = this->jit->getDataLayout().getGlobalPrefix();
    for (const std::string &library : libraries) {
      auto generator = llvm::orc::DynamicLibrarySearchGenerator::Load(
          library.c_str(), prefix);
      if (!generator)
        throw std::runtime_error("cannot load " + library + ": " +
                                 message(generator.takeError()));
      main.addGenerator(std::move(*generator));
    }
    auto process =
        llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
    if (!process)
      throw std::runtime_error(message(process.takeError()));
    main.addGenerator(std::move(*process));
    for (const nb::bytes &object : objects)
      if (llvm::Error error = this->jit->addObjectFile(
              llvm::MemoryBuffer::getMemBufferCopy(
                  llvm::StringRef(object.c_str(), object.size()), "soac")))
        throw std::runtime_error("cannot link the object code: " +
                                 message(std::move(error)));
  }

  /// The address of `name`, linking the objects on the first lookup.
  uintptr_t lookup(const std::string &name) {
    auto address = jit->lookup(name);
    if (!address)
      throw std::runtime_error("cannot find @" + name + ": " +
                               message(address.takeError()));
    return address->getValue();
  }

private:
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

} // namespace

void defineObjectCode(nb::module_ &m) {
  m.def("compile_objects", &compileObjects, nb::arg("module"),
        nb::arg("opt_level"), nb::arg("threads"), nb::arg("entry_points"),
        "Object files (bytes) of a module in MLIR's LLVM dialect: "
        "translated, with a packed interface _mlir_<name>(void **) for each "
        "function of `entry_points`, optimized at `opt_level` as MLIR's "
        "ExecutionEngine optimizes, then compiled in at most `threads` parts "
        "on as many threads. Position-independent code for this host's CPU.");
  nb::class_<ObjectJit>(m, "ObjectJit",
                        "Object files linked into this process (ORC LLJIT); "
                        "their code lives as long as this object.")
      .def(nb::init<const std::vector<nb::bytes> &,
                    const std::vector<std::string> &>(),
           nb::arg("objects"), nb::arg("libraries"))
      .def("lookup", &ObjectJit::lookup, nb::arg("name"),
           "The address of a symbol of the objects.");
}

} // namespace soac::python
