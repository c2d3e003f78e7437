"""Typed validation of parsed JSON into the project's dataclasses. Standard library only.

`bench.untrusted` bounds what a file or reply can cost; this checks that each value has
the JSON type its dataclass field is annotated with, so a hostile or damaged record
(`"category": "x"`, `"scores": {"f1": "high"}`, `"evidence": "D1:3"`) is refused in one
line naming the field instead of being counted wrongly by the summariser or failing
later in the report (issue 29).

Annotations map to checks once per class (`FieldChecks`); checking a value is then one
call per present field. Nested dataclasses are only required to be objects here: their
own `FieldChecks` checks them when they are built.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any, Literal, TypeAlias, Union

JSONValue: TypeAlias = str | int | float | bool | None | list["JSONValue"] | dict[str, "JSONValue"]
"""A JSON value as `json.loads` returns it (or `json.dumps` takes it): narrow before use."""
JSONObject: TypeAlias = dict[str, JSONValue]
"""A JSON object: keys are strings, each value a `JSONValue`."""

Check = Callable[[Any], bool]
Spec = frozenset[type] | Check
"""A field's check: the exact classes its value may have (the fast, common case), or a
predicate (lists and objects of a typed value, literals, overrides)."""

_SCALARS: frozenset[type] = frozenset({int, float, bool, type(None)})


def _classes(spec: Spec | None) -> frozenset[type] | None:
    return spec if isinstance(spec, frozenset) else None


def _predicate(spec: Spec) -> Check:
    if isinstance(spec, frozenset):
        return lambda value: value.__class__ in spec
    return spec


def _check_for(hint: Any) -> Spec | None:  # noqa: PLR0911 - one return per kind of hint
    """The check of annotation `hint`; None where anything goes (`Any`)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return None
    if origin in (Union, types.UnionType):
        return _union(args)
    if origin is Literal:
        allowed = frozenset(args)
        return lambda value: value.__class__ is str and value in allowed
    if hint is float:
        return frozenset({int, float})
    if hint in (bool, int, str, type(None)):
        return frozenset({hint})
    if origin in (list, tuple) or hint in (list, tuple):
        return _container(list, _check_for(args[0]) if args else None, values=False)
    if origin is dict or hint is dict:
        return _container(dict, _check_for(args[1]) if len(args) == 2 else None, values=True)
    if dataclasses.is_dataclass(hint):
        return frozenset({dict})  # built, and checked, by its own FieldChecks
    return None


def _union(args: tuple[Any, ...]) -> Spec | None:
    """`A | B | None`: the union of their classes when every part is plain classes."""
    parts = [_check_for(a) for a in args]
    if any(p is None for p in parts):
        return None
    sets = [_classes(p) for p in parts]
    if all(c is not None for c in sets):
        return frozenset().union(*[c for c in sets if c is not None])
    checks = [_predicate(p) for p in parts if p is not None]
    return lambda value: any(check(value) for check in checks)


def _container(kind: type, inner: Spec | None, *, values: bool) -> Spec:
    """A list (or object) whose items (or values) pass `inner`."""
    if inner is None:
        return frozenset({kind})
    allowed, check = _classes(inner), _predicate(inner)

    def passes(value: Any) -> bool:
        container: Any = value  # (not narrowed by the class test below)
        if value.__class__ is not kind:
            return False
        items: Iterable[Any] = container.values() if values else container
        if allowed is not None:  # C-speed: the set of the items' classes
            return allowed.issuperset(map(type, items))
        return all(map(check, items))

    return passes


class FieldChecks:
    """Per field of a dataclass, the check of its annotated JSON type."""

    __slots__ = ("classes", "checks", "names")

    def __init__(self, cls: type, overrides: dict[str, Check] | None = None) -> None:
        """Checks from `cls`'s annotations; `overrides` replace some (`Any` values, say)."""
        hints = typing.get_type_hints(cls)
        names = [f.name for f in dataclasses.fields(cls)]
        built: dict[str, Spec | None] = {name: _check_for(hints[name]) for name in names}
        built.update(overrides or {})
        self.classes = {n: c for n, s in built.items() if (c := _classes(s)) is not None}
        self.checks = {
            n: _predicate(s) for n, s in built.items() if s is not None and n not in self.classes
        }
        self.names = {name: _type_name(hints[name]) for name in names}

    def problem(self, data: dict[str, Any]) -> str | None:
        """The first field of `data` whose value has the wrong type, said in words."""
        classes, checks = self.classes, self.checks
        for key, value in data.items():
            allowed = classes.get(key)
            if allowed is not None:
                if value.__class__ in allowed:
                    continue
            elif (check := checks.get(key)) is None or check(value):
                continue
            shown = repr(value)
            shown = shown if len(shown) <= 40 else shown[:37] + "..."
            return f"{key} is {shown}, not {self.names[key]}"
        return None


def _type_name(hint: Any) -> str:
    """`hint` as a reader understands it (`str | None`, `list[str]`)."""
    text = str(hint).replace("typing.", "")
    return text if not isinstance(hint, type) else hint.__name__


def scalar_scores(value: Any) -> bool:
    """A result's `scores`: an object of numbers, booleans or nulls (never `"high"`)."""
    return value.__class__ is dict and _SCALARS.issuperset(map(type, value.values()))


def int_object(value: Any) -> bool:
    """An object of integers (never booleans): a record's usage and health counts."""
    return value.__class__ is dict and {int}.issuperset(map(type, value.values()))
