"""Evidence is untrusted input: JSON read within bounds, every value verify reads checked for its type.

Evidence comes from switches and from whoever copied it. A list where an object belongs, a number
where a string belongs, a document nested 100,000 deep or 60 MiB of tiny objects each end in one
line naming the file and, where there is one, the key (`at ["lldpNeighbors"]["Ethernet1/1"]`, a
path jq reads): never a traceback, never a machine out of memory. The bounds (docs/verify.md):
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

# The deepest output verify reads, lldpctl -f json0 (every level in a list), nests 11 levels;
# json's parser recurses once a level (100,000 levels end in RecursionError), so a document is
# refused well before that.
MAX_DEPTH = 32
# A file's values (objects, lists and the items in them), counted before parsing: one file is at
# most 64 MiB, which FRR's pretty JSON (about 20 bytes a value) fills with about 3 million. A file
# of tiny values costs Python up to ~120 bytes each: 60 MiB of `{},` is 20 million objects and
# 1.5-2 GiB to parse; 4 million keep one file's parse near 500 MiB.
MAX_VALUES = 4_000_000
# Neighbours seen, all evidence together: 2.5 times the cable ends of the largest fabric verify is
# benchmarked at (65,536 GPUs: 196,608 cables, 393,216 ends; docs/internals/benchmarks.md). At the
# worst, every row a finding written as JSON, a row costs ~2 KiB: verify stays near 2 GiB.
MAX_ROWS = 1_000_000
# A text file's lines (ibnetdiscover, SONiC's table), counted before the text is split: 64 MiB of
# ibnetdiscover (30-60 characters a line) is about 2 million; 64 MiB of two-character lines would
# be 21 million strings, 1.2 GiB, and as many turns of a parser's loop.
MAX_LINES = 4_000_000

Path = tuple[str | int, ...]  # where a value sits in its document: keys and list indexes
T = TypeVar("T")


class Refused(ValueError):
    """Evidence verify will not read: one line naming the file (and the key, or the line)."""


class Shape(BaseModel):
    """A tool's JSON object: the keys verify reads are typed, every other key is left unread."""

    model_config = ConfigDict(extra="ignore", frozen=True)


def load(text: str, where: str, error: type[Refused] = Refused) -> Any:
    """The JSON document of `text`, refused past the bounds before the parser spends memory on it."""
    values = text.count(",") + text.count("[") + text.count("{")  # strings' commas too: an upper bound
    if values > MAX_VALUES:
        raise error(f"{where}: about {values:,} JSON values, more than the {MAX_VALUES:,} one file of "
                    "evidence may hold (one device's output holds far fewer)")
    try:
        doc = json.loads(text)
    except RecursionError:
        raise error(f"{where}: JSON nested deeper than {MAX_DEPTH} levels (evidence nests at most 11)") from None
    except json.JSONDecodeError as exc:
        raise error(f"{where}:{exc.lineno}:{exc.colno}: not JSON ({exc.msg})") from None
    except ValueError as exc:  # an integer of more digits than Python converts
        raise error(f"{where}: not JSON ({exc})") from None
    if _deeper(doc, MAX_DEPTH):
        raise error(f"{where}: JSON nested deeper than {MAX_DEPTH} levels (evidence nests at most 11)")
    return doc


def lines(text: str, where: str, error: type[Refused] = Refused) -> list[str]:
    """`text.splitlines()`, refused past MAX_LINES before the list is made (every separator splitlines
    knows is counted: an upper bound)."""
    count = sum(text.count(c) for c in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
    if count > MAX_LINES:
        raise error(f"{where}: about {count:,} lines, more than the {MAX_LINES:,} one file of evidence may hold")
    return text.splitlines()


def _deeper(doc: Any, limit: int) -> bool:
    """Whether objects and lists nest past `limit` levels: level by level, no recursion (plain loops:
    a third of the time of generators over the evidence of 32,768 GPUs)."""
    level = [doc]
    for _ in range(limit):
        below: list[Any] = []
        for node in level:
            for v in node.values() if type(node) is dict else node if type(node) is list else ():
                if type(v) is dict or type(v) is list:
                    below.append(v)
        if not below:
            return False
        level = below
    return True


def kind(value: object) -> str:
    """A JSON value's type as an operator reads it."""
    if isinstance(value, bool):
        return "true/false"
    if value is None:
        return "null"
    names: dict[type, str] = {dict: "an object", list: "a list", str: "a string"}
    return names.get(type(value), "a number")


def at(path: Path) -> str:
    """Where a value sits, as jq reads it (`["lldpNeighbors"]["Ethernet1/1"][0]`); long keys cut."""
    return "".join(f"[{k}]" if isinstance(k, int) else f"[{json.dumps(k[:40])}{'...' if len(k) > 40 else ''}]"
                   for k in path) or "the top"


def wrong(where: str, path: Path, value: object, wanted: str, error: type[Refused] = Refused) -> Refused:
    """The located refusal of a value of the wrong type (raise it)."""
    return error(f"{where}: at {at(path)}: {kind(value)} where {wanted} belongs")


_WANTED = {"dict_type": "an object", "model_type": "an object", "model_attributes_type": "an object",
           "list_type": "a list", "string_type": "a string", "int_type": "a whole number",
           "int_parsing": "a whole number", "int_from_float": "a whole number", "bool_type": "true/false",
           "bool_parsing": "true/false"}


def validated(model: TypeAdapter[T], doc: Any, where: str, what: str, error: type[Refused] = Refused,
              path: Path = ()) -> T:
    """`doc` read through `model` (pydantic), or the first value of the wrong type, located."""
    try:
        return model.validate_python(doc)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = at((*path, *first["loc"]))
        if first["type"] == "missing":
            raise error(f"{where}: not {what}: at {loc}: missing") from None
        wanted = _WANTED.get(first["type"], first["msg"])
        raise error(f"{where}: not {what}: at {loc}: {kind(first.get('input'))} where {wanted} belongs") from None
