"""Load YAML into plain data plus a side table of positions (path -> line, column).

Why not `yaml.safe_load`: it forgets where each value came from, silently keeps the
last of two duplicate keys, and expands alias bombs. Here the document is composed
into nodes (the safe loader's resolver, no object-building tags) and walked once,
recording the 1-based line and column of every value and every mapping key.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from fabgen.errors import InventoryError, Problem

MAX_BYTES = 8 * 1024 * 1024  # an inventory of 100,000 GPUs is a few kB; 8 MiB is plenty
MAX_NODES = 200_000  # after alias expansion
MAX_DEPTH = 64

PathT = tuple[str | int, ...]

_PLAIN_TAGS = {
    "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool", "tag:yaml.org,2002:null",
}
_KEEP_AS_TEXT = {"tag:yaml.org,2002:timestamp"}


@dataclass(frozen=True)
class Loaded:
    """The inventory as plain data, with where every piece of it was written."""

    file: str
    data: Any
    positions: dict[PathT, tuple[int, int]]  # value positions
    key_positions: dict[PathT, tuple[int, int]]  # position of the key that introduces a value
    sha256: str
    # unquoted numbers as written (2.30, not 2.3), and unquoted text YAML 1.1 does not read as a number (1e9)
    numbers: dict[PathT, str] = field(default_factory=dict)

    def where(self, path: PathT, *, key: bool = False) -> tuple[int, int]:
        """Best position for `path`: the key (or value) itself, else its nearest ancestor."""
        table = self.key_positions if key else self.positions
        p = tuple(path)
        while p:
            if p in table:
                return table[p]
            if not key and p in self.key_positions:
                return self.key_positions[p]
            p = p[:-1]
        return self.positions.get((), (1, 1))


def format_path(path: PathT) -> str:
    """`('fabrics', 0, 'tiers')` -> `fabrics[0].tiers`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


class _Walker:
    def __init__(self, file: str, what: str = "inventory"):
        self.file = file
        self.what = what
        self.positions: dict[PathT, tuple[int, int]] = {}
        self.key_positions: dict[PathT, tuple[int, int]] = {}
        self.numbers: dict[PathT, str] = {}
        self.problems: list[Problem] = []
        self.count = 0
        self.constructor = yaml.SafeLoader("")

    def problem(self, node: yaml.Node, path: PathT, message: str) -> None:
        m = node.start_mark
        self.problems.append(Problem(m.line + 1, m.column + 1, format_path(path), message, self.file))

    def walk(self, node: yaml.Node, path: PathT, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise _TooBig(node)
        if depth > MAX_DEPTH:
            raise _TooDeep(node)
        self.positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            if node.tag != "tag:yaml.org,2002:map":
                self.problem(node, path, _tag_message(node.tag, self.what))
                return None
            out: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    self.problem(key_node, path, "YAML merge keys ('<<') are not allowed; write the keys out")
                    continue
                if not isinstance(key_node, yaml.ScalarNode):
                    self.problem(key_node, path, "mapping keys must be plain scalars")
                    continue
                key = self.scalar(key_node, path)
                if not isinstance(key, (str, int)) or isinstance(key, bool):
                    key = str(key_node.value)
                child = (*path, key)
                if key in out or child in self.key_positions:
                    first = self.key_positions.get(child, (0, 0))
                    self.problem(key_node, child, f"duplicate key '{key}' (first written at line {first[0]})")
                    continue
                self.key_positions[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
                out[key] = self.walk(value_node, child, depth + 1)
            return out
        if isinstance(node, yaml.SequenceNode):
            if node.tag != "tag:yaml.org,2002:seq":
                self.problem(node, path, _tag_message(node.tag, self.what))
                return None
            return [self.walk(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
        return self.scalar(node, path)

    def scalar(self, node: yaml.Node, path: PathT) -> Any:
        if node.tag in _KEEP_AS_TEXT:
            return node.value
        if node.tag not in _PLAIN_TAGS:
            self.problem(node, path, _tag_message(node.tag, self.what))
            return None
        try:
            value = self.constructor.construct_object(node, deep=True)
        except ValueError:  # Python refuses int() of more than 4300 digits (CVE-2020-10735)
            self.problem(node, path, f"a number of {len(node.value)} characters: no inventory value is that long")
            return None
        if isinstance(node, yaml.ScalarNode) and node.style is None:
            trap = yaml11_trap(node.value, value, path)
            if trap:
                self.problem(node, path, trap)
                return node.value
            if isinstance(value, (int, float)) and not isinstance(value, bool) or \
                    isinstance(value, str) and _NUMBER_LIKE.match(value):
                self.numbers[path] = node.value
        return value


# Plain scalars YAML 1.1 (PyYAML) reads as something other than what YAML 1.2 and most people
# read: base-60 numbers (2:1 -> 121), leading-zero octals (010 -> 8) and yes/no/on/off booleans.
_SEXAGESIMAL = re.compile(r"^[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$")
_OCTAL = re.compile(r"^[-+]?0[0-7_]+$")
_ONLY_11 = re.compile(r"^[-+]?(0b[01_]+|[0-9][0-9_]*_[0-9_]*(\.[0-9_]*)?([eE][-+]?[0-9]+)?)$")  # 0b101, 1_000
_WORD_BOOLS = {"yes", "no", "on", "off"}
_NUMBER_LIKE = re.compile(r"^[-+]?([0-9][0-9_]*)?\.?[0-9_]*([eE][-+]?[0-9]+)?$")


def yaml11_trap(text: str, value: Any, path: PathT) -> str | None:
    """The message for a plain scalar YAML 1.1 reads differently from how it was meant, or None."""
    key = path[-1] if path else ""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and _SEXAGESIMAL.match(text):
        hint = (f"for a {text} ratio write {text.split(':')[0]}" if key == "oversubscription"
                else f"quote it ('{text}') if it is text")
        return f"YAML 1.1 reads {text} as the base-60 number {value:g}, not as written: {hint}"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and _ONLY_11.match(text):
        return (f"YAML 1.1 reads {text} as the number {value:g}, YAML 1.2 as the text '{text}': write it as a plain "
                f"decimal number ({value:g}), or quote it ('{text}') if it is text")
    if isinstance(value, int) and not isinstance(value, bool) and _OCTAL.match(text):
        return (f"YAML 1.1 reads {text} as the octal number {value}, YAML 1.2 as {int(text.replace('_', ''))}: "
                f"write it without the leading zero, or quote it ('{text}') if it is text")
    if isinstance(value, bool) and text.lower() in _WORD_BOOLS:
        return (f"YAML 1.1 reads {text} as {str(value).lower()}, YAML 1.2 as the text '{text}': write "
                f"{str(value).lower()} for a switch, or quote it ('{text}') for text")
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return f"must be a number, not {text}: write a finite number"
    return None


def _tag_message(tag: str, what: str = "inventory") -> str:
    short = tag.replace("tag:yaml.org,2002:", "!!")
    return f"YAML tag '{short}' is not allowed: {_a(what)} is plain YAML, no tags that build objects"


class _TooBig(Exception):
    def __init__(self, node: yaml.Node):
        self.node = node


class _TooDeep(_TooBig):
    pass


VERBOSE = False  # `fabgen --verbose`: add PyYAML's own wording to syntax errors

# PyYAML's problem (and context) -> what it means in an inventory, in the words of the person
# who wrote it; the first match wins.
_PLAIN = (
    ("'\\t'", "", "a tab character: indent with spaces, YAML does not allow tabs"),
    ("mapping values are not allowed here", "",
     "this ':' starts a key where none can start: the line is indented more than the key above it, or a value "
     "containing ': ' needs quotes"),
    ("expected <block end>, but found", "", "this line is indented more than the key above it, or less than the "
     "keys beside it: line the keys of one mapping up in one column"),
    ("could not find expected ':'", "", "this line has no ':' after its key (or a quote opened above is not "
     "closed)"),
    ("did not find expected key", "", "this line does not line up with the keys above it"),
    ("did not find expected '-' indicator", "", "this line does not line up with the list items above it"),
    ("found unexpected end of stream", "quoted scalar", "this quote is never closed"),
    ("found undefined alias", "", "this '*name' refers to an anchor '&name' that is not defined above it"),
    ("expected the node content, but found '<stream end>'", "flow", "a '[' or '{' opened above is not closed "
     "by the end of the file"),
    ("expected ',' or ']'", "", "a list in brackets needs a ',' between items and a ']' at its end"),
    ("expected ',' or '}'", "", "a mapping in braces needs a ',' between keys and a '}' at its end"),
    ("found unknown escape character", "", "a '\\' inside double quotes starts an escape YAML does not know: "
     "use single quotes or write '\\\\'"),
)


def _yaml_problem(file: str, exc: yaml.YAMLError) -> Problem:
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None) or ""
    # an unclosed quote or bracket is reported where the parser gave up (the end of the file):
    # point at where it was opened
    opened = "quoted scalar" in context
    mark = (getattr(exc, "context_mark", None) if opened else None) or getattr(exc, "problem_mark", None) \
        or getattr(exc, "context_mark", None)
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    detail = f"{problem} ({context})" if context else problem
    text = next((plain for needle, ctx, plain in _PLAIN if needle in problem and ctx in context),
                "this is not valid YAML here (run fabgen --verbose for the parser's own words)")
    if VERBOSE:
        text += f" [YAML parser: {detail}]"
    return Problem(line, col, "", f"YAML syntax: {text}", file)


_EVENTS = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser where PyYAML has it: 40x faster


def _too_big(text: str) -> tuple[_Mark, str] | None:
    """Where the text nests deeper than MAX_DEPTH or holds more than MAX_NODES values, found in
    one pass over the parser's flat event stream before anything is composed, or None.

    PyYAML's composer recurses once per level, so `[[[[...` a few thousand deep would end in
    RecursionError; and composing millions of values (a flow list of numbers) takes minutes
    before any bound can apply. libyaml's event parser gives up at the first bound crossed in
    a fraction of a second. Syntax errors are left to the composer, which reports them with its
    own words; aliases are counted again, expanded, when the document is walked.
    """
    try:
        return _bounds(text, _EVENTS)
    except yaml.YAMLError:  # libyaml stops at 1,000 levels or a syntax error: PyYAML's parser tells which
        pass
    try:
        return _bounds(text, yaml.SafeLoader)
    except yaml.YAMLError:
        return None


class _Mark(Protocol):
    """A place in the text: PyYAML's Mark, or libyaml's."""

    line: int
    column: int


def _bounds(text: str, loader: type) -> tuple[_Mark, str] | None:
    depth = count = 0
    for event in yaml.parse(text, Loader=loader):
        count += 1
        if count > MAX_NODES:
            return _start(event), f"more than {MAX_NODES} values: {{what}} is a short YAML file"
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                return _start(event), f"nesting deeper than {MAX_DEPTH} levels: {{what}} is a few levels deep"
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return None


def _start(event: yaml.Event) -> _Mark:
    """Where an event starts: both parsers mark every event (the type stubs allow None)."""
    assert event.start_mark is not None
    return event.start_mark


def load_text(text: str, file: str, what: str = "inventory", max_bytes: int = MAX_BYTES,
              start: str = "start with 'version: 1'") -> Loaded:
    """Parse YAML text (an inventory, or another file fabgen reads: `what` names it in messages);
    raise InventoryError with every YAML-level problem."""
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        col = nul - (text.rfind("\n", 0, nul) + 1) + 1
        raise InventoryError([Problem(line, col, "", "a NUL byte: the file is binary or damaged, not YAML text",
                                      file)])
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise InventoryError([Problem(1, 1, "", f"file is larger than {_size(max_bytes)}; {_a(what)} is a short "
                                      "YAML file", file)])
    big = _too_big(text)
    if big is not None:
        mark, message = big
        raise InventoryError([Problem(mark.line + 1, mark.column + 1, "", message.format(what=_a(what)), file)])
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise InventoryError([_yaml_problem(file, exc)]) from None
    walker = _Walker(file, what)
    if root is None:
        raise InventoryError([Problem(1, 1, "", f"the {what} is empty; {start}", file)])
    try:
        data = walker.walk(root, (), 0)
    except _TooDeep as exc:
        m = exc.node.start_mark
        raise InventoryError([Problem(m.line + 1, m.column + 1, "",
                                      f"nesting deeper than {MAX_DEPTH} levels (recursive alias?)", file)]) from None
    except _TooBig as exc:
        m = exc.node.start_mark
        raise InventoryError([Problem(m.line + 1, m.column + 1, "", f"more than {MAX_NODES} values after expanding "
                                      "aliases (alias bomb?)", file)]) from None
    if walker.problems:
        raise InventoryError(walker.problems)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return Loaded(file, data, walker.positions, walker.key_positions, digest, walker.numbers)


def _a(what: str) -> str:
    return ("an " if what[0] in "aeiou" else "a ") + what


def _size(n: int) -> str:
    return f"{n // 1024 // 1024} MiB" if n >= 1024 * 1024 else f"{n // 1024} KiB"


def load(path: str | Path, what: str = "inventory", max_bytes: int = MAX_BYTES,
         start: str = "start with 'version: 1'") -> Loaded:
    """Read and parse a YAML file fabgen reads (an inventory by default); unreadable files are
    located errors too."""
    name = str(path)
    p = Path(path)
    try:
        if p.is_dir():
            raise InventoryError([Problem(1, 1, "", f"is a directory: give the {what}'s YAML file", name)])
        # read at most the limit and one byte more: a pipe or a device reports no size to check first
        with p.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
        if len(raw) > max_bytes:
            raise InventoryError([Problem(1, 1, "", f"file is larger than {_size(max_bytes)}; {_a(what)} is a "
                                          "short YAML file", name)])
    except OSError as exc:
        raise InventoryError([Problem(1, 1, "", f"cannot read the {what}: {exc.strerror or exc}", name)]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InventoryError([Problem(line, 1, "", f"the {what} is not UTF-8 text", name)]) from None
    return load_text(text, name, what, max_bytes, start)
