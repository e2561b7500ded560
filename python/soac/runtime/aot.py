"""Shared libraries: compiled soac functions that run without MLIR installed.

``write_shared_library`` turns a module lowered to the LLVM dialect into a
directory holding

* ``lib<name>.so``: the code, exporting ``_mlir_ciface_<name>`` (the ABI is
  documented in :mod:`soac.runtime.abi` and in the header);
* ``<name>.h``: C declarations of the memref descriptors and the functions;
* ``lib<name>.json``: the signatures, read by the loader;
* ``soac_runtime.py``: a copy of :mod:`soac.runtime.abi`, a loader needing only
  ctypes and numpy: ``soac_runtime.load_library("lib<name>.so").<name>(...)``,
  and ``soac_device.py`` beside it, a copy of :mod:`soac.runtime.device`;
* the native libraries the code links against (soac's allocation functions
  and memrefCopy, and the OpenMP runtime), found through the library's
  ``$ORIGIN`` run path.

Code for the GPU links against ``libsoac_cuda_runtime.so`` alone (kernel
launches and managed memory on the CUDA driver, which it opens when loaded):
the directory then runs on any machine with the driver, numpy and Python.
"""

from __future__ import annotations

import json
import functools
import os
import pathlib
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

import mlir
from mlir import ir

from ..errors import Error
from . import abi, device, native
from .abi import Signature, ValueSpec

_C_TYPES = {
    "float16": "uint16_t",
    "float32": "float",
    "float64": "double",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "bool": "bool",
}


@dataclass(frozen=True)
class SharedLibrary:
    """The files written for one compiled function."""

    library: pathlib.Path
    header: pathlib.Path
    metadata: pathlib.Path
    loader: pathlib.Path

    def load(self) -> abi.Library:
        """The library loaded in this process."""
        return abi.load_library(str(self.library))


def compile_object(lowered: ir.Module, path: pathlib.Path) -> pathlib.Path:
    """``lowered`` (LLVM dialect) as an ELF object of position-independent
    code at ``path``, for any x86-64 CPU (a library may be shipped):
    translated to LLVM IR, optimized at -O3 as the JIT optimizes (opt),
    then compiled (llc). Without opt, llc alone left the code 1.9-3.1x
    slower than the JIT's on GMM's and k-means' gradients."""
    llvm_ir = path.with_suffix(".ll")
    bitcode = path.with_suffix(".bc")
    # opt knows the target (its vectorizer's costs) only from a triple,
    # which the translated module lacks.
    target = f"-mtriple={_host_triple()}"
    llvm_ir.write_text(_run([_tool("mlir", "mlir-translate"), "--mlir-to-llvmir"], str(lowered)))
    _run([_tool("llvm", "opt"), "-O3", target, str(llvm_ir), "-o", str(bitcode)])
    _run([_tool("llvm", "llc"), "-O3", target, "-filetype=obj", "-relocation-model=pic", str(bitcode), "-o", str(path)])
    return path


@functools.cache
def _host_triple() -> str:
    """The target triple the LLVM tools compile for by default (this machine's)."""
    for line in _run([_tool("llvm", "llc"), "--version"]).splitlines():
        if "Default target:" in line:
            return line.split(":", 1)[1].strip()
    raise Error("llc --version does not say its default target")


def write_shared_library(lowered: ir.Module, signatures: list[Signature], output, options) -> SharedLibrary:
    directory = pathlib.Path(output)
    directory.mkdir(parents=True, exist_ok=True)
    name = signatures[0].name
    library = directory / f"lib{name}.so"
    gpu = options.TARGET == "gpu"
    with tempfile.TemporaryDirectory() as scratch:
        objects = pathlib.Path(scratch, f"{name}.o")
        compile_object(lowered, objects)
        # the packed interfaces, which every call from Python goes through
        header = pathlib.Path(scratch, f"{name}.h")
        header.write_text(c_header(signatures, library.name, gpu))
        packed = pathlib.Path(scratch, f"{name}_packed.c")
        packed.write_text(packed_interfaces(signatures, header.name))
        sources = [str(packed)]
        links = []
        for path in _native_libraries(options):
            shutil.copy2(path, directory / os.path.basename(path))
            links.append(str(directory / os.path.basename(path)))
        _link(library, [str(objects), *sources], links, ["$ORIGIN"])
    header = directory / f"{name}.h"
    header.write_text(c_header(signatures, library.name, gpu))
    metadata = _write_metadata(directory, signatures, options)
    loader = copy_loader(directory)
    return SharedLibrary(library, header, metadata, loader)


# The standalone loader's modules, by the names they have beside a library.
LOADER_FILES = {"soac_runtime.py": abi.__file__, "soac_device.py": device.__file__}


def copy_loader(directory: pathlib.Path) -> pathlib.Path:
    """Copies the standalone loader into ``directory``; its main module."""
    for name, source in LOADER_FILES.items():
        shutil.copy2(source, directory / name)
    return directory / "soac_runtime.py"


def link_jit_object(object_file: str | os.PathLike, signatures: list[Signature], output, options) -> pathlib.Path:
    """``lib<name>.so`` and its signatures (``lib<name>.json``) in the
    directory ``output``, linked from the object code of a CPU JIT compiled
    with ``enable_pic`` (:func:`soac.runtime.jit.jit`): the same machine code
    the JIT runs, its packed interfaces included. It links to the native
    libraries where they are installed (absolute run paths), not to copies:
    it is for this installation only (the disk cache), not to ship."""
    directory = pathlib.Path(output)
    library = directory / f"lib{signatures[0].name}.so"
    natives = _native_libraries(options)
    _link(library, [str(object_file)], natives, sorted({os.path.dirname(path) for path in natives}))
    _write_metadata(directory, signatures, options)
    return library


def _native_libraries(options) -> list[str]:
    """The native libraries code compiled with ``options`` calls into."""
    if options.TARGET == "gpu":
        return [native.soac_cuda_runtime_library()]
    natives = [native.soac_runtime_library()]
    if options.openmp:
        natives.append(native.openmp_library())
    return natives


def _link(library: pathlib.Path, inputs: list[str], natives: list[str], run_paths: list[str]) -> None:
    # Every symbol must come from the native libraries: say so now, not when
    # the library is loaded (on another machine, for a shipped one). They are
    # linked even when the code calls none of their functions: the loader
    # calls the runtime's soac_call_checked through the library's handle.
    _run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-O2", "-o", str(library), *inputs,
          "-Wl,--no-as-needed", *natives, "-Wl,--as-needed", "-lm",
          "-Wl,--no-undefined", *(f"-Wl,-rpath,{path}" for path in run_paths)])


def _write_metadata(directory: pathlib.Path, signatures: list[Signature], options) -> pathlib.Path:
    """``lib<name>.json``: the target and signatures the loader reads."""
    metadata = directory / f"lib{signatures[0].name}.json"
    data = {"target": options.TARGET, "functions": [s.to_json() for s in signatures]}
    if options.TARGET == "gpu":
        data["device_memory"] = options.device_memory
    metadata.write_text(json.dumps(data, indent=2) + "\n")
    return metadata


def c_header(signatures: list[Signature], library: str, gpu: bool = False) -> str:
    """C declarations of the descriptors and entry points of ``signatures``."""
    descriptors: dict[str, str] = {}
    declarations = []
    for signature in signatures:
        params = []
        results = signature.results
        packed = len(results) > 1 or (len(results) == 1 and results[0].is_tensor)
        if packed:
            struct = f"soac_{signature.name}_results"
            fields = "".join(f"  {_c_value(r, descriptors)} r{i};\n" for i, r in enumerate(results))
            declarations.append(f"typedef struct {{\n{fields}}} {struct};\n")
            params.append(f"{struct} *results")
        for i, arg in enumerate(signature.args):
            pointer = " *" if arg.is_tensor else " "
            params.append(f"{_c_value(arg, descriptors)}{pointer}arg{i}")
        returns = _c_value(results[0], descriptors) if results and not packed else "void"
        declarations.append(f"{returns} _mlir_ciface_{signature.name}({', '.join(params) or 'void'});\n")
        # MLIR's packed interface: a pointer to each argument (Python calls it)
        declarations.append(f"void _mlir__mlir_ciface_{signature.name}(void **args);\n")
    return (
        f"/* {library}: generated by soac. The ABI is MLIR's C interface:\n"
        " * tensors are passed as pointers to memref descriptors of C-contiguous arrays;\n"
        " * several results, or one tensor result, are written to a struct passed first;\n"
        + (
            " * tensors live in CUDA managed memory: allocate arguments with soac_gpu_alloc(),\n"
            " * free them and the results' `allocated` with soac_gpu_free(). */\n"
            "#include <stddef.h>\n"
            if gpu
            else " * result buffers are malloc'ed: the caller frees `allocated` with free(). */\n"
        )
        + "#include <stdbool.h>\n#include <stdint.h>\n\n"
        + (
            "const char *soac_gpu_status(void); /* \"ready\", or why GPU code cannot run */\n"
            "void *soac_gpu_alloc(size_t size); /* NULL when out of memory */\n"
            "void soac_gpu_free(void *pointer);\n\n"
            if gpu
            else ""
        )
        + "/* A check that fails at run time (an index out of range, operands of a map of\n"
        " * different sizes, a buffer that cannot be allocated"
        + (",\n * a check in a kernel, an error of the CUDA driver" if gpu else "")
        + ") prints its message\n"
        " * and aborts, unless the call goes through soac_call_checked and the packed\n"
        " * interface, which then stop the call, free what it allocated and return the\n"
        " * message (else NULL); soac_failure_kind() then says what failed (1: sizes,\n"
        " * 2: an index, 3: memory" + (", 4: the GPU driver" if gpu else "") + "):\n"
        " *   void *args[] = {&results_pointer, &arg0, ...};  (then &result, if scalar)\n"
        " *   const char *failed = soac_call_checked(_mlir__mlir_ciface_<name>, args); */\n"
        "const char *soac_call_checked(void (*packed)(void **), void **args);\n"
        "int soac_failure_kind(void);\n\n"
        + "".join(descriptors.values())
        + "\n"
        + "\n".join(declarations)
    )


def packed_interfaces(signatures: list[Signature], header: str) -> str:
    """C source of ``_mlir__mlir_ciface_<name>(void **args)`` for each
    signature: MLIR's packed interface (what the JIT generates), a pointer to
    each argument of the C interface, then to the scalar result."""
    descriptors: dict[str, str] = {}
    functions = []
    for signature in signatures:
        results = signature.results
        packed = len(results) > 1 or (len(results) == 1 and results[0].is_tensor)
        operands = [f"*(soac_{signature.name}_results **)args[0]"] if packed else []
        for arg in signature.args:
            pointer = " *" if arg.is_tensor else ""
            operands.append(f"*({_c_value(arg, descriptors)}{pointer} *)args[{len(operands)}]")
        call = f"_mlir_ciface_{signature.name}({', '.join(operands)})"
        if results and not packed:
            call = f"*({_c_value(results[0], descriptors)} *)args[{len(operands)}] = {call}"
        functions.append(f"void _mlir__mlir_ciface_{signature.name}(void **args) {{ {call}; }}\n")
    return f'#include "{header}"\n\n' + "".join(functions)


def _c_value(spec: ValueSpec, descriptors: dict[str, str]) -> str:
    element = _C_TYPES[spec.dtype]
    if not spec.is_tensor:
        return element
    rank = len(spec.shape)
    name = f"soac_memref_{rank}d_{spec.dtype}"
    if name not in descriptors:
        dims = f"  int64_t sizes[{rank}];\n  int64_t strides[{rank}];\n" if rank else ""
        descriptors[name] = (
            f"typedef struct {{\n  {element} *allocated;\n  {element} *aligned;\n"
            f"  int64_t offset;\n{dims}}} {name};\n"
        )
    return name


def _tool(package: str, name: str) -> str:
    root = list(mlir.__path__)[0] if package == "mlir" else list(__import__("llvm").__path__)[0]
    return os.path.join(root, "bin", name)


def _run(command: list[str], stdin: str | None = None) -> str:
    try:
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, check=True)
    except FileNotFoundError:
        raise Error(f"{command[0]} is not installed; it is needed to write shared libraries") from None
    except subprocess.CalledProcessError as failure:
        raise Error(f"{os.path.basename(command[0])} failed:\n{failure.stderr}") from None
    return done.stdout
