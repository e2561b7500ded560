"""The kernels of code lowered for the GPU: their PTX, and ``ptxas`` checks.

``soac-lower-to-nvvm`` embeds each kernel module as a ``gpu.binary``; with
``format=isa`` its object is PTX text. Command line (the lit tests use it)::

    soac-opt --soac-lower-to-nvvm prog.mlir | python -m soac.ptx            # print the PTX
    soac-opt --soac-lower-to-nvvm prog.mlir | python -m soac.ptx --ptxas sm_90

The second form assembles every kernel with ``ptxas`` and fails with its
messages when one does not assemble.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from mlir import ir
from mlir.dialects import gpu

from .diagnostics import parse
from .errors import Error


# gpu::CompilationTarget::Assembly, the format of PTX objects.
_ASSEMBLY = 2


def kernels(lowered: ir.Module) -> dict[str, str]:
    """PTX of each ``gpu.binary`` of a module lowered with ``format=isa``, by name."""
    found = {}
    for op in lowered.body.operations:
        if op.operation.name != "gpu.binary":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        for attr in ir.ArrayAttr(op.attributes["objects"]):
            obj = gpu.ObjectAttr(attr)
            if obj.format != _ASSEMBLY:
                raise Error(f"kernel module {name} does not hold PTX: lower with format=isa")
            found[name] = obj.object.decode().rstrip("\0")
    return found


def ptxas_path() -> str | None:
    """The ``ptxas`` found on PATH or in the CUDA toolkit, if any."""
    return shutil.which("ptxas") or shutil.which("ptxas", path="/usr/local/cuda/bin")


def assemble(ptx: str, arch: str = "sm_90") -> bytes:
    """The cubin ``ptxas -arch=<arch>`` makes of ``ptx``; a soac.Error with
    its messages when the PTX does not assemble."""
    ptxas = ptxas_path()
    if ptxas is None:
        raise Error("ptxas is not installed (it comes with the CUDA toolkit)")
    with tempfile.TemporaryDirectory() as scratch:
        source, target = os.path.join(scratch, "kernel.ptx"), os.path.join(scratch, "kernel.cubin")
        with open(source, "w") as f:
            f.write(ptx)
        done = subprocess.run([ptxas, f"-arch={arch}", source, "-o", target], capture_output=True, text=True)
        if done.returncode != 0:
            raise Error(f"ptxas -arch={arch} rejected the PTX:\n{done.stderr}")
        with open(target, "rb") as f:
            return f.read()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m soac.ptx", description=__doc__.split("\n\n")[0])
    parser.add_argument("input", nargs="?", default="-", help="module lowered by soac-lower-to-nvvm (default: stdin)")
    parser.add_argument("--ptxas", metavar="ARCH", help="assemble every kernel for ARCH (e.g. sm_90) instead of printing")
    args = parser.parse_args(argv)
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    with ir.Context():
        try:
            found = {}
            # soac-opt --split-input-file prints modules separated by "// -----".
            for chunk in text.split("\n// -----\n"):
                found.update(kernels(parse(chunk)))
            if not found:
                raise Error("the module holds no gpu.binary (was it lowered by soac-lower-to-nvvm?)")
            for name, ptx in found.items():
                if args.ptxas:
                    cubin = assemble(ptx, args.ptxas)
                    print(f"{name}: assembled for {args.ptxas} ({len(cubin)} bytes)")
                else:
                    print(f"// ---- kernel module {name}\n{ptx}")
        except Error as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
