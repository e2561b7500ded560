"""Pytrees, as in ``jax.tree_util``: nested tuples, lists, dicts, named
tuples, ``None`` and registered classes (``register_pytree_node``,
``register_dataclass``) of leaves (arrays and numbers).

Traced functions and every transform take and return pytrees: a function of
a dict of parameters gets its gradient as a dict of the same keys. Dicts are
flattened in the order of their sorted keys, as JAX does.

>>> leaves, tree = tree_flatten({"b": (1, 2), "a": [3, None]})
>>> leaves, tree_unflatten(tree, [x * 10 for x in leaves])
([3, 1, 2], {'a': [30, None], 'b': (10, 20)})
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any, NamedTuple

__all__ = ["PyTreeDef", "register_dataclass", "register_pytree_node", "tree_flatten", "tree_leaves", "tree_map",
           "tree_structure", "tree_unflatten"]


class PyTreeDef(NamedTuple):
    """How leaves nest: a node type, its static data, and its children's
    definitions (``None`` for a leaf). Hashable, so it keys compiled code."""

    kind: Any  # None for a leaf, else the node's class
    data: Hashable
    children: tuple[PyTreeDef, ...]

    @property
    def num_leaves(self) -> int:
        return 1 if self.kind is None else sum(child.num_leaves for child in self.children)

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        return f"{self.kind.__name__}({', '.join(map(repr, self.children))})"


LEAF = PyTreeDef(None, None, ())

# class -> (flatten: node -> (children, static data), unflatten: (static data, children) -> node)
_NODES: dict[type, tuple[Callable[[Any], tuple[Iterable[Any], Hashable]], Callable[[Any, Iterable[Any]], Any]]] = {
    tuple: (lambda t: (t, None), lambda _, children: tuple(children)),
    list: (lambda t: (t, None), lambda _, children: list(children)),
    dict: (lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))), lambda keys, children: dict(zip(keys, children))),
    type(None): (lambda _: ((), None), lambda _, children: None),
}


def register_pytree_node(cls: type, flatten: Callable[[Any], tuple[Iterable[Any], Hashable]],
                         unflatten: Callable[[Any, Iterable[Any]], Any]) -> None:
    """Makes instances of ``cls`` pytree nodes: ``flatten(node)`` gives
    ``(children, static data)``, ``unflatten(static data, children)`` the node."""
    _NODES[cls] = (flatten, unflatten)


def register_dataclass(cls: type) -> type:
    """Makes a dataclass a pytree node whose children are its fields (usable as a decorator).

    >>> import dataclasses
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Params:
    ...     w: float
    ...     b: float
    >>> tree_flatten(Params(1.0, 2.0))[0]
    [1.0, 2.0]
    """
    names = [field.name for field in dataclasses.fields(cls)]
    register_pytree_node(cls, lambda node: ([getattr(node, n) for n in names], None),
                         lambda _, children: cls(**dict(zip(names, children))))
    return cls


def _node(value: Any) -> tuple[Any, Any] | None:
    """The node functions of ``value``'s class, or None for a leaf."""
    if type(value) in _NODES:
        return type(value), _NODES[type(value)]
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):  # a named tuple
        cls = type(value)
        return cls, (lambda t: (t, None), lambda _, children, cls=cls: cls(*children))
    return None


def tree_flatten(tree: Any) -> tuple[list[Any], PyTreeDef]:
    """The leaves of ``tree`` (in order) and its definition."""
    leaves: list[Any] = []
    return leaves, _flatten_into(tree, leaves)


# The recursions below are module functions, not closures: a closure that
# calls itself is a reference cycle, and the leaves it holds (a jitted
# function's result buffers) would live until Python's cyclic GC ran.
def _flatten_into(node: Any, leaves: list[Any]) -> PyTreeDef:
    kind = _node(node)
    if kind is None:
        leaves.append(node)
        return LEAF
    cls, (flatten, _) = kind
    children, data = flatten(node)
    return PyTreeDef(cls, data, tuple(_flatten_into(child, leaves) for child in children))


def tree_unflatten(definition: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """The tree of ``definition`` with ``leaves`` in place of its leaves."""
    return _build(definition, iter(leaves))


def _build(node: PyTreeDef, remaining: Iterator[Any]) -> Any:
    if node.kind is None:
        return next(remaining)
    unflatten = _node_functions(node.kind)[1]
    return unflatten(node.data, [_build(child, remaining) for child in node.children])


def _node_functions(cls: Any):
    if cls in _NODES:
        return _NODES[cls]
    return (lambda t: (t, None), lambda _, children: cls(*children))  # a named tuple


def tree_leaves(tree: Any) -> list[Any]:
    return tree_flatten(tree)[0]


def tree_structure(tree: Any) -> PyTreeDef:
    return tree_flatten(tree)[1]


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """``fn`` applied to the leaves of ``tree`` (and the matching leaves of ``rest``)."""
    leaves, definition = tree_flatten(tree)
    others = [tree_flatten(r) for r in rest]
    for other_leaves, other in others:
        if other != definition:
            raise ValueError(f"tree_map: the trees differ in structure: {definition} and {other}")
    return tree_unflatten(definition, [fn(*values) for values in zip(leaves, *[o[0] for o in others])])
