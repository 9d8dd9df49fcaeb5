"""A small, fast YAML writer for the plain data fabgen renders (dicts, lists, strings,
ints, bools, None), in block style with insertion order kept.

PyYAML's pure-Python emitter took 80% of a 32k-GPU render; this writes the same subset in
a fraction of the time and never depends on whether libyaml is installed, so the bytes
are the same on every machine. Strings are written plain only when a YAML 1.1 or 1.2
reader reads them back as the same string; otherwise they are double-quoted with JSON
escapes (a JSON string is a valid YAML double-quoted scalar). Tests round-trip random
data through yaml.safe_load.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable
from typing import Any

from fabgen.formats.memo import Memo

_PLAIN_TEXT = r"[A-Za-z0-9_/.][A-Za-z0-9_/.@+=-]*(?:[ ][A-Za-z0-9_/.@+=-]+)*"
_SPECIAL_WORDS = frozenset(("y Y yes Yes YES n N no No NO true True TRUE false False FALSE on On ON off Off OFF "
                            "null Null NULL ~ .inf .Inf .INF .nan .NaN .NAN -.inf -.Inf -.INF =").split())
_SPECIAL_TEXT = "(?:" + "|".join(map(re.escape, sorted(_SPECIAL_WORDS))) + ")"
_NUMBERLIKE_TEXT = r"[-+]?(?:[0-9][0-9_:.,]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z|0[xXoObB]"
# The rule: a string is written plain when it is _PLAIN, not _SPECIAL and not _NUMBERLIKE (these
# three state it; tests/test_yamlout.py holds _PLAIN_SCALAR to them) ...
_PLAIN = re.compile(f"^{_PLAIN_TEXT}$")
_SPECIAL = re.compile(f"^{_SPECIAL_TEXT}$")
_NUMBERLIKE = re.compile(_NUMBERLIKE_TEXT)
# ... in one match (three were most of the time of a string seen once, as every address and
# port description is): the same patterns, the two exclusions as lookaheads
_PLAIN_SCALAR = re.compile(f"(?!{_SPECIAL_TEXT}\\Z)(?!{_NUMBERLIKE_TEXT}){_PLAIN_TEXT}\\Z")


# ... and a whole list of strings at once, joined by newlines (which no plain string holds):
# a switch's port descriptions and addresses, a thousand new strings, checked in one match.
# The special words are looked up in a set (an alternation at every line was half the time);
# the number-like test is atomic (a lookahead's capture, then matched again), so an address
# does not backtrack. Each line matches one way only: a failing match backtracks linearly.
_LINE_END = r"(?=\n|\Z)"
_NUMBERLIKE_LINE = (rf"[-+]?(?:[0-9](?=([0-9_:.,]*))\1|\.(?=([0-9]+))\2)(?:[eE][-+]?[0-9]+)?{_LINE_END}"
                    r"|0[xXoObB]")
_PLAIN_LINE = f"(?!{_NUMBERLIKE_LINE}){_PLAIN_TEXT}"
_NEXT_LINE = r"(?:\n(?=.)|\Z)"  # one newline between values, none at the end: no empty value
_PLAIN_LINES = re.compile(rf"(?:{_PLAIN_LINE}{_NEXT_LINE})+\Z")
# ... or plain or a bare IPv4 address (a netplan's gateways), which is quoted (_ADDRESS below)
_BARE_ADDRESS = r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}"
_PLAIN_OR_BARE_LINES = re.compile(rf"(?:(?:{_PLAIN_LINE}|{_BARE_ADDRESS}){_NEXT_LINE})+\Z")
_IS_BARE = re.compile(f"{_BARE_ADDRESS}\\Z").match


_ASCII = re.compile(r"^[\x00-\x7e]*$")


class _Escapes(dict):
    """str.translate table: every character outside printable ASCII as a YAML escape
    (\\uXXXX, or \\UXXXXXXXX beyond the BMP; JSON would write a surrogate pair)."""

    def __missing__(self, code: int) -> str:
        if 0x20 <= code < 0x7F:
            value = chr(code)
        else:
            value = f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
        self[code] = value
        return value


_ESCAPES = _Escapes()


def scalar(value: Any) -> str:
    if value.__class__ is str:
        return _CACHE[value]
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return _string(str(value))


# an IPv4 address, with or without a prefix length: every netplan, NVUE file and host_vars
# carries hundreds of them, each new, so they miss the cache; the general rule below gives the
# same answer (an address is number-like, so quoted; with "/len" it is plain; tested)
_ADDRESS = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}(/[0-9]{1,2})?\Z")


def _string(text: str) -> str:
    if _PLAIN_SCALAR.match(text):
        return text
    if _ADDRESS.match(text):  # a bare address (with a prefix it is plain): JSON's quotes, sooner
        return f'"{text}"'
    return json.dumps(text, ensure_ascii=False).translate(_ESCAPES) if not _ASCII.fullmatch(text) else \
        json.dumps(text).replace("\x7f", "\\u007f")


_CACHE = Memo(_string)  # a string's YAML text


def lines_of(text: str, indent: str) -> str:
    """A string of several lines (a banner) as a double-quoted scalar over as many lines, each
    ended by an escaped line break (`\\n\\`), so that no line of the file outruns yamllint's
    width: YAML drops an escaped line break and the next line's indentation, and a line's own
    leading space is written `\\x20`. One line: `scalar`'s text. The emitters call this only for
    str subclasses (a target's marked text): plain strings keep the fast path."""
    if "\n" not in text:
        return scalar(text)
    parts = [json.dumps(part, ensure_ascii=False).translate(_ESCAPES)[1:-1] for part in text.split("\n")]
    parts = ["\\x20" + p[1:] if p.startswith(" ") else p for p in parts]
    return '"' + f"\\n\\\n{indent}  ".join(parts) + '"'


def texts(values: tuple[Any, ...] | list[Any]) -> list[str] | tuple[Any, ...]:
    """Each value's YAML text (`scalar`'s): many strings, all plain (or plain and bare addresses,
    quoted), are told by one match over them joined, not one call each (nor a cache entry each:
    a switch's descriptions and addresses are new strings)."""
    if len(values) > 8:
        try:
            joined = "\n".join(values)
        except TypeError:  # not all strings
            joined = None
        if joined is not None and joined.count("\n") == len(values) - 1 and _SPECIAL_WORDS.isdisjoint(values):
            if _PLAIN_LINES.match(joined):
                return values
            if _PLAIN_OR_BARE_LINES.match(joined):  # the bare addresses quoted (a substitution: twice the time)
                return [f'"{v}"' if _IS_BARE(v) else v for v in values]
    cache = _CACHE
    return [cache[x] if x.__class__ is str else scalar(x) for x in values]


def _emit(value: Any, indent: str, out: list[str], step: str = "") -> None:
    # `step`: the indent of a list's items under their key ("" or, for indented sequences, "  ");
    # exact type tests first, strings looked up in the cache inline: the emitter visits every
    # node of every switch's NVUE tree (2.3 million at 64k GPUs), and the isinstance chain and a
    # call per scalar were half its time; other types take the general path, same output
    if isinstance(value, dict):
        cache = _CACHE
        for k, v in value.items():
            key = cache.get(k) if k.__class__ is str else None
            if key is None:
                key = scalar(k)
            t = v.__class__
            if t is str:
                text = cache.get(v)
                out.append(f"{indent}{key}: {text if text is not None else scalar(v)}")
            elif t is dict or t is list or isinstance(v, (dict, list)):
                if not v:
                    out.append(f"{indent}{key}: {'{}' if isinstance(v, dict) else '[]'}")
                elif isinstance(v, dict):
                    out.append(f"{indent}{key}:")
                    _emit(v, indent + "  ", out, step)
                else:
                    out.append(f"{indent}{key}:")
                    _emit(v, indent + step, out, step)
            else:
                out.append(f"{indent}{key}: {lines_of(v, indent) if isinstance(v, str) else scalar(v)}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)) and item:
                sub: list[str] = []
                _emit(item, indent + "  ", sub, step)
                first = sub[0][len(indent) + 2:]
                out.append(f"{indent}- {first}")
                out.extend(sub[1:])
            else:
                out.append(f"{indent}- {_inline(item)}")
    else:
        out.append(f"{indent}{_inline(value)}")


def dump_paths(mapping: dict[str, Any], indent: str, lead: str = "") -> tuple[list[str], list[str]]:
    """The block-style lines of a mapping of mappings, scalars and lists of scalars at `indent`, as
    `dump` writes them, and every leaf's path as words after `lead` (`key key value`; an empty
    mapping's path alone), from one walk: NVUE's startup.yaml and its `nv set` lines are the same
    tree, and walking it twice was a third of a 64k-GPU Spectrum-X render. An entry of either
    list may hold several lines (a `Filled` sub-tree's, joined by newlines): join them with "\n"."""
    lines: list[str] = []
    paths: list[str] = []
    _walk(mapping, indent, lead, lines, paths)
    return lines, paths


class Shared(dict):
    """A sub-tree that one render's trees share by reference (every unused port's, every
    fabric port's `link`): `dump_paths` walks it once per indent and copies its lines, and
    its paths under each new prefix. Never changed once built: a change would show in every
    tree that shares it, and not in text already walked. JSON and the other writers see a
    plain dict; a pickle (fabgen diff's digests) carries no walked text. It holds no Filled
    sub-tree (refused): each path of one is written with its own prefix, which a Shared's
    paths, walked without one, cannot give."""

    __slots__ = ("walked",)

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        if _holds_filled(self):
            raise TypeError("a Shared sub-tree cannot hold a Filled one")
        self.walked: dict[str, tuple[list[str], list[str]]] = {}

    def __reduce__(self) -> tuple[Any, ...]:
        return Shared, (dict(self),)


def _holds_filled(tree: dict[Any, Any]) -> bool:
    return any(isinstance(v, Filled) or (isinstance(v, dict) and _holds_filled(v)) for v in tree.values())


class Shape:
    """Sub-trees that differ only in a few scalars (every host port of a switch: its description
    and address): `make(*values)` builds one; `dump_paths` writes a `Filled` one by formatting
    text compiled once per indent by walking make(*marks), a mark in place of each value, and
    turning the marks into str.format fields: the same lines and paths a walk of it gives, by
    construction, for a third of the time (the walk was half of an NVUE render).
    `make` must be picklable (a module's function or a partial of one) and build the same shape
    whatever the values: each value placed as it is, as a key or a scalar leaf (a str, int, bool
    or None), never tested; no two keys of one mapping equal for any values (a value equal to a
    fixed key, or two values keying one mapping, would be one key in the tree, two in the text)."""

    __slots__ = ("make", "arity", "compiled")

    def __init__(self, make: Any, arity: int):
        self.make = make
        self.arity = arity
        self.compiled: dict[str, Any] = {}  # by indent: (lines, paths); by _WRITTEN + name: a writer's

    def __reduce__(self) -> tuple[Any, ...]:
        return Shape, (self.make, self.arity)  # without the compiled text

    def fill(self, *values: Any) -> Filled:
        filled = Filled(self.make(*values))  # dict's own constructor: no Python frame per port
        filled.shape, filled.filled_with = self, values
        return filled

    def text(self, indent: str) -> tuple[str, str]:
        """(lines, paths) as str.format templates: lines take the values' YAML text, paths the
        path's prefix then the values as words."""
        done = self.compiled.get(indent)
        if done is None:
            marks = [f"{_MARK}{n}{_MARK}" for n in range(self.arity)]
            lines: list[str] = []
            paths: list[str] = []
            _walk(self.make(*marks), indent, _MARK, lines, paths)
            body, tails = _brace("\n".join(lines)), _brace("\n".join(paths)).replace(_MARK, "{0}", 1)
            tails = tails.replace(f"\n{_MARK}", "\n{0}")
            for n, mark in enumerate(marks):  # a key or a leaf: quoted in the lines, bare in the paths
                body, tails = body.replace(_string(mark), f"{{{n}}}"), tails.replace(mark, f"{{{n + 1}}}")
            if _MARK in tails or _string(_MARK)[1:-1] in body:
                raise ValueError("a Shape's make must place each value as it is, as a key or a leaf")
            done = self.compiled[indent] = (body, tails)
        return done


    def written(self, write: Callable[[Any], str], quote: Callable[[str], str], name: str) -> str:
        """The text `write` makes of make(*values), as a str.format template taking each value's
        text as `write` writes a string (`quote`): a SONiC PORT table or BGP neighbor row in JSON
        (keys sorted; fabgen.targets.sonic), a node's netplan ports (fabgen.targets.hosts),
        filled in, not written, for each switch or node. Here each value must be a leaf: a key
        would be sorted as its mark, not as itself. `name` tells apart the texts of one shape
        that different writers make (a table's name)."""
        done = self.compiled.get(_WRITTEN + name)
        if done is None:
            marks = [f"{_MARK}{n}{_MARK}" for n in range(self.arity)]
            done = _brace(write(self.make(*marks)))
            for n, mark in enumerate(marks):
                if f"{quote(mark)}: " in done:
                    raise ValueError("a Shape written by a writer must place each value as a leaf")
                done = done.replace(quote(mark), f"{{{n}}}")
            if quote(_MARK)[1:-1] in done:
                raise ValueError("a Shape's make must place each value as it is, as a key or a leaf")
            self.compiled[_WRITTEN + name] = done
        return done


_WRITTEN = "by:"  # a Shape's texts by other writers among its compiled texts, by name (the others: by indent)


class Filled(dict):
    """One sub-tree of a Shape: a plain dict to every reader, written from the Shape's text (so
    never changed once built: the YAML would not show a change that JSON would)."""

    __slots__ = ("shape", "filled_with")
    shape: Shape
    filled_with: tuple[Any, ...]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as the plain dict it is to every reader (fabgen diff digests and compares
        structured configs in pickles; nothing renders from one): the shape stays behind."""
        return dict, (dict(self),)


class Joined(dict):
    """A mapping written part by part, in order: each part a plain mapping, a Shared one or a
    Filled one whose entries are this mapping's own (an NVUE switch's interfaces: its loopback
    and management port, then the run of its switch ports, one Filled of the switch's shape,
    written by one format). A plain dict to every reader, with the parts' entries in order."""

    __slots__ = ("parts",)
    parts: tuple[Any, ...]  # a plain or Shared mapping, or a Filled one's (shape, values): its entries are here

    def __init__(self, *parts: dict[Any, Any]):
        super().__init__()
        for part in parts:
            self.update(part)
        if len(self) != sum(map(len, parts)):
            raise ValueError("the parts of a Joined mapping share a key")
        self.parts = tuple((p.shape, p.filled_with) if type(p) is Filled else p for p in parts if p)

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (dict(self),)  # as a Filled: the plain dict it is


_MARK = "\x00"  # marks a Shape's values while its text is compiled; no config text holds a NUL


def _brace(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _walk(mapping: dict[str, Any], indent: str, prefix: str, lines: list[str], paths: list[str]) -> None:
    # `cache[s]` (a subscript, computing only on a miss) rather than cache.get and scalar: this
    # visits every node of every NVUE tree, and each call saved is a tenth of the walk
    cache = _CACHE
    for k, v in mapping.items():
        key = cache[k] if k.__class__ is str else scalar(k)
        here = f"{prefix}{k}"
        t = v.__class__
        if t is str:
            lines.append(f"{indent}{key}: {cache[v]}")
            paths.append(f"{here} {v}")
        elif t is Filled and v:
            body, tails = v.shape.text(indent + "  ")
            values = v.filled_with
            lines.append(f"{indent}{key}:\n" + body.format(*texts(values)))
            paths.append(tails.format(here + " ", *values))
        elif t is Shared and v:
            lines.append(f"{indent}{key}:")
            _shared(v, indent + "  ", here + " ", lines, paths)
        elif t is Joined and v:
            lines.append(f"{indent}{key}:")
            _parts(v.parts, indent + "  ", here + " ", lines, paths)
        elif isinstance(v, dict):
            if v:
                lines.append(f"{indent}{key}:")
                _walk(v, indent + "  ", here + " ", lines, paths)
            else:
                lines.append(f"{indent}{key}: {{}}")
                paths.append(here)
        elif isinstance(v, list):
            if not v or any(isinstance(x, (dict, list)) for x in v):
                raise TypeError(f"dump_paths takes mappings, scalars and lists of scalars; {here} is a list of "
                                "mappings, of lists or empty")
            # a list of scalars (NVUE's `system aaa authentication order`): block items, as dump
            # writes them, and one path with the items joined by commas, as `nv set` takes a list
            lines.append(f"{indent}{key}:")
            lines.extend(f"{indent}- {scalar(x)}" for x in v)
            paths.append(f"{here} {','.join(map(str, v))}")
        else:
            lines.append(f"{indent}{key}: {lines_of(v, indent) if isinstance(v, str) else scalar(v)}")
            paths.append(f"{here} {v}")


def _shared(tree: Shared, indent: str, prefix: str, lines: list[str], paths: list[str]) -> None:
    """A Shared mapping's entries: walked once per indent, its lines copied, its paths prefixed."""
    walked = tree.walked.get(indent)
    if walked is None:
        walked = tree.walked[indent] = ([], [])
        _walk(tree, indent, "", *walked)
    lines.extend(walked[0])
    paths.extend([prefix + p for p in walked[1]])


def _parts(parts: tuple[Any, ...], indent: str, prefix: str, lines: list[str], paths: list[str]) -> None:
    """A Joined mapping's entries, part by part: a Filled part by its shape's text, formatted."""
    for part in parts:
        t = part.__class__
        if t is tuple:  # a Filled part: (shape, values)
            shape, values = part
            body, tails = shape.text(indent)
            lines.append(body.format(*texts(values)))
            paths.append(tails.format(prefix, *values))
        elif t is Shared:
            _shared(part, indent, prefix, lines, paths)
        else:
            _walk(part, indent, prefix, lines, paths)


def _inline(value: Any) -> str:
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, list):
        return "[]"
    return scalar(value)


COMMENT_WIDTH = 80  # yamllint's default line length: a file's comment lines fit it (fabgen/formats/yamllint.yaml)

# a file's head: a document start after its comment lines, which yamllint's document-start asks for
DOCUMENT_START = "---\n"


def comment(text: str) -> str:
    """`text` as `# ` comment lines of at most COMMENT_WIDTH characters, broken at spaces (a word
    longer than a line stands alone on its own: yamllint takes it), each ending in a newline.
    Called once per file for its head, never per line; a text that fits is one line, unwrapped
    (most heads fit: textwrap costs tens of microseconds, a few percent of a node's netplan)."""
    if len(text) <= COMMENT_WIDTH - 2 and "\n" not in text:
        return f"# {text}\n"
    lines = textwrap.wrap(text, COMMENT_WIDTH, initial_indent="# ", subsequent_indent="# ",
                          break_long_words=False, break_on_hyphens=False)
    return "\n".join(lines) + "\n"


def dump(value: Any, indent_sequences: bool = False) -> str:
    """Block-style YAML for value (a dict or list), ending in a newline. With `indent_sequences`
    a list's items stand two spaces in from their key, as ansible-lint's yamllint rules want a
    vars file (`indentation: indent-sequences: true`); without, at the key's column (PyYAML's)."""
    if not value:
        return _inline(value) + "\n"
    out: list[str] = []
    _emit(value, "", out, "  " if indent_sequences else "")
    return "\n".join(out) + "\n"
