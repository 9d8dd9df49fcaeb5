"""docs/inventory.md, written from the pydantic models so the reference cannot drift from
what validation accepts: every key with its type, default and description, in the order
the models declare them. `fabgen schema --format markdown` prints it; a test compares it
with the committed file."""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from fabgen.spec.schema import Inventory

HEADER = """# Inventory reference (format version 1)

Generated from the inventory models (`generator/fabgen/spec/schema.py`) by
`fabgen schema --format markdown`; do not edit by hand. Keys without a default are required.
Cross-field rules (unknown groups, sizes, pools, platform values) are checked after these and
reported with the line and column of the key to change. The user guide's
[Inventory format](guide/inventory.md#inventory-format-version-1) explains the keys with
examples; `docs/decisions.md` explains the defaults.

| key | type | default | meaning |
|---|---|---|---|
"""


def _models(annotation: Any) -> list[type[BaseModel]]:
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if origin is typing.Annotated:
        return _models(typing.get_args(annotation)[0])
    out: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        out += _models(arg)
    return out


def _type(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _type(typing.get_args(annotation)[0])
    if origin is typing.Literal:
        return " | ".join(f"`{a}`" for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type(a) for a in typing.get_args(annotation) if a is not type(None))
    if origin is list:
        return f"list of {_type(typing.get_args(annotation)[0])}"
    if origin is dict:
        k, v = typing.get_args(annotation)
        return f"mapping of {_type(k)} to {_type(v)}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "mapping"
    return getattr(annotation, "__name__", str(annotation))


def _default(field: Any) -> str:
    if field.default_factory is not None:
        value = field.default_factory()
        return "none" if value in ([], {}) else ("(all defaults)" if isinstance(value, BaseModel) else f"`{value}`")
    if field.default is PydanticUndefined:
        return "—"
    if field.default is None:
        return "none"
    if isinstance(field.default, bool):
        return f"`{str(field.default).lower()}`"
    return f"`{field.default}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def rows(model: type[BaseModel], prefix: str) -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        inner = _models(field.annotation)
        is_list = typing.get_origin(field.annotation) is list or "list of" in _type(field.annotation)
        is_map = "mapping of" in _type(field.annotation)
        doc = field.description or ((inner[0].__doc__ or "").strip().splitlines() or [""])[0] if inner else \
            field.description or ""
        out.append(f"| `{key}` | {_cell(_type(field.annotation))} | {_cell(_default(field))} | {_cell(doc)} |")
        for sub in inner:
            sub_prefix = f"{key}[]." if is_list else f"{key}.<key>." if is_map else f"{key}."
            out += rows(sub, sub_prefix)
    return out


def markdown() -> str:
    return HEADER + "\n".join(rows(Inventory, "")) + "\n"
