"""The cost of a gradient as a multiple of its primal's, read from the IR.

Reverse mode by re-execution promises a gradient that costs a constant
multiple of its primal (the cheap-gradient principle). This module checks a
derivative soac-autodiff generated against that promise, statically: it
counts the work and the memory of the primal function and of its vjp as
polynomials in the program's sizes (``n`` for each dynamic dimension of an
argument, a loop's trip count, ...) and flags every term of the gradient's
work or memory that no term of the primal's bounds: a construct whose
adjoint is asymptotically worse than the primal (a dense adjoint of a free
array accumulated once per row of a map, say, where the primal read a few
elements of it).

The model: an op costs one unit, times the trip counts of the maps,
reductions, scans, scatters and loops around it; an op that creates a
tensor (``tensor.empty``, ``splat``, ``generate``, ``soac.iota``, a copy)
also costs its number of elements. Memory is the sum of the sizes of the
tensors a function creates, each counted once (a temporary of a loop body
is reused from one iteration to the next), plus its arguments. Sizes it
cannot follow (a trip count computed from data) become symbols named after
the operation and its source location, so that the same loop in the primal
and in its re-execution in the gradient gets the same symbol. It is an
estimate: constant factors are approximate, and the ratios are evaluated
with every size set to one value.

>>> import soac
>>> program = '''
...   func.func @sum_of_squares(%x: tensor<?xf64>) -> f64 {
...     %zero = arith.constant 0.0 : f64
...     %sq = soac.map ins(%x : tensor<?xf64>) -> tensor<?xf64> {
...     ^bb0(%v: f64):
...       %s = arith.mulf %v, %v : f64
...       soac.yield %s : f64
...     }
...     %s = soac.reduce ins(%sq : tensor<?xf64>) init(%zero : f64) -> f64 {
...     ^bb0(%acc: f64, %v: f64):
...       %t = arith.addf %acc, %v : f64
...       soac.yield %t : f64
...     }
...     return %s : f64
...   }'''
>>> cost = soac.mlir.gradient_cost(program, "sum_of_squares")
>>> cost.flags
[]
>>> print(cost.primal_work)  # a multiplication and an addition per element of argument 0
2·x0
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from mlir import ir, passmanager

from .autodiff import _add_wrapper, _find_function, _fresh_name
from .compiler import as_module
from .diagnostics import diagnostic_lines
from .errors import Error, LoweringError

# A monomial: (symbol, exponent) pairs, sorted; () is the constant 1.
Monomial = tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class Polynomial:
    """A polynomial in size symbols with non-negative coefficients."""

    terms: dict[Monomial, float] = field(default_factory=dict)

    @staticmethod
    def constant(value: float) -> Polynomial:
        return Polynomial({(): float(value)} if value else {})

    @staticmethod
    def symbol(name: str) -> Polynomial:
        return Polynomial({((name, 1),): 1.0})

    def __add__(self, other: Polynomial) -> Polynomial:
        terms = dict(self.terms)
        for monomial, coefficient in other.terms.items():
            terms[monomial] = terms.get(monomial, 0.0) + coefficient
        return Polynomial(terms)

    def __mul__(self, other: Polynomial) -> Polynomial:
        terms: dict[Monomial, float] = {}
        for a, x in self.terms.items():
            for b, y in other.terms.items():
                monomial = _multiply(a, b)
                terms[monomial] = terms.get(monomial, 0.0) + x * y
        return Polynomial(terms)

    def upper(self, other: Polynomial) -> Polynomial:
        """A bound of both: each monomial with the larger coefficient."""
        terms = dict(self.terms)
        for monomial, coefficient in other.terms.items():
            terms[monomial] = max(terms.get(monomial, 0.0), coefficient)
        return Polynomial(terms)

    def substitute(self, values: dict[str, Polynomial]) -> Polynomial:
        """Each symbol in ``values`` replaced by its polynomial."""
        result = Polynomial()
        for monomial, coefficient in self.terms.items():
            term = Polynomial.constant(coefficient)
            for name, exponent in monomial:
                base = values.get(name, Polynomial.symbol(name))
                for _ in range(exponent):
                    term = term * base
            result = result + term
        return result

    def at(self, size: float) -> float:
        """The value with every symbol set to ``size``."""
        return sum(c * size ** sum(e for _, e in m) for m, c in self.terms.items())

    def uncovered(self, bound: Polynomial) -> list[Monomial]:
        """The monomials of ``self`` that no monomial of ``bound`` dominates
        (exponent by exponent): the terms that grow faster than ``bound``."""
        return [m for m in self.terms if m and not any(_divides(m, b) for b in bound.terms)]

    def __str__(self) -> str:
        if not self.terms:
            return "0"
        ordered = sorted(self.terms.items(), key=lambda item: (-_degree(item[0]), item[0]))
        return " + ".join(_term(m, c) for m, c in ordered)


def _multiply(a: Monomial, b: Monomial) -> Monomial:
    exponents = dict(a)
    for name, exponent in b:
        exponents[name] = exponents.get(name, 0) + exponent
    return tuple(sorted(exponents.items()))


def _divides(a: Monomial, b: Monomial) -> bool:
    exponents = dict(b)
    return all(exponents.get(name, 0) >= exponent for name, exponent in a)


def _degree(monomial: Monomial) -> int:
    return sum(exponent for _, exponent in monomial)


def _term(monomial: Monomial, coefficient: float) -> str:
    factors = [name if exponent == 1 else f"{name}^{exponent}" for name, exponent in monomial]
    number = f"{coefficient:g}"
    if not factors:
        return number
    return "·".join(factors) if number == "1" else f"{number}·" + "·".join(factors)


def monomial_string(monomial: Monomial) -> str:
    return _term(monomial, 1.0)


ONE = Polynomial.constant(1.0)
ZERO = Polynomial()

# Ops that make a new tensor of their result's size (its elements written once).
_CREATING = {"tensor.empty", "tensor.splat", "tensor.generate", "tensor.from_elements", "soac.iota", "tensor.pad",
             "bufferization.alloc_tensor", "tensor.concat"}
# Ops whose result is a view of, or an update in place of, an operand: no new memory.
_IN_PLACE = {"tensor.extract_slice", "tensor.collapse_shape", "tensor.expand_shape", "tensor.cast", "tensor.insert",
             "tensor.insert_slice", "soac.scatter", "soac.reduce_by_index", "scf.for", "scf.while", "scf.if",
             "func.call", "tensor.reshape"}


class _Function:
    """The symbolic sizes, work and memory of one ``func.func``, its argument
    sizes named by ``names`` (argument position -> symbol base)."""

    def __init__(self, analysis: _Analysis, function, names: list[str], argument_sizes: dict[tuple[int, int], Polynomial]):
        self.analysis = analysis
        self.function = function
        self.names = names
        # (argument position, dimension) -> size, for arguments sized by others (a vjp's cotangents).
        self.argument_sizes = argument_sizes
        self._sizes: dict[tuple[ir.Value, int], Polynomial] = {}
        self._work: Polynomial | None = None
        # (cost, where) of each op, for the flags.
        self.contributions: list[tuple[Polynomial, str]] = []
        self.memory_contributions: list[tuple[Polynomial, str]] = []

    # -- sizes -------------------------------------------------------------------------------------

    def size(self, value: ir.Value, dim: int) -> Polynomial:
        """The size of dimension ``dim`` of the tensor ``value``."""
        shape = ir.RankedTensorType(value.type).shape if isinstance(value.type, ir.RankedTensorType) else []
        if dim < len(shape) and not ir.ShapedType.is_dynamic_size(shape[dim]):
            return Polynomial.constant(shape[dim])
        key = (value, dim)
        if key not in self._sizes:
            self._sizes[key] = self._dynamic_size(value, dim)
        return self._sizes[key]

    def elements(self, value: ir.Value) -> Polynomial:
        if not isinstance(value.type, ir.RankedTensorType):
            return ONE
        result = ONE
        for dim in range(ir.RankedTensorType(value.type).rank):
            result = result * self.size(value, dim)
        return result

    def _dynamic_size(self, value: ir.Value, dim: int) -> Polynomial:
        if isinstance(value.owner, ir.Block):
            return self._argument_size(ir.BlockArgument(value), dim)
        op = value.owner
        name, number = op.operation.name, ir.OpResult(value).result_number
        operands = list(op.operands)
        if name == "soac.map":
            if dim == 0:
                return self.size(operands[0], 0)
            return self.size(_terminator(op).operands[number], dim - 1)
        if name in ("soac.reduce", "soac.scan"):
            count = len(op.results)
            return self.size(operands[number] if name == "soac.scan" else operands[count + number], dim)
        if name in ("soac.scatter", "tensor.insert", "tensor.insert_slice", "tensor.cast"):
            destination = {"soac.scatter": 0, "tensor.insert": 1, "tensor.insert_slice": 1, "tensor.cast": 0}[name]
            return self.size(operands[destination], dim)
        if name == "soac.reduce_by_index":
            return self.size(operands[number], dim)
        if name == "scf.for":
            return self.size(operands[3 + number], dim)
        if name == "scf.if":
            return self.size(_terminator(op, 0).operands[number], dim)
        if name == "soac.iota":
            return self.index(operands[0]) if operands else self._unknown(op, dim)
        if name in ("tensor.empty", "tensor.splat", "tensor.generate"):
            return self._from_dynamic_operands(value, dim, operands[1:] if name == "tensor.splat" else operands)
        if name == "tensor.expand_shape":
            return self._from_dynamic_operands(value, dim, operands[1:])
        if name == "tensor.extract_slice":
            return self._slice_size(op, value, dim)
        if name == "tensor.collapse_shape":
            groups = [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(g)] for g in ir.ArrayAttr(op.attributes["reassociation"])]
            result = ONE
            for source_dim in groups[dim]:
                result = result * self.size(operands[0], source_dim)
            return result
        if name == "func.call":
            return self.analysis.call_result_size(self, op, number, dim)
        if name == "soac.matmul":
            rows, columns, _ = self._product_sizes(op)
            return (rows, columns)[dim]
        return self._unknown(op, dim)

    def _product_sizes(self, op) -> tuple[Polynomial, Polynomial, Polynomial]:
        """The rows, columns and inner size of a soac.matmul (whose operands
        are read transposed under its flags), the inner sizes recorded equal."""
        lhs, rhs = list(op.operands)[:2]
        lhs_dims = (1, 0) if "transpose_lhs" in op.attributes else (0, 1)
        rhs_dims = (1, 0) if "transpose_rhs" in op.attributes else (0, 1)
        inner = self.size(lhs, lhs_dims[1])
        self.analysis.equal(inner, self.size(rhs, rhs_dims[0]))
        return self.size(lhs, lhs_dims[0]), self.size(rhs, rhs_dims[1]), inner

    def _argument_size(self, argument: ir.BlockArgument, dim: int) -> Polynomial:
        owner = argument.owner.owner
        position = argument.arg_number
        if owner.operation.name == "func.func":
            if (position, dim) in self.argument_sizes:
                return self.argument_sizes[(position, dim)]
            return Polynomial.symbol(f"{self.names[position]}" if dim == 0 else f"{self.names[position]}_{dim}")
        operands = list(owner.operands)
        count = len(owner.results)
        if owner.operation.name == "soac.map":  # the rows of the inputs
            return self.size(operands[position], dim + 1)
        if owner.operation.name in ("soac.reduce", "soac.scan"):  # accumulators, then rows of the inputs
            return self.size(operands[position % count], dim + 1)
        if owner.operation.name == "soac.reduce_by_index":  # rows of the destinations, twice
            return self.size(operands[position % count], dim + 1)
        if owner.operation.name == "scf.for" and position > 0:
            return self.size(operands[3 + position - 1], dim)
        return self._unknown(owner, dim)

    def _from_dynamic_operands(self, value: ir.Value, dim: int, sizes: list[ir.Value]) -> Polynomial:
        shape = ir.RankedTensorType(value.type).shape
        dynamic_before = sum(1 for d in range(dim) if ir.ShapedType.is_dynamic_size(shape[d]))
        return self.index(sizes[dynamic_before]) if dynamic_before < len(sizes) else self._unknown(value.owner, dim)

    def _slice_size(self, op, value: ir.Value, dim: int) -> Polynomial:
        static = list(ir.DenseI64ArrayAttr(op.attributes["static_sizes"]))
        segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))
        size_operands = list(op.operands)[1 + segments[1]: 1 + segments[1] + segments[2]]
        sizes, next_operand = [], 0
        for s in static:
            if ir.ShapedType.is_dynamic_size(s):
                sizes.append(self.index(size_operands[next_operand]))
                next_operand += 1
            else:
                sizes.append(Polynomial.constant(s))
        kept = [s for s, st in zip(sizes, static) if st != 1] if len(sizes) > ir.RankedTensorType(value.type).rank else sizes
        return kept[dim] if dim < len(kept) else self._unknown(op, dim)

    def index(self, value: ir.Value) -> Polynomial:
        """An upper bound of the integer ``value`` (a size, a trip count)."""
        if isinstance(value.owner, ir.Block):
            argument = ir.BlockArgument(value)
            return self._unknown(argument.owner.owner, argument.arg_number)
        op = value.owner
        operands = list(op.operands)
        if op.operation.name == "arith.constant":
            attribute = op.attributes["value"]
            return Polynomial.constant(abs(ir.IntegerAttr(attribute).value)) if isinstance(attribute, ir.IntegerAttr) else ONE
        if op.operation.name == "tensor.dim":
            index = operands[1].owner
            if not isinstance(index, ir.Block) and index.operation.name == "arith.constant":
                return self.size(operands[0], ir.IntegerAttr(index.attributes["value"]).value)
            return self.elements(operands[0])
        if op.operation.name in ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui", "arith.trunci"):
            return self.index(operands[0])
        if op.operation.name in ("arith.addi", "arith.maxsi", "arith.maxui", "arith.select"):
            pair = operands[-2:]
            return self.index(pair[0]) + self.index(pair[1])
        if op.operation.name in ("arith.subi", "arith.divsi", "arith.divui", "arith.ceildivsi", "arith.ceildivui", "arith.floordivsi",
                       "arith.minsi", "arith.minui", "arith.shrsi", "arith.shrui", "arith.remsi", "arith.remui"):
            return self.index(operands[0])
        if op.operation.name == "arith.muli":
            return self.index(operands[0]) * self.index(operands[1])
        if op.operation.name == "soac.check_index":
            return self.index(operands[0])
        return self._unknown(op, ir.OpResult(value).result_number)

    def _unknown(self, op, position: int) -> Polynomial:
        return Polynomial.symbol(self.analysis.symbol_for(op, position))

    # -- work and memory ---------------------------------------------------------------------------

    def work(self) -> Polynomial:
        """The function's work, computed once (a callee's serves all its calls)."""
        if self._work is None:
            self._work = self._block_work(self.function.regions[0].blocks[0], ONE)
        return self._work

    def _block_work(self, block, extent: Polynomial) -> Polynomial:
        total = ZERO
        for op in block.operations:
            own = self._op_work(op, extent)
            total = total + own
        return total

    def _op_work(self, op, extent: Polynomial) -> Polynomial:
        name = op.operation.name
        if name in ("func.return", "soac.yield", "scf.yield", "scf.condition") or name.startswith("arith.constant"):
            return ZERO
        trips = self._trips(op)
        if trips is not None:  # the body runs trips times per run of the op
            inner = extent * trips
            body = ZERO
            for region in op.regions:
                for block in region.blocks:
                    body = body + self._block_work(block, inner)
            return body
        if name == "scf.if":
            branches = [self._block_work(region.blocks[0], extent) for region in op.regions if len(region.blocks)]
            result = ZERO
            for branch in branches:
                result = result.upper(branch)
            return result
        if name == "func.call":
            work = extent * self.analysis.call_work(self, op)
            self.contributions.append((work, _where(op)))
            return work
        units = ONE
        if name == "soac.matmul":  # a multiply-add per row, column and inner position
            rows, columns, inner = self._product_sizes(op)
            units = units + rows * columns * inner
        elif name in _CREATING or (name not in _IN_PLACE and any(isinstance(r.type, ir.RankedTensorType) for r in op.results)):
            for result in op.results:
                units = units + self.elements(result)
        if name == "tensor.insert_slice":
            units = units + self.elements(list(op.operands)[0])
        work = extent * units
        self.contributions.append((work, _where(op)))
        return work

    def _trips(self, op) -> Polynomial | None:
        """How many times ``op`` runs its body per run, for ops that iterate."""
        operands = list(op.operands)
        count = len(op.results)
        if op.operation.name in ("soac.map", "soac.reduce", "soac.scan"):
            inputs = operands if op.operation.name == "soac.map" else operands[:count]
            return self._equal_leading_sizes(inputs) if inputs else ONE
        if op.operation.name == "soac.scatter":
            return self._equal_leading_sizes(operands[1:3])
        if op.operation.name == "soac.reduce_by_index":
            return self._equal_leading_sizes(operands[count: 2 * count + 1])
        if op.operation.name == "scf.for":
            return self.index(operands[1])
        if op.operation.name == "scf.while":
            return Polynomial.symbol(self.analysis.symbol_for(op, 0))
        if op.operation.name == "tensor.generate":
            return self.elements(op.results[0])
        return None

    def _equal_leading_sizes(self, tensors: list[ir.Value]) -> Polynomial:
        """The common leading size of ``tensors`` (a SOAC's verifier or its
        run-time check makes them equal), which the analysis records."""
        first = self.size(tensors[0], 0)
        for other in tensors[1:]:
            self.analysis.equal(first, self.size(other, 0))
        return first

    def memory(self) -> tuple[Polynomial, Polynomial]:
        """The memory of the arguments and of the tensors the function
        creates, and apart from it that of the checkpoints of its loops
        (the tensor.empty stores an scf.for fills: the one tape of
        re-execution), each tensor counted once."""
        total, checkpoints = ZERO, ZERO
        for argument in self.function.regions[0].blocks[0].arguments:
            total = total + self.elements(argument)
        for op in _walk(self.function.regions[0].blocks[0]):
            if op.operation.name in _IN_PLACE or op.operation.name.startswith(("func.", "soac.yield", "scf.yield")):
                continue
            if _scattered_row_by_row(op):
                continue
            for result in op.results:
                if isinstance(result.type, ir.RankedTensorType):
                    size = self.elements(result)
                    if op.operation.name == "tensor.empty" and _fills_a_loop(result):
                        checkpoints = checkpoints + size
                    else:
                        total = total + size
                        self.memory_contributions.append((size, _where(op)))
        return total, checkpoints


def _scattered_row_by_row(op) -> bool:
    """A soac.map whose results only a reduce_by_index reads, stacked
    (tensor.collapse_shape of their outer dimensions), as the sparse adjoints
    of nested reads are: the lowering computes it one row at a time inside
    the scatter (passes/Utils/Bodies.h, stackedProducer), so that only its
    rows' tensors, counted where its body makes them, are ever stored."""
    if op.operation.name != "soac.map" or not op.results:
        return False
    scatters = set()
    for result in op.results:
        for use in result.uses:
            collapse = use.owner.operation
            if collapse.name != "tensor.collapse_shape":
                return False
            readers = list(collapse.results[0].uses)
            if len(readers) != 1 or readers[0].owner.operation.name != "soac.reduce_by_index":
                return False
            scatters.add(readers[0].owner.operation)
    return len(scatters) == 1


def _fills_a_loop(value: ir.Value) -> bool:
    return any(use.owner.operation.name == "scf.for" for use in value.uses)


class _Analysis:
    """Functions of one module, analysed on demand (calls included)."""

    def __init__(self, module: ir.Module):
        self.module = module
        self.functions = {ir.StringAttr(op.attributes["sym_name"]).value: op for op in module.body.operations
                          if op.operation.name == "func.func"}
        self._symbols: dict[str, str] = {}
        self._callees: dict[str, _Function] = {}
        # Sizes known equal: symbol -> an equal symbol (union-find), and symbols known constant.
        self._parent: dict[str, str] = {}
        self._constants: dict[str, Polynomial] = {}

    def equal(self, a: Polynomial, b: Polynomial) -> None:
        """Records that two sizes are equal, where one is a symbol: the
        symbols become one (an argument's before an unknown), or the symbol
        a constant."""
        a_symbol, b_symbol = _single_symbol(a), _single_symbol(b)
        if a_symbol and b_symbol:
            a_root, b_root = self._root(a_symbol), self._root(b_symbol)
            if a_root != b_root:
                keep, drop = sorted((a_root, b_root), key=lambda name: (name.startswith("u"), name))
                self._parent[drop] = keep
        elif a_symbol or b_symbol:
            symbol, other = (a_symbol, b) if a_symbol else (b_symbol, a)
            if set(other.terms) <= {()}:
                self._constants.setdefault(self._root(symbol), other)

    def _root(self, name: str) -> str:
        while name in self._parent:
            name = self._parent[name]
        return name

    def canonical(self, polynomial: Polynomial) -> Polynomial:
        """``polynomial`` with each symbol replaced by its equals' representative."""
        names = {name for monomial in polynomial.terms for name, _ in monomial}
        values = {}
        for name in names:
            root = self._root(name)
            values[name] = self._constants.get(root, Polynomial.symbol(root))
        return polynomial.substitute(values)

    def symbol_for(self, op, position: int) -> str:
        """A size symbol for what the analysis cannot follow, named by the op
        and its location, so that re-executions share it."""
        key = f"{op.operation.name}@{op.location}#{position}"
        if key not in self._symbols:
            self._symbols[key] = f"u{len(self._symbols)}"
        return self._symbols[key]

    def analyse(self, name: str, argument_sizes: dict[tuple[int, int], Polynomial] | None = None) -> _Function:
        function = self.functions[name]
        count = len(function.regions[0].blocks[0].arguments)
        return _Function(self, function, [f"x{i}" for i in range(count)], argument_sizes or {})

    def _callee(self, name: str) -> _Function:
        if name not in self._callees:
            self._callees[name] = self.analyse(name)
        return self._callees[name]

    def _substitution(self, caller: _Function, call) -> tuple[_Function, dict[str, Polynomial]]:
        callee = self._callee(ir.FlatSymbolRefAttr(call.attributes["callee"]).value)
        values: dict[str, Polynomial] = {}
        for position, operand in enumerate(call.operands):
            if isinstance(operand.type, ir.RankedTensorType):
                for dim in range(ir.RankedTensorType(operand.type).rank):
                    symbol = callee.names[position] if dim == 0 else f"{callee.names[position]}_{dim}"
                    values[symbol] = caller.size(operand, dim)
        return callee, values

    def call_work(self, caller: _Function, call) -> Polynomial:
        callee, values = self._substitution(caller, call)
        return callee.work().substitute(values)

    def call_result_size(self, caller: _Function, call, number: int, dim: int) -> Polynomial:
        callee, values = self._substitution(caller, call)
        returned = _terminator_of_function(callee.function).operands[number]
        return callee.size(returned, dim).substitute(values)


def _walk(block) -> Iterable:
    for op in block.operations:
        yield op
        for region in op.regions:
            for inner in region.blocks:
                yield from _walk(inner)


def _terminator(op, region: int = 0):
    return list(op.regions[region].blocks[0].operations)[-1]


def _terminator_of_function(function):
    return list(function.regions[0].blocks[0].operations)[-1]


def _relative(location: str) -> str:
    """``loc("/abs/file.py":3:4)`` as ``file.py:3:4``, relative to the working directory when inside it."""
    match = re.fullmatch(r'loc\("(.*)":(\d+):(\d+)\)', location)
    if not match:
        return location
    file = match.group(1)
    cwd = os.getcwd() + os.sep
    return f"{file[len(cwd):] if file.startswith(cwd) else file}:{match.group(2)}:{match.group(3)}"


def _where(op) -> str:
    return f"{op.operation.name} at {_relative(str(op.location))}"


@dataclass
class Flag:
    """A term of the gradient's ``cost`` ("work" or "memory") that grows as
    ``grows_as`` where the primal's grows at most as ``primal``, and the
    operations of the gradient whose cost has the term (work only)."""

    cost: str
    grows_as: str
    primal: str
    operations: list[str]

    def __str__(self) -> str:
        where = f": {'; '.join(self.operations)}" if self.operations else ""
        return f"{self.cost} grows as {self.grows_as} (the primal's at most as {self.primal}){where}"


@dataclass
class GradientCost:
    """The work and memory of ``gradient`` (the vjp soac-autodiff generated
    for ``function``) against the primal's, as polynomials in the sizes
    (``x<i>`` the leading size of argument i, ``x<i>_<d>`` its dimension d,
    ``u<k>`` a size the analysis could not follow); ``checkpoints`` is the
    memory of the loops' checkpoints, which re-execution needs (a loop's
    states, about trips × state; ``checkpoint_levels`` reduces it) and which
    is not flagged; ``flags`` lists every other term of the gradient's work
    or memory that grows faster than the primal's."""

    function: str
    gradient: str
    primal_work: Polynomial
    gradient_work: Polynomial
    primal_memory: Polynomial
    gradient_memory: Polynomial
    checkpoints: Polynomial
    flags: list[Flag]

    def work_ratio(self, size: float = 1e6) -> float:
        """Gradient work over primal work, every size set to ``size``."""
        return self.gradient_work.at(size) / max(self.primal_work.at(size), 1.0)

    def memory_ratio(self, size: float = 1e6) -> float:
        """Gradient memory (checkpoints included) over primal memory, every size set to ``size``."""
        return (self.gradient_memory.at(size) + self.checkpoints.at(size)) / max(self.primal_memory.at(size), 1.0)

    def __str__(self) -> str:
        lines = [
            f"@{self.function} -> @{self.gradient}",
            f"  work:   primal {self.primal_work}",
            f"          gradient {self.gradient_work}",
            f"          ratio {self.work_ratio(1e3):.3g} at sizes 1e3, {self.work_ratio(1e6):.3g} at 1e6",
            f"  memory: primal {self.primal_memory}",
            f"          gradient {self.gradient_memory}",
            f"          checkpoints of loops {self.checkpoints}",
            f"          ratio {self.memory_ratio(1e3):.3g} at sizes 1e3, {self.memory_ratio(1e6):.3g} at 1e6",
        ]
        lines += [f"  ASYMPTOTICALLY WORSE: {flag}" for flag in self.flags] or ["  every term of the gradient is bounded by the primal's"]
        return "\n".join(lines)


def analyse(module: ir.Module, function: str, gradient: str) -> GradientCost:
    """Compares ``@gradient`` (a vjp of ``@function``: its arguments, then
    one cotangent per result, already expanded by soac-autodiff) with
    ``@function`` in ``module``."""
    analysis = _Analysis(module)
    for name in (function, gradient):
        if name not in analysis.functions:
            raise Error(f"no function @{name} in the module")
    primal = analysis.analyse(function)
    # The cotangents are sized as the primal's results.
    primal_arguments = len(primal.function.regions[0].blocks[0].arguments)
    returned = _terminator_of_function(primal.function).operands
    argument_sizes = {}
    for number, value in enumerate(returned):
        if isinstance(value.type, ir.RankedTensorType):
            for dim in range(ir.RankedTensorType(value.type).rank):
                argument_sizes[(primal_arguments + number, dim)] = primal.size(value, dim)
    derivative = analysis.analyse(gradient, argument_sizes)
    costs = [primal.work(), derivative.work(), *primal.memory(), *derivative.memory()]
    # Canonical only once every size is known: the equalities come from all of them.
    primal_work, gradient_work, primal_memory, primal_checkpoints, gradient_memory, checkpoints = (
        analysis.canonical(c) for c in costs)
    primal_memory = primal_memory + primal_checkpoints
    work_sources = [(analysis.canonical(work), where) for work, where in derivative.contributions]
    memory_sources = [(analysis.canonical(size), where) for size, where in derivative.memory_contributions]
    bound_work = primal_work + primal_memory  # reading the inputs is part of any primal
    flags = []
    for monomial in gradient_work.uncovered(bound_work):
        culprits = [where for work, where in work_sources if monomial in work.terms]
        flags.append(Flag("work", monomial_string(monomial), _largest(primal_work), culprits[:3]))
    for monomial in gradient_memory.uncovered(primal_memory):
        culprits = [where for size, where in memory_sources if monomial in size.terms]
        flags.append(Flag("memory", monomial_string(monomial), _largest(primal_memory), culprits[:3]))
    return GradientCost(function, gradient, primal_work, gradient_work, primal_memory, gradient_memory, checkpoints, flags)


def _single_symbol(polynomial: Polynomial) -> str | None:
    """The symbol ``polynomial`` is, if it is exactly one symbol."""
    if len(polynomial.terms) == 1:
        ((monomial, coefficient),) = polynomial.terms.items()
        if coefficient == 1.0 and len(monomial) == 1 and monomial[0][1] == 1:
            return monomial[0][0]
    return None


def _largest(polynomial: Polynomial) -> str:
    if not polynomial.terms:
        return "1"
    return monomial_string(max(polynomial.terms, key=_degree))


# The name soac-autodiff gives the vjp of @f: f__vjp_wrt_<positions> (a jvp of it adds a suffix).
_VJP_NAME = re.compile(r"(.+)__vjp_wrt(?:_\d+)+")


def report(module: ir.Module) -> list[GradientCost]:
    """The cost of every vjp in ``module``: expands its ``soac.vjp`` ops with
    soac-autodiff (in a copy) and analyses each generated
    ``@<f>__vjp_wrt_...`` against ``@<f>``."""
    with module.context:
        copy = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
        try:
            passmanager.PassManager.parse("builtin.module(soac-autodiff,canonicalize,cse)").run(copy.operation)
        except ir.MLIRError as error:
            raise LoweringError("soac-autodiff could not differentiate the module", diagnostic_lines(error)) from None
        names = [ir.StringAttr(op.attributes["sym_name"]).value for op in copy.body.operations if op.operation.name == "func.func"]
        costs = []
        for name in names:
            match = _VJP_NAME.fullmatch(name)
            if match and match.group(1) in names:
                costs.append(analyse(copy, match.group(1), name))
        return costs


def gradient_cost(module: ir.Module | str, function: str, *, wrt: list[int] | None = None) -> GradientCost:
    """The cost of the vjp of ``@function`` (with respect to the arguments
    in ``wrt``, all by default) against the function's own: see
    :class:`GradientCost`. ``soac.mlir.gradient_cost``."""
    source = as_module(module)
    with source.context, ir.Location.unknown():
        copy = ir.Module.parse(source.operation.get_asm(enable_debug_info=True))
        callee = _find_function(copy, function)
        _add_wrapper(copy, callee, _fresh_name(copy, f"{function}_vjp"), wrt, scalar_seed=False)
        costs = [cost for cost in report(copy) if cost.function == function]
    if not costs:
        raise Error(f"soac-autodiff generated no vjp of @{function}")
    return costs[0]


def main(argv: list[str] | None = None) -> int:
    """``soac-gradient-cost FILE.mlir``: the report of every vjp in the file;
    exits with 1 when a gradient is asymptotically worse than its primal."""
    import argparse

    import soac  # noqa: F401  (registers the dialect)

    parser = argparse.ArgumentParser(prog="soac-gradient-cost", description="The work and memory of every vjp in an "
                                     "MLIR file against its primal's; exits with 1 when one grows faster than the primal.")
    parser.add_argument("file", help="MLIR with soac.vjp ops (of functions in the same module)")
    args = parser.parse_args(argv)
    from .diagnostics import parse_file

    with ir.Context():
        costs = report(parse_file(args.file))
    if not costs:
        print(f"{args.file}: no soac.vjp to analyse")
    for cost in costs:
        print(cost)
    return 1 if any(cost.flags for cost in costs) else 0

