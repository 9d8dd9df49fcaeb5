"""Errors meant for people: located at a file, line and column, never a traceback.

Every stage collects its problems into a list of `Problem` and raises one
`InventoryError` at the stage boundary, so a user sees all of them at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def printable(text: str) -> str:
    """`text` with every non-printable character written as its Python escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ufeff]")


def printable_lines(text: str) -> str:
    """`text` with line breaks and tabs kept and every other control, bidi or invisible character
    written as its escape: what fabgen prints from a file it did not write (a render folder under
    review, a price list's note) cannot move the cursor, recolour the terminal or forge a line."""
    return _UNSAFE.sub(lambda m: ascii(m.group())[1:-1], text)


@dataclass(frozen=True, order=True)
class Problem:
    """One located problem in the inventory."""

    line: int
    column: int
    path: str
    message: str
    file: str = ""

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "column": self.column, "path": self.path,
                "message": self.message}

    def format(self) -> str:
        """One line, whatever the file name or the inventory's text holds: characters that are not
        printable (newlines, controls, bidi overrides) are written as escapes, so no crafted
        name can forge or hide a line of output."""
        where = f"{printable(self.file)}:{self.line}:{self.column}"
        message = printable(self.message)
        return f"{where}: {printable(self.path)}: {message}" if self.path else f"{where}: {message}"


class InventoryError(Exception):
    """Bad input: the CLI prints every problem and exits with code 2."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(set(problems))
        super().__init__("\n".join(p.format() for p in self.problems))

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled with its problems (a check run in a forked process raises it in the parent);
        Exception's own pickle would hand the message text to __init__ as the problems."""
        return type(self), (self.problems,)


class OutputError(Exception):
    """The output directory cannot be used (a file, or a directory fabgen did not create)."""


# A located warning's text, as the inventory checks write it (inventory/state.Checks.located)
LOCATED = re.compile(r"^(?P<path>[A-Za-z_][\w\[\].-]*) \(line (?P<line>\d+), column (?P<col>\d+)\): (?P<msg>.*)$", re.S)


def keyed(text: str) -> str:
    """A located warning keyed by its inventory path only ("fabrics[0].management: ..."): report.md
    and report.json carry it so, and an edit elsewhere in the inventory (moving its lines) does not
    change them; the command line keeps the line and column."""
    m = LOCATED.match(text)
    return f"{m['path']}: {m['msg']}" if m else text

