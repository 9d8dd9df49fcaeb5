"""A bounded memo of a pure function of a string, for the writers' hottest loops.

The same keys and values come back on every switch ("Ethernet8", "5m", "interface"), so the
writers keep what they made of each; a hit is one dict lookup (`memo[key]`, or `memo.get(key)`
inline, which never computes). Unique strings (addresses, descriptions) would grow it without
end, so only the first LIMIT keys are kept; the rest are made each time, the same result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

LIMIT = 1 << 16

V = TypeVar("V")


class Memo(dict[str, V]):
    """make(key) for every key looked up with memo[key], the first LIMIT of them kept."""

    def __init__(self, make: Callable[[str], V]):
        super().__init__()
        self.make = make

    def __missing__(self, key: str) -> V:
        value = self.make(key)
        if len(self) < LIMIT:
            self[key] = value
        return value
