"""Slurm hostlist expressions: ['dgx001', 'dgx002', 'dgx004'] -> 'dgx[001-002,004]'.

Names group by their prefix and the width of their trailing number (zero padding is kept,
as Slurm's parser keeps it); names without a trailing number stand alone.

Ours rather than PyPI's python-hostlist (collect_hostlist): that package is GPL-2.0-or-later,
which an Apache-2.0 tool should not depend on, and what fabgen needs (compress, and expand
for the tests and the review) is sixty lines that tests/test_slurm.py round-trips.
"""

from __future__ import annotations

import re

_TAIL = re.compile(r"^(.*?)(\d+)$")


def compress(names: list[str]) -> str:
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    order: list[tuple[str, int] | str] = []
    for name in names:
        m = _TAIL.match(name)
        if not m:
            plain.append(name)
            order.append(name)
            continue
        key = (m.group(1), len(m.group(2)))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(m.group(2)))
    parts = []
    for entry in order:
        if isinstance(entry, str):
            parts.append(entry)
            continue
        prefix, width = entry
        nums = sorted(set(groups[entry]))
        if len(nums) == 1:
            parts.append(f"{prefix}{nums[0]:0{width}d}")
            continue
        ranges: list[str] = []
        start: int | None = nums[0]  # None past the last number, where the loop ends
        for a, b in zip(nums, nums[1:] + [None]):
            if b != a + 1:
                ranges.append(f"{start:0{width}d}" if start == a else f"{start:0{width}d}-{a:0{width}d}")
                start = b
        parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(parts)


def expand(expr: str) -> list[str]:
    """The inverse, for tests and for reading Slurm files back; a name may carry several ranges
    ('f-su[01-02]-leaf[1-2]': every combination, as Slurm reads it)."""
    out: list[str] = []
    for part in re.findall(r"(?:[^,\[]+|\[[^\]]*\])+", expr):
        names = [""]
        for text, body in re.findall(r"([^\[]*)(?:\[([^\]]*)\])?", part):
            names = [n + text for n in names]
            if body:
                names = [n + f"{k:0{width}d}" for n in names for k, width in _numbers(body)]
        out += [n for n in names if n]
    return out


def _numbers(body: str) -> list[tuple[int, int]]:
    """A bracket's numbers with their width: '01-03,07' -> (1, 2), (2, 2), (3, 2), (7, 2)."""
    out = []
    for item in body.split(","):
        lo, _, hi = item.partition("-")
        out += [(n, len(lo)) for n in range(int(lo), int(hi or lo) + 1)]
    return out
