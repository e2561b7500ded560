"""The tracing frontend's modules import each other in one direction.

``LAYOUT`` lists every module of ``python/soac/frontend`` in the order of its
layers (see the package docstring); a module may import only modules listed
before it, at its top, so there is no import cycle to dodge with an import at
a module's bottom or inside a function. A new module must be placed here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

FRONTEND = Path(__file__).resolve().parents[2] / "python" / "soac" / "frontend"

# Module names relative to soac.frontend; "" is the package itself (its
# __init__.py), "_numpy" the package _numpy/, listed before its modules since
# importing one of them runs the package's __init__.py first.
LAYOUT = [
    # 1. errors and source locations
    "locations", "pytree",
    # 2. trace state, Python values as IR
    "tracing", "dtypes",
    # 3. the Array class, Python values as arrays
    "array",
    # 4. primitives
    "indexing", "elementwise", "combinators", "gather", "control", "math",
    # 5. the numpy layer
    "_numpy", "_numpy.shapes", "_numpy.ufuncs", "_numpy.creation", "_numpy.manipulation", "_numpy.reductions", "_numpy.products", "_numpy.nn", "_numpy.linalg", "_numpy.updates",
    "_numpy.array_methods", "numpy",
    # 6. entry points
    "jit", "eager", "transforms", "batching", "lax", "custom",
    "",
]


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(root: Path, path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The frontend modules an import statement of ``path`` loads (a submodule's
    packages too, unless the importer is inside them), as module names."""
    parts = [p for p in module_name(root, path).split(".") if p]
    package = parts if path.name == "__init__.py" else parts[:-1]
    if isinstance(node, ast.Import):
        targets = [_in_frontend(alias.name.split(".")) for alias in node.names]
    else:
        # A relative import climbs from the importer's package (soac.frontend...).
        where = ["soac", "frontend", *package]
        base = where[: len(where) - (node.level - 1)] if node.level else []
        targets = [_in_frontend([*base, *(node.module or "").split("."), alias.name]) for alias in node.names]
    modules = set()
    for target in (t for t in targets if t is not None):
        # `from .x import name` names a module only when x/name.py exists; else it names x's attribute.
        while target and not _exists(root, target):
            target = target[:-1]
        modules |= {".".join(target[:depth]) for depth in range(1, len(target) + 1) if target[:depth] != package[:depth]}
        if not target:
            modules.add("")
    return sorted(modules)


def _in_frontend(parts: list[str]) -> list[str] | None:
    """The parts of an absolute module name below soac.frontend, or None outside it."""
    parts = [p for p in parts if p]
    return parts[2:] if parts[:2] == ["soac", "frontend"] else None


def _exists(root: Path, parts: list[str]) -> bool:
    return root.joinpath(*parts).with_suffix(".py").is_file() or root.joinpath(*parts, "__init__.py").is_file()


def violations(root: Path, layout: list[str]) -> list[str]:
    """What breaks the one-direction layout under ``root``, as readable lines."""
    problems = []
    paths = sorted(root.rglob("*.py"))
    unlisted = sorted({module_name(root, p) for p in paths} - set(layout))
    problems += [f"{name or '__init__'}: not in the layout; place it in a layer" for name in unlisted]
    for path in paths:
        name = module_name(root, path)
        if name not in layout:
            continue
        label = name or "__init__"
        tree = ast.parse(path.read_text(), str(path))
        top_level = set(map(id, tree.body))
        first_definition = next((i for i, n in enumerate(tree.body) if isinstance(n, (ast.FunctionDef, ast.ClassDef))), len(tree.body))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in imported_modules(root, path, node):
                where = f"{path.relative_to(root)}:{node.lineno}"
                if target == name:
                    continue
                if target not in layout or layout.index(target) > layout.index(name):
                    problems.append(f"{where}: {label} imports {target or 'the package'}, a later layer")
                elif id(node) not in top_level or tree.body.index(node) > first_definition:
                    problems.append(f"{where}: {label} imports {target} below its top (a cycle dodged?)")
    return problems


def test_frontend_imports_form_a_dag_in_layer_order():
    assert violations(FRONTEND, LAYOUT) == []


def test_the_layout_names_existing_modules():
    assert set(LAYOUT) <= {module_name(FRONTEND, p) for p in FRONTEND.rglob("*.py")}


@pytest.mark.parametrize(
    "files, expected",
    [
        # tracing reaching up to array: the cycle this layout removed
        ({"tracing.py": "from . import array\n", "array.py": "from . import tracing\n"},
         "tracing.py:1: tracing imports array, a later layer"),
        ({"tracing.py": "from .array import Array\n", "array.py": ""},
         "tracing.py:1: tracing imports array, a later layer"),
        ({"tracing.py": "import soac.frontend.array\n", "array.py": ""},
         "tracing.py:1: tracing imports array, a later layer"),
        # a late import to dodge a cycle, even downwards
        ({"tracing.py": "", "array.py": "def f():\n    from . import tracing\n"},
         "array.py:2: array imports tracing below its top (a cycle dodged?)"),
        ({"tracing.py": "", "array.py": "class A:\n    pass\nfrom . import tracing\n"},
         "array.py:3: array imports tracing below its top (a cycle dodged?)"),
        # importing a submodule runs its package's __init__ first
        ({"tracing.py": "", "array.py": "from .pkg.low import f\n", "pkg/__init__.py": "", "pkg/low.py": ""},
         "array.py:1: array imports pkg, a later layer"),
        ({"tracing.py": "from . import extra\n", "array.py": "", "extra.py": ""},
         "extra: not in the layout; place it in a layer"),
    ],
)
def test_the_check_finds_violations(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert expected in violations(tmp_path, ["tracing", "array", "pkg", "pkg.low"])
