"""The soac dialect from Python: building every op, verifying, printing, re-parsing,
registration in fresh contexts, and errors arriving as exceptions."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from mlir import ir
from mlir.dialects import arith, func

import soac
from soac import builders

DYN = ir.ShapedType.get_dynamic_size()


@pytest.fixture
def ctx():
    with ir.Context() as context, ir.Location.unknown():
        yield context


def tensor(shape, element):
    return ir.RankedTensorType.get(shape, element)


def build_module(signature, body):
    """A module with one function `f` of the given argument types whose body
    is built by `body(*args)` (returning the values to return)."""
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        func.FuncOp.from_py_func(*signature, name="f")(body)
    return module


def round_trip(module: ir.Module) -> str:
    """Verifies, prints, re-parses (custom and generic forms) and checks both
    print back to the same text."""
    soac.verify(module)
    text = str(module)
    assert str(soac.parse(text)) == text
    generic = module.operation.get_asm(print_generic_op_form=True)
    assert str(soac.parse(generic)) == text
    return text


def add(a, b):
    return arith.addf(a, b)


def test_map_with_two_inputs_two_results_and_a_free_value(ctx):
    f32, i32 = ir.F32Type.get(), ir.IntegerType.get_signless(32)

    def body(x, k, s):
        def row(a, b):
            return [arith.mulf(a, s), arith.sitofp(f32, b)]

        return builders.map([x, k], row)

    text = round_trip(build_module([tensor([4], f32), tensor([DYN], i32), f32], body))
    assert "soac.map ins(%arg0, %arg1 : tensor<4xf32>, tensor<?xi32>) -> tensor<4xf32>, tensor<4xf32>" in text


def test_map_over_rows_with_nested_reduce(ctx):
    f64 = ir.F64Type.get()

    def body(matrix, vector):
        zero = arith.constant(f64, 0.0)

        def row_dot(row):
            products = builders.map([row, vector], arith.mulf)
            return builders.reduce(products, zero, add)

        return builders.map(matrix, row_dot)

    text = round_trip(build_module([tensor([DYN, 3], f64), tensor([3], f64)], body))
    assert "soac.map ins(%arg0 : tensor<?x3xf64>) -> tensor<?xf64>" in text
    assert "^bb0(%arg2: tensor<3xf64>):" in text


def test_map_yielding_rows_has_rank_two(ctx):
    f32 = ir.F32Type.get()
    text = round_trip(build_module([tensor([5], f32), tensor([2], f32)], lambda x, r: builders.map(x, lambda a: r)))
    assert "-> tensor<5x2xf32>" in text


def test_tuple_reduce_and_scan(ctx):
    f32, index = ir.F32Type.get(), ir.IndexType.get()

    def body(x, ids):
        inf = arith.constant(f32, float("inf"))
        first = arith.constant(index, 0)

        def argmin(a, ai, b, bi):
            less = arith.cmpf(arith.CmpFPredicate.OLT, b, a)
            return [arith.select(less, b, a), arith.select(less, bi, ai)]

        value, position = builders.reduce([x, ids], [inf, first], argmin)
        sums = builders.scan(x, arith.constant(f32, 0.0), add)
        return value, position, sums

    text = round_trip(build_module([tensor([DYN], f32), tensor([DYN], index)], body))
    assert "init(%cst, %c0 : f32, index) -> f32, index" in text
    assert "soac.scan ins(%arg0 : tensor<?xf32>) init(%cst_0 : f32) -> tensor<?xf32>" in text


def test_scatter_reduce_by_index_and_iota(ctx):
    f32, index = ir.F32Type.get(), ir.IndexType.get()

    def body(dest, ids, values, n):
        written = builders.scatter(dest, ids, values)
        hist = builders.reduce_by_index(dest, ids, values, arith.constant(f32, 0.0), add)
        return written, hist, builders.iota(n), builders.iota(8, ir.IntegerType.get_signless(64))

    text = round_trip(build_module([tensor([8], f32), tensor([DYN], index), tensor([DYN], f32), index], body))
    assert "soac.scatter dest(%arg0 : tensor<8xf32>) indices(%arg1 : tensor<?xindex>) ins(%arg2 : tensor<?xf32>) -> tensor<8xf32>" in text
    assert "soac.reduce_by_index dest(%arg0 : tensor<8xf32>)" in text
    assert "soac.iota %arg3 : tensor<?xindex>" in text
    assert "soac.iota : tensor<8xi64>" in text


def test_vjp_and_jvp(ctx):
    f32 = ir.F32Type.get()
    vec = tensor([DYN], f32)
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):

        @func.FuncOp.from_py_func(vec, f32)
        def scaled_sum(x, s):
            total = builders.reduce(x, arith.constant(f32, 0.0), add)
            return arith.mulf(total, s)

        @func.FuncOp.from_py_func(vec, f32, f32, vec)
        def derivatives(x, s, seed, tangent):
            value, grad_x = builders.vjp(scaled_sum.func_op, [x, s, seed], wrt=[0])
            _, grad_x2, grad_s = builders.vjp(scaled_sum.func_op, [x, s, seed])
            _, directional = builders.jvp(scaled_sum.func_op, [x, s, tangent], wrt=[0])
            return grad_x, grad_s, directional

    text = round_trip(module)
    assert "soac.vjp @scaled_sum(%arg0, %arg1, %arg2) wrt [0] : (tensor<?xf32>, f32, f32) -> (f32, tensor<?xf32>)" in text
    assert "soac.vjp @scaled_sum(%arg0, %arg1, %arg2) : (tensor<?xf32>, f32, f32) -> (f32, tensor<?xf32>, f32)" in text
    assert "soac.jvp @scaled_sum(%arg0, %arg1, %arg3) wrt [0] : (tensor<?xf32>, f32, tensor<?xf32>) -> (f32, f32)" in text


def test_generated_builders_take_result_types(ctx):
    f32 = ir.F32Type.get()

    def body(x):
        op = soac.dialect.MapOp([tensor([3], f32)], [x])
        block = op.body.blocks.append(f32)
        with ir.InsertionPoint(block):
            soac.dialect.yield_([arith.negf(block.arguments[0])])
        assert isinstance(op, soac.dialect.MapOp) and len(op.inputs) == 1
        return op.results[0]

    assert "arith.negf" in round_trip(build_module([tensor([3], f32)], body))


def test_new_context_after_import_knows_soac(ctx):
    with ir.Context() as second, ir.Location.unknown():
        assert second.is_registered_operation("soac.map")
        module = soac.parse("func.func @f() -> tensor<3xindex> { %i = soac.iota : tensor<3xindex> return %i : tensor<3xindex> }")
        soac.verify(module)


def test_context_created_before_import_needs_register_dialect():
    # A separate interpreter, so that the context really predates `import soac`.
    script = textwrap.dedent(
        """
        from mlir import ir
        with ir.Context() as early:
            assert not early.is_registered_operation("soac.iota")
            import soac
            assert not early.is_registered_operation("soac.iota")
            soac.register_dialect(early)
            assert early.is_registered_operation("soac.iota")
            module = soac.parse("%i = soac.iota : tensor<2xindex>")
            print(module.body.operations[0])
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "soac.iota : tensor<2xindex>" in out.stdout


def test_malformed_program_raises_parse_error(ctx):
    with pytest.raises(soac.ParseError, match="input #1 has outer size 5, but input #0 has outer size 4") as info:
        soac.parse(
            """
            func.func @f(%x: tensor<4xf32>, %y: tensor<5xf32>) {
              %r = soac.map ins(%x, %y : tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32> {
              ^bb0(%a: f32, %b: f32):
                soac.yield %a : f32
              }
              return
            }"""
        )
    assert isinstance(info.value, soac.Error)
    assert info.value.diagnostics[0].startswith("-:3:20: error: 'soac.map' op")
    with pytest.raises(soac.ParseError, match="custom op 'soac.mapp' is unknown"):
        soac.parse("%r = soac.mapp")


def test_parse_file_points_diagnostics_into_the_file(ctx, tmp_path):
    program = tmp_path / "bad.mlir"
    program.write_text("func.func @f() {\n  %i = soac.iota : tensor<?xindex>\n  return\n}\n")
    with pytest.raises(soac.ParseError) as info:
        soac.parse_file(program)
    assert info.value.diagnostics[0] == (
        f"{program}:2:8: error: 'soac.iota' op needs a size operand for the dynamic size of 'tensor<?xindex>'"
    )
    with pytest.raises(soac.ParseError, match="no such file"):
        soac.parse_file(tmp_path / "missing.mlir")


@pytest.mark.parametrize("size", [2**62, 2**31])
def test_what_mlirs_parser_aborts_on_is_a_parse_error(ctx, tmp_path, size):
    """tensor.from_elements's custom form made MLIR's parser allocate one
    operand type per element before the op existed: 2^62 aborted, 2^31 took
    16 GiB. soac.parse and soac.parse_file refuse it before parsing."""
    text = f"func.func @f(%v: f32) -> tensor<{size}xf32> {{\n  %t = tensor.from_elements %v : tensor<{size}xf32>\n  return %t : tensor<{size}xf32>\n}}\n"
    message = f"-:2:8: error: 'tensor.from_elements' has a result of {size} elements, more than its text can list operands for"
    with pytest.raises(soac.ParseError) as info:
        soac.parse(text)
    assert info.value.diagnostics[0].startswith(message)
    program = tmp_path / "huge.mlir"
    program.write_text(text)
    with pytest.raises(soac.ParseError, match=f"{program}:2:8: error: 'tensor.from_elements' has a result of {size}"):
        soac.parse_file(program)


def test_what_mlirs_verifiers_abort_on_is_an_error():
    """A reassociation index outside a collapse_shape's rank aborted MLIR's
    verifier (and the interpreter with it): soac parses with verification off
    and checks such ops first. In a child process, where an abort shows."""
    script = textwrap.dedent(
        """
        import soac
        from mlir import ir
        from mlir.dialects import func, tensor

        bad = "func.func @f(%x: tensor<?x?xf32>) -> tensor<?xf32> {\\n" \\
              "  %f = tensor.collapse_shape %x [[-1, 1]] : tensor<?x?xf32> into tensor<?xf32>\\n" \\
              "  return %f : tensor<?xf32>\\n}"
        try:
            soac.parse(bad)
        except soac.ParseError as error:
            print("parse:", error.diagnostics[0])
        with ir.Context(), ir.Location.unknown():
            module = ir.Module.create()
            f32, i64 = ir.F32Type.get(), ir.IntegerType.get_signless(64)
            matrix = ir.RankedTensorType.get([-(2**63), -(2**63)], f32)
            vector = ir.RankedTensorType.get([-(2**63)], f32)
            with ir.InsertionPoint(module.body):
                function = func.FuncOp("f", ir.FunctionType.get([matrix], [vector]))
                with ir.InsertionPoint(function.add_entry_block()):
                    groups = ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, -1), ir.IntegerAttr.get(i64, 1)])])
                    flat = tensor.CollapseShapeOp(vector, function.arguments[0], groups)
                    func.ReturnOp([flat.result])
            try:
                soac.verify(module)
            except soac.VerificationError as error:
                print("verify:", error.diagnostics[0])
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    message = "error: 'tensor.collapse_shape' op has index -1 in reassociation group 0, outside the 2 dimensions"
    assert f"parse: -:2:8: {message}" in out.stdout
    assert f"verify: unknown: {message}" in out.stdout, out.stdout


def test_invalid_op_built_in_python_raises_verification_error(ctx):
    f32, f64 = ir.F32Type.get(), ir.F64Type.get()

    def body(x):
        return builders.reduce(x, arith.constant(f64, 0.0), add)

    module = build_module([tensor([DYN], f32)], body)
    with pytest.raises(soac.VerificationError, match="neutral element #0 has type 'f64', but the rows of input #0 have type 'f32'"):
        soac.verify(module)


def test_builder_misuse_raises_build_error(ctx):
    f32 = ir.F32Type.get()
    with pytest.raises(soac.BuildError, match="must return an mlir.ir.Value or a sequence of them, got int"):
        build_module([tensor([2], f32)], lambda x: builders.map(x, lambda a: 3))
    with pytest.raises(soac.BuildError, match="a tensor of rank 0 has no rows"):
        build_module([tensor([], f32)], lambda x: builders.map(x, lambda a: a))


def test_soac_opt_console_command(tmp_path):
    # The console script pip installed next to this interpreter.
    soac_opt = os.path.join(os.path.dirname(sys.executable), "soac-opt")
    program = tmp_path / "iota.mlir"
    program.write_text("func.func @f() -> tensor<4xi32> { %i = soac.iota : tensor<4xi32> return %i : tensor<4xi32> }")
    out = subprocess.run([soac_opt, str(program)], capture_output=True, text=True, check=True)
    assert "soac.iota : tensor<4xi32>" in out.stdout
    bad = subprocess.run([soac_opt, "-"], input="%i = soac.iota : tensor<?xindex>", capture_output=True, text=True)
    assert bad.returncode != 0
    assert "needs a size operand" in bad.stderr
