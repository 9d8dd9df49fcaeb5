"""NVUE configurations checked against NVIDIA's published object model.

`nvueschema` (PyPI) carries pydantic models generated from NVIDIA's NVUE openapi.json for
Cumulus Linux 5.0 to 5.18. Its models ignore unknown keys (pydantic's default), which is
the one mistake a generator most often makes, so this walks the tree along the model's
own annotations and reports every key the model does not have; the model then validates
the values (enums, ranges, patterns). `parse_nv_set` turns `nv set` lines back into a
tree the same way the NVUE CLI reads them: a word is a key where the model has that key
or the parent is a collection, and the value otherwise.
"""

from __future__ import annotations

import importlib
import types
import typing
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError


def models(version: str) -> types.ModuleType:
    return importlib.import_module("nvueschema.models.v" + version.replace(".", "_"))


def _unwrap(annotation: Any) -> list[Any]:
    """The alternatives of an annotation, Optional/Union/Annotated taken apart."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        out = []
        for arg in typing.get_args(annotation):
            if arg is not type(None):
                out += _unwrap(arg)
        return out
    return [annotation]


def _model_of(annotation: Any) -> type[BaseModel] | None:
    return next((a for a in _unwrap(annotation) if isinstance(a, type) and issubclass(a, BaseModel)), None)


def _dict_value(annotation: Any) -> Any | None:
    for a in _unwrap(annotation):
        if typing.get_origin(a) in (dict, dict):
            return typing.get_args(a)[1]
    return None


def _fields(model: type[BaseModel]) -> dict[str, Any]:
    return {(f.alias or name): f.annotation for name, f in model.model_fields.items()}


def unknown_keys(model: type[BaseModel], value: Any, path: str = "") -> list[str]:
    """Every key of `value` that `model` does not define, as a dotted path."""
    if not isinstance(value, dict):
        return []
    fields = _fields(model)
    out = []
    for key, sub in value.items():
        where = f"{path}.{key}" if path else str(key)
        if key not in fields:
            out.append(f"{where}: unknown key (known: {', '.join(sorted(fields))})")
            continue
        out += _check_annotation(fields[key], sub, where)
    return out


def _check_annotation(annotation: Any, value: Any, where: str) -> list[str]:
    inner = _model_of(annotation)
    if inner is not None and isinstance(value, dict):
        return unknown_keys(inner, value, where)
    item = _dict_value(annotation)
    if item is not None and isinstance(value, dict):
        return [p for k, v in value.items() for p in _check_annotation(item, v, f"{where}.{k}")]
    return []


def problems(version: str, tree: dict[str, Any]) -> list[str]:
    """Unknown keys and bad values of one NVUE `set` tree under Cumulus Linux `version`."""
    root = models(version).NvueConfig
    out = unknown_keys(root, tree)
    try:
        root.model_validate(tree)
    except ValidationError as exc:
        out += [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']} (got {e.get('input')!r})"
                for e in exc.errors(include_url=False)]
    return out


def release(header: dict[str, Any]) -> str:
    """The release a file's header names: 'Cumulus Linux 5.16.0' -> '5.16' (the dialect to check it in)."""
    return ".".join(str(header["version"]).removeprefix("Cumulus Linux ").split(".")[:2])


def header_problems(version: str, header: dict[str, Any]) -> list[str]:
    root = models(version).NvueConfig
    try:
        TypeAdapter(root.model_fields["header"].annotation).validate_python(header)
    except ValidationError as exc:
        return [str(exc)]
    return unknown_keys(root, {"header": header})


def parse_nv_set(version: str, line: str) -> dict[str, Any]:
    """`nv set a b c` -> {'a': {'b': {'c': {}}}} read along the model: a word that is a
    key of the current object descends; under a collection any word is an entry's name;
    the last word where the model expects a value is that value."""
    words = line.split()
    assert words[:2] == ["nv", "set"], line
    return parse_nv_words(version, words[2:])


def parse_nv_words(version: str, words: list[str]) -> dict[str, Any]:
    """The words after `nv set` as the shell passes them (a quoted value with spaces or newlines
    is one word) -> the tree, as parse_nv_set; where the model takes a list, the value is
    comma-separated (`nv set system aaa authentication order tacacs,local`)."""
    tree: dict[str, Any] = {}
    node = tree
    annotation: Any = models(version).NvueConfig
    for i, word in enumerate(words):
        last = i == len(words) - 1
        model = _model_of(annotation)
        item = _dict_value(annotation)
        if model is not None:
            fields = _fields(model)
            if word not in fields:
                raise ValueError(f"{' '.join(words[:i + 1])}: '{word}' is not a key here "
                                 f"(known: {', '.join(sorted(fields))})")
            annotation = fields[word]
            if last:
                node[word] = {}
            elif _model_of(annotation) is None and _dict_value(annotation) is None:
                text = " ".join(words[i + 1:])
                node[word] = text.split(",") if _is_list(annotation) else _scalar(text)
                return tree
            else:
                node = node.setdefault(word, {})
            continue
        if item is not None:
            annotation = item
            node = node.setdefault(word, {})
            continue
        raise ValueError(f"{' '.join(words)}: no key or value expected at '{word}'")
    return tree


def _is_list(annotation: Any) -> bool:
    return any(typing.get_origin(a) is list for a in _unwrap(annotation))


def _scalar(text: str) -> Any:
    if text.lstrip("-").isdigit():
        return int(text)
    return text


def merge(into: dict[str, Any], tree: dict[str, Any]) -> dict[str, Any]:
    for k, v in tree.items():
        if isinstance(v, dict) and isinstance(into.get(k), dict):
            merge(into[k], v)
        else:
            into[k] = v
    return into
