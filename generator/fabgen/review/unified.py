"""Per-file unified diffs of two renders, computed once per pair and bounded (a window of
LARGE_WINDOW lines for files too large for difflib's quadratic matcher). The summary and the
folding (compare.py) and the text and Markdown (format.py) read them."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any, Literal

SKIP_FILE_DIFF = re.compile(r"^(manifest\.json|report\.json|ansible/(host_vars|group_vars|configs)/.*|netbox/.*)$")


def file_diff(path: str, a: bytes | None, b: bytes | None) -> str:
    if SKIP_FILE_DIFF.match(path):
        return ""
    if a is None or b is None:
        text = (b if a is None else a) or b""
        what = "new file" if a is None else "deleted file"
        return f"{what}: {path} ({len(text.splitlines())} lines)\n"
    try:
        la, lb = a.decode().splitlines(keepends=True), b.decode().splitlines(keepends=True)
    except UnicodeDecodeError:
        return f"binary file changed: {path}\n"
    return _unified(la, lb, path)


_RANGE = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@$", re.M)


def _unified(la: list[str], lb: list[str], path: str, context: int = 3) -> str:
    """difflib's unified diff, run on the lines between the common head and tail only.

    Measured: difflib matches whole files in about 3.5 ms per switch config, 9 s for the 2,560
    configs of a 32k-GPU fabric; a one-key change leaves all but a few lines in common, so the
    window is a few lines and the same hunks cost well under a second. Hunk line numbers are
    shifted back by the window's offset.
    """
    head = 0
    limit = min(len(la), len(lb))
    while head < limit and la[head] == lb[head]:
        head += 1
    tail = 0
    while tail < limit - head and la[-1 - tail] == lb[-1 - tail]:
        tail += 1
    off = max(0, head - context)
    end_a, end_b = len(la) - max(0, tail - context), len(lb) - max(0, tail - context)
    wa, wb = la[off:end_a], lb[off:end_b]
    if max(len(wa), len(wb)) > LARGE_WINDOW:
        body = "".join(_format_unified(_OnePass(wa, wb), f"a/{path}", f"b/{path}", context))
    else:
        body = "".join(difflib.unified_diff(wa, wb, f"a/{path}", f"b/{path}", n=context))
    if not off:
        return body

    def shift(m: re.Match) -> str:
        return f"@@ -{int(m.group(1)) + off}{m.group(2) or ''} +{int(m.group(3)) + off}{m.group(4) or ''} @@"
    return _RANGE.sub(shift, body)


# Lines in a window above which difflib's matcher is replaced by one pass: the cabling plan of a
# 32k-GPU fabric grown by a unit gains rows in several places, and difflib took over a second on
# the ~100,000 lines between the first and the last.
LARGE_WINDOW = 2000


class _OnePass(difflib.SequenceMatcher):
    """Opcodes in one pass over both windows: lines equal at the same place are kept, a line the
    other side no longer has is deleted or inserted, and where both lines come back later the old
    one is deleted. Applying them always turns a into b (tests/test_diff.py applies thousands);
    for rows added or removed, as growth brings, they are the minimal ones."""

    def __init__(self, a: list[str], b: list[str]):  # noqa: D107 - difflib's matching tables are not needed
        self.a, self.b = a, b

    def get_opcodes(self) -> list[tuple[Literal["replace", "delete", "insert", "equal"], int, int, int, int]]:
        a, b = self.a, self.b
        # "comes back later" is "its last place is past the pointer": no counting per line
        last_a = {line: k for k, line in enumerate(a)}
        last_b = {line: k for k, line in enumerate(b)}
        ops: list[list[Any]] = []
        i = j = 0

        def add(tag: str, di: int, dj: int) -> None:
            if ops and ops[-1][0] == tag:
                ops[-1][2] += di
                ops[-1][4] += dj
            else:
                ops.append([tag, i, i + di, j, j + dj])

        while i < len(a) and j < len(b):
            if a[i] == b[j]:
                k = 1
                while i + k < len(a) and j + k < len(b) and a[i + k] == b[j + k]:
                    k += 1
                add("equal", k, k)
                i, j = i + k, j + k
            elif last_b.get(a[i], -1) < j or last_a.get(b[j], -1) > i:
                add("delete", 1, 0)
                i += 1
            else:
                add("insert", 0, 1)
                j += 1
        if i < len(a):
            add("delete", len(a) - i, 0)
        if j < len(b):
            add("insert", 0, len(b) - j)
        return [tuple(op) for op in ops]


def _format_unified(m: _OnePass, fromfile: str, tofile: str, n: int) -> Iterator[str]:
    """difflib.unified_diff's output for the opcodes of `m`."""
    a, b = m.a, m.b
    for k, group in enumerate(m.get_grouped_opcodes(n)):
        if k == 0:
            yield f"--- {fromfile}\n"
            yield f"+++ {tofile}\n"
        first, last = group[0], group[-1]
        yield f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in a[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield from ("-" + line for line in a[i1:i2])
            if tag in ("replace", "insert"):
                yield from ("+" + line for line in b[j1:j2])


def _range(start: int, stop: int) -> str:
    """A unified diff's range, as difflib writes it."""
    beginning, length = start + 1, stop - start
    if length == 1:
        return f"{beginning}"
    if not length:
        beginning -= 1
    return f"{beginning},{length}"


HUNK = re.compile(r"^@@ .* @@", re.M)
