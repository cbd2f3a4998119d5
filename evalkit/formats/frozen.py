"""A faster constructor for the frozen dataclasses a parse builds by the thousand (issue 16).

A frozen dataclass's generated `__init__` stores each field through `object.__setattr__` (its
own `__setattr__` refuses every assignment), a call per field: building one costs about three
times what a plain dataclass costs. A parse builds one section, verdict, tool call or result
per block of every session, so that cost shows in a corpus sweep.

`quick_init` gives such a class an `__init__` with the same signature (names, order, defaults,
keyword-only fields) that writes the fields into the instance's `__dict__` directly (into its
slots through each slot's own setter, for a slotted class). Nothing else changes: instances
are still frozen (assignment still raises `FrozenInstanceError`), and equality, hashing,
`repr`, `dataclasses.replace` and pickling are the dataclass's own. A class it cannot
reproduce exactly (`InitVar` or `init=False` fields, a `__post_init__`, a field held in a slot
of a base class or behind a property) is left as it is.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["quick_init"]

T = TypeVar("T", bound=type)

_MISSING = dataclasses.MISSING
_MEMBER = type(type("_Slotted", (), {"__slots__": ("x",)}).__dict__["x"])  # a slot's descriptor
_TAKEN = frozenset({"self", "_d", "_HAS_FACTORY"})  # names the generated function uses itself


def quick_init(cls: T) -> T:
    """Give the frozen dataclass `cls` an `__init__` that stores into `__dict__` (see module).

    Apply it above `@dataclass(frozen=True)`. Returns `cls`, changed only when the new
    `__init__` is certain to behave as the generated one.
    """
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or not params.init:
        return cls
    slotted = "__slots__" in cls.__dict__
    if hasattr(cls, "__post_init__"):
        return cls
    all_fields = cls.__dict__["__dataclass_fields__"].values()
    # `fields()` leaves out InitVar pseudo-fields, and an InitVar is an argument of `__init__`.
    if any(f._field_type is dataclasses._FIELD_INITVAR for f in all_fields):  # type: ignore[attr-defined]
        return cls
    fields = dataclasses.fields(cls)
    if any(
        not f.init or f.name in _TAKEN or f.name.startswith(("_dflt_", "_fact_", "_set_"))
        for f in fields
    ):
        return cls
    if slotted:
        if not all(type(cls.__dict__.get(f.name)) is _MEMBER for f in fields):
            return cls
    elif any(_data_descriptor(cls, f.name) for f in fields):
        return cls  # a slot or property of a base class would hide what `__dict__` holds
    env: dict[str, Any] = {"_HAS_FACTORY": _HAS_FACTORY}
    positional: list[str] = []
    keyword: list[str] = []
    body: list[str] = []
    for f in fields:
        name = f.name
        if f.default is not _MISSING:
            env[f"_dflt_{name}"] = f.default
            param = f"{name}=_dflt_{name}"
            value = name
        elif f.default_factory is not _MISSING:
            env[f"_fact_{name}"] = f.default_factory
            param = f"{name}=_HAS_FACTORY"
            value = f"_fact_{name}() if {name} is _HAS_FACTORY else {name}"
        else:
            param = name
            value = name
        (keyword if f.kw_only else positional).append(param)
        if slotted:  # the slot's own setter, which the class's `__setattr__` is not asked
            env[f"_set_{name}"] = cls.__dict__[name].__set__
            body.append(f"    _set_{name}(self, {value})")
        else:
            body.append(f"    _d[{name!r}] = {value}")
    params_text = ", ".join(["self", *positional, *(["*", *keyword] if keyword else [])])
    head = "" if slotted else "    _d = self.__dict__\n"
    source = f"def __init__({params_text}):\n{head}" + "\n".join(body or ["    pass"])
    exec(source, env)  # noqa: S102 — the text is built from the class's own field names
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    cls.__init__ = init  # type: ignore[misc]
    return cls


def _data_descriptor(cls: type, name: str) -> bool:
    """Whether `name` is found on the class (or a base) as a descriptor that sets values."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return hasattr(type(klass.__dict__[name]), "__set__")
    return False


class _HasFactory:
    def __repr__(self) -> str:
        return "<factory>"


_HAS_FACTORY = _HasFactory()
