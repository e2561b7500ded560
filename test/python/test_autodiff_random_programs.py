"""Random programs composed from the differentiable ops: their gradients and
their forward derivatives checked against central finite differences
(float64), compiled and interpreted, and against each other (the dot-product
test)."""

from __future__ import annotations

import numpy as np
import soac
from gradcheck import check_jvp, check_vjp
from hypothesis import given, settings
from hypothesis import strategies as st

# Each step maps the vector %v<k> (length n) and the scalar %w to %v<k+1>.
ELEMENTWISE = {
    "sin": "%r = math.sin %e : f64",
    "tanh": "%r = math.tanh %e : f64",
    "scale": "%r = arith.mulf %e, %w : f64",
    "shift": "%r = arith.addf %e, %w : f64",
    "square": "%r = arith.mulf %e, %e : f64",
    "soft": "%p = math.exp %e : f64\n    %q = math.log1p %p : f64\n    %r = arith.subf %q, %w : f64",
    "branch": (
        "%z = arith.constant 0.0 : f64\n    %c = arith.cmpf ogt, %e, %z : f64\n"
        "    %r = scf.if %c -> (f64) {\n      %a = arith.mulf %e, %w : f64\n      scf.yield %a : f64\n"
        "    } else {\n      %a = math.sin %e : f64\n      scf.yield %a : f64\n    }"
    ),
}


def elementwise(k: int, name: str) -> str:
    return (
        f"  %v{k + 1} = soac.map ins(%v{k} : tensor<?xf64>) -> tensor<?xf64> {{\n"
        f"  ^bb0(%e: f64):\n    {ELEMENTWISE[name]}\n    soac.yield %r : f64\n  }}\n"
    )


def step(k: int, kind: str) -> str:
    if kind in ELEMENTWISE:
        return elementwise(k, kind)
    if kind == "gather":  # v[perm[i]]: a data-dependent read of the previous vector
        return (
            f"  %v{k + 1} = soac.map ins(%perm : tensor<?xindex>) -> tensor<?xf64> {{\n"
            f"  ^bb0(%i: index):\n    %r = tensor.extract %v{k}[%i] : tensor<?xf64>\n    soac.yield %r : f64\n  }}\n"
        )
    if kind == "cumsum":
        return (
            f"  %v{k + 1} = soac.scan ins(%v{k} : tensor<?xf64>) init(%zero : f64) -> tensor<?xf64> {{\n"
            f"  ^bb0(%a: f64, %b: f64):\n    %r = arith.addf %a, %b : f64\n    soac.yield %r : f64\n  }}\n"
        )
    if kind == "normalize":  # v / (1 + sum v^2): a reduce feeding a map through a free scalar
        return (
            f"  %q{k} = soac.map ins(%v{k} : tensor<?xf64>) -> tensor<?xf64> {{\n"
            f"  ^bb0(%e: f64):\n    %r = arith.mulf %e, %e : f64\n    soac.yield %r : f64\n  }}\n"
            f"  %t{k} = soac.reduce ins(%q{k} : tensor<?xf64>) init(%zero : f64) -> f64 {{\n"
            f"  ^bb0(%a: f64, %b: f64):\n    %r = arith.addf %a, %b : f64\n    soac.yield %r : f64\n  }}\n"
            f"  %s{k} = arith.addf %t{k}, %one : f64\n"
            f"  %v{k + 1} = soac.map ins(%v{k} : tensor<?xf64>) -> tensor<?xf64> {{\n"
            f"  ^bb0(%e: f64):\n    %r = arith.divf %e, %s{k} : f64\n    soac.yield %r : f64\n  }}\n"
        )
    raise ValueError(kind)


FINALS = {
    "sum": "%r = arith.addf %a, %b : f64",
    "max": "%r = arith.maximumf %a, %b : f64",
}


def program(kinds: list[str], final: str) -> str:
    body = "".join(step(k, kind) for k, kind in enumerate(kinds))
    n = len(kinds)
    init = "%zero" if final == "sum" else "%ninf"
    return (
        "func.func @f(%v0: tensor<?xf64>, %w: f64, %perm: tensor<?xindex>) -> f64 {\n"
        "  %zero = arith.constant 0.0 : f64\n  %one = arith.constant 1.0 : f64\n"
        "  %ninf = arith.constant 0xFFF0000000000000 : f64\n"
        f"{body}"
        f"  %out = soac.reduce ins(%v{n} : tensor<?xf64>) init({init} : f64) -> f64 {{\n"
        f"  ^bb0(%a: f64, %b: f64):\n    {FINALS[final]}\n    soac.yield %r : f64\n  }}\n"
        "  return %out : f64\n}\n"
    )


KINDS = sorted(ELEMENTWISE) + ["gather", "cumsum", "normalize"]


@settings(max_examples=25, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=5),
    final=st.sampled_from(sorted(FINALS)),
    n=st.integers(1, 8),
    seed=st.integers(0, 2**32 - 1),
)
def test_random_programs(kinds, final, n, seed):
    rng = np.random.default_rng(seed)
    # values away from 0, where the branch and max are smooth for finite differences
    x = rng.uniform(0.3, 1.2, n) * rng.choice([-1.0, 1.0], n)
    perm = rng.permutation(n)
    check_vjp(program(kinds, final), "f", [x, np.float64(rng.uniform(0.5, 1.5)), perm], wrt=[0, 1], rtol=1e-5, atol=1e-7)


@settings(max_examples=15, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=5),
    final=st.sampled_from(sorted(FINALS)),
    n=st.integers(1, 8),
    seed=st.integers(0, 2**32 - 1),
)
def test_forward_and_reverse_mode_agree(kinds, final, n, seed):
    """⟨jvp(t), c⟩ = ⟨t, vjp(c)⟩ for random t and c, and jvp against finite
    differences."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.3, 1.2, n) * rng.choice([-1.0, 1.0], n)
    w, perm = np.float64(rng.uniform(0.5, 1.5)), rng.permutation(n)
    source = program(kinds, final)
    tx, tw, cotangent = rng.standard_normal(n), np.float64(rng.standard_normal()), np.float64(rng.standard_normal())
    forward = check_jvp(source, "f", [x, w, perm], wrt=[0, 1], tangents=[tx, tw], rtol=1e-5, atol=1e-7)
    _, tangent = forward(x, w, perm, tx, tw)
    _, gx, gw = soac.mlir.vjp(source, "f", wrt=[0, 1])(x, w, perm, cotangent)
    np.testing.assert_allclose(tangent * cotangent, tx @ gx + tw * gw, rtol=1e-10, atol=1e-12)
