"""Which host code of a lowered GPU program reads or writes buffers.

Compiled code may keep its buffers in device memory (the runtime's
``soac_gpu_set_memory(1)``) only where its host part never dereferences a
buffer: kernels do, host code must not. This walks the host functions of a
module lowered by ``soac-lower-to-nvvm`` (LLVM dialect) and lists every
dereference of memory that is not the caller's descriptors or the stack:
loads and stores (a scalar read of a reduce's result, a loop's bound read
from a tensor), ``memcpy``/``memmove``/``memset`` intrinsics (copies
between buffers) and ``memrefCopy`` calls (strided copies).
"""

from __future__ import annotations

from mlir import ir

_DEREFERENCES = {
    "llvm.load": (0,),
    "llvm.store": (1,),
    "llvm.intr.memcpy": (0, 1),
    "llvm.intr.memcpy.inline": (0, 1),
    "llvm.intr.memmove": (0, 1),
    "llvm.intr.memset": (0,),
}
# Pointer arithmetic: the memory a pointer addresses is its first operand's.
_DERIVED = {"llvm.getelementptr", "llvm.bitcast", "llvm.addrspacecast"}


def host_buffer_accesses(lowered: ir.Module) -> list[str]:
    """``"<op> at <location>"`` for each host dereference of a buffer, in
    program order; empty when the host code only passes buffers to kernels."""
    found = []
    for function in lowered.body.operations:
        if function.operation.name != "llvm.func":
            continue
        name = ir.StringAttr(function.attributes["sym_name"]).value
        # The C interface loads the caller's descriptors and stores the results' struct.
        interface = name.startswith("_mlir_ciface_")
        for block in function.regions[0].blocks:
            for op in block.operations:
                found += _accesses(op.operation, interface)
    return found


def _accesses(op: ir.Operation, interface: bool) -> list[str]:
    kind = op.name
    if kind == "llvm.call":
        callee = op.attributes["callee"] if "callee" in op.attributes else None
        if callee is not None and ir.FlatSymbolRefAttr(callee).value == "memrefCopy":
            return [f"memrefCopy at {op.location}"]
        return []
    positions = _DEREFERENCES.get(kind)
    if positions is None:
        return []
    for position in positions:
        base = _base(op.operands[position])
        if isinstance(base, ir.BlockArgument) and interface:
            continue
        if isinstance(base, ir.OpResult) and base.owner.name == "llvm.alloca":
            continue
        return [f"{kind} at {op.location}"]
    return []


def _base(pointer: ir.Value) -> ir.Value:
    """The pointer ``pointer`` is computed from by pointer arithmetic."""
    while isinstance(pointer, ir.OpResult) and pointer.owner.name in _DERIVED:
        pointer = pointer.owner.operands[0]
    return pointer
