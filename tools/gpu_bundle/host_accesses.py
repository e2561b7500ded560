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
    functions = [op for op in lowered.body.operations if op.operation.name == "llvm.func"]
    on_stack = _stack_arguments(functions)
    found = []
    for function in functions:
        name = ir.StringAttr(function.attributes["sym_name"]).value
        # The C interface loads the caller's descriptors and stores the results' struct.
        interface = name.startswith("_mlir_ciface_")
        for block in function.regions[0].blocks:
            for op in block.operations:
                found += _accesses(op.operation, interface, on_stack)
    return found


def _stack_arguments(functions) -> set:
    """Arguments of private functions that every call passes a pointer into
    the stack (the deallocation pipeline's helper and its arrays)."""
    calls: dict[str, list] = {}
    for function in functions:
        for block in function.regions[0].blocks:
            for op in block.operations:
                if op.operation.name == "llvm.call" and "callee" in op.operation.attributes:
                    calls.setdefault(ir.FlatSymbolRefAttr(op.operation.attributes["callee"]).value, []).append(op.operation)
    found = set()
    for function in functions:
        name = ir.StringAttr(function.attributes["sym_name"]).value
        if name not in calls or len(function.regions[0].blocks) == 0:
            continue
        for position, argument in enumerate(function.regions[0].blocks[0].arguments):
            if all(_on_stack(_base(call.operands[position])) for call in calls[name]):
                found.add(argument)
    return found


def _on_stack(pointer: ir.Value) -> bool:
    return isinstance(pointer, ir.OpResult) and pointer.owner.name == "llvm.alloca"


def _accesses(op: ir.Operation, interface: bool, on_stack: set) -> list[str]:
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
        if isinstance(base, ir.BlockArgument) and (interface or base in on_stack):
            continue
        if _on_stack(base):
            continue
        return [f"{kind} at {op.location}"]
    return []


def _base(pointer: ir.Value) -> ir.Value:
    """The pointer ``pointer`` is computed from: through pointer arithmetic,
    and through a descriptor's field back to the value stored there."""
    while isinstance(pointer, ir.OpResult):
        owner = pointer.owner
        if owner.name in _DERIVED:
            pointer = owner.operands[0]
        elif owner.name == "llvm.extractvalue":
            inserted = _inserted(owner.operands[0], list(ir.DenseI64ArrayAttr(owner.attributes["position"])))
            if inserted is None:
                return pointer
            pointer = inserted
        else:
            return pointer
    return pointer


def _inserted(aggregate: ir.Value, position: list[int]) -> ir.Value | None:
    """The value an ``llvm.insertvalue`` chain put at ``position`` of ``aggregate``."""
    while isinstance(aggregate, ir.OpResult) and aggregate.owner.name == "llvm.insertvalue":
        insert = aggregate.owner
        if list(ir.DenseI64ArrayAttr(insert.attributes["position"])) == position:
            return insert.operands[1]
        aggregate = insert.operands[0]
    return None
