"""scf.for, scf.while and scf.if."""

from __future__ import annotations

from .core import handles


@handles("scf.for")
def _for(interp, op, operands):
    lower, upper, step, *carried = operands
    for iv in range(int(lower), int(upper), int(step)):
        carried = interp.run_region(op.regions[0], [type(lower)(iv), *carried])
    return carried


@handles("scf.while")
def _while(interp, op, operands):
    before, after = op.regions[0], op.regions[1]
    carried = operands
    while True:
        condition, *forwarded = interp.run_region(before, carried)
        if not condition:
            return forwarded
        carried = interp.run_region(after, forwarded)


@handles("scf.if")
def _if(interp, op, operands):
    branch = op.regions[0] if operands[0] else op.regions[1]
    if len(branch.blocks) == 0:  # an absent else
        return []
    return interp.run_region(branch, [])
