"""Errors meant for people: located at a file, line and column, never a traceback.

Every stage collects its problems into a list of `Problem` and raises one
`InventoryError` at the stage boundary, so a user sees all of them at once.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    """One located problem in the inventory."""

    line: int
    column: int
    path: str
    message: str
    file: str = ""

    def format(self) -> str:
        where = f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class InventoryError(Exception):
    """Bad input: the CLI prints every problem and exits with code 2."""

    def __init__(self, problems: list[Problem]):
        self.problems = sorted(set(problems))
        super().__init__("\n".join(p.format() for p in self.problems))


class OutputError(Exception):
    """The output directory cannot be used (a file, or a directory fabgen did not create)."""
