"""Read a MAC map: each switch's management-port MAC, one `switch,mac` row each, for zero-touch
provisioning (targets/provisioning.py gives each MAC its switch's planned address by DHCP).

* a row: `sx-su01-leaf1,1c:34:da:12:34:56`; the MAC in six hex pairs separated by ':' or '-',
  either case (the render always writes lower-case colon form, as dnsmasq's dhcp-host reads it);
* a header row `switch,mac` is allowed as the first row (comments and blank lines may come
  before it); `#` starts a comment; blank lines are skipped.

Both columns reach dnsmasq.conf lines (`dhcp-host=<mac>,set:<switch>,...`), so each is held to
what fabgen itself writes: a switch name fabgen planned (and only one with a management address)
and a unicast, non-zero MAC. Every other row, a repeated switch or MAC included, is a located
error in the map file itself, and nothing is rendered.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from fabgen.errors import Problem

MAX_BYTES = 4 * 1024 * 1024  # 10,000 switches' rows are 400 KB
MAX_LINE = 200  # a switch name (at most 63 characters) and a MAC
MAX_PROBLEMS = 100  # a map of another cluster is wrong on every row: the first ones say why
MAX_HINTS = 10  # unknown names given a "did you mean" (each compares with every switch's name)
_MAC = re.compile(r"^([0-9A-Fa-f]{2})([:-])[0-9A-Fa-f]{2}(\2[0-9A-Fa-f]{2}){4}$")
_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$")  # what a switch name can be (a DNS label and dots)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def mac_text(value: str) -> str | None:
    """The MAC in lower-case colon form, or None where `value` is not six hex pairs."""
    if not _MAC.match(value):
        return None
    return value.lower().replace("-", ":")


def read_mac_map(path: Path, shown: str, known: dict[str, str | None]) -> tuple[dict[str, str], list[Problem]]:
    """switch -> MAC from the map at `path` (`shown`: how messages name it). `known`: every switch
    fabgen plans, with None where it can be provisioned, else why not (no management address)."""
    try:
        if not path.is_file():
            what = "a directory" if path.is_dir() else "not a regular file"
            return {}, [Problem(1, 1, "", f"the MAC map is {what}: give a CSV file", shown)]
        with path.open("rb") as fh:  # bounded read: a device or a FIFO has no size to check first
            raw = fh.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            return {}, [Problem(1, 1, "", f"the MAC map is larger than {MAX_BYTES // 1024 // 1024} MiB", shown)]
        text = raw.decode("utf-8-sig")  # a UTF-8 byte-order mark (spreadsheet exports) is accepted
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [Problem(1, 1, "", f"cannot read the MAC map: {getattr(exc, 'strerror', None) or exc}", shown)]
    rows = _Rows(known, shown)
    # lines end at '\n' only, as editors and csv count them
    for lineno, line in enumerate(text.split("\n"), 1):
        rows.read(lineno, line.removesuffix("\r"))
        if len(rows.problems) > MAX_PROBLEMS:
            rows.problems[MAX_PROBLEMS:] = [Problem(lineno, 1, "", f"more than {MAX_PROBLEMS} problems: the rest of "
                                                    "the map is not read", shown)]
            break
    return rows.out, rows.problems


class _Rows:
    """The rows read so far: each switch and each MAC once."""

    def __init__(self, known: dict[str, str | None], shown: str):
        self.known, self.shown = known, shown
        self.out: dict[str, str] = {}
        self.problems: list[Problem] = []
        self.switch_line: dict[str, int] = {}
        self.mac_line: dict[str, int] = {}
        self.hints = 0
        self.first_row = True  # no row read yet: the one that may be the header

    def problem(self, lineno: int, col: int, message: str) -> None:
        self.problems.append(Problem(lineno, col, "", message, self.shown))

    def _cells(self, lineno: int, line: str) -> list[str] | None:
        """A row's cells, or None for a blank or comment line, the header, or a line that is no
        row (reported)."""
        bad = _CONTROL.search(line)
        if bad:
            self.problem(lineno, bad.start() + 1, "a control character: a row is switch,mac in plain text")
            return None
        line = line.split("#", 1)[0]
        if not line.strip():
            return None
        if len(line) > MAX_LINE:
            self.problem(lineno, 1, f"a line of {len(line):,} characters: a row is switch,mac")
            return None
        try:
            cells = next(csv.reader([line], strict=True))
        except csv.Error as exc:
            self.problem(lineno, 1, f"not a CSV row ({exc})")
            return None
        first, self.first_row = self.first_row, False
        words = [c.strip().lower() for c in cells]
        if first and words == ["switch", "mac"]:  # the header: the first row, after any comments
            return None
        if first and words == ["mac", "switch"]:
            self.problem(lineno, 1, "a header with the columns swapped: the rows are switch,mac in that order")
            return None
        return cells

    def read(self, lineno: int, line: str) -> None:
        cells = self._cells(lineno, line)
        if cells is None:
            return
        if len(cells) != 2:
            self.problem(lineno, 1, f"expected 2 columns switch,mac, found {len(cells)}")
            return
        switch, given = (c.strip() for c in cells)
        mac_col = len(cells[0]) + 2 + len(cells[1]) - len(cells[1].lstrip())
        if not self._switch_ok(lineno, switch):
            return
        mac = mac_text(given)
        if mac is None:
            shown = f"{given!r} is" if re.fullmatch(r"[0-9A-Za-z:.-]{1,40}", given) else "the second column is"
            self.problem(lineno, mac_col, f"{shown} not a MAC address (six hex pairs, e.g. 1c:34:da:12:34:56)")
        elif int(mac[:2], 16) & 1:
            self.problem(lineno, mac_col, f"{mac} is a multicast address, not a switch port's MAC")
        elif mac == "00:00:00:00:00:00":
            self.problem(lineno, mac_col, "00:00:00:00:00:00 is not a switch port's MAC")
        elif switch in self.out:
            self.problem(lineno, 1, f"{switch} is listed again (first at line {self.switch_line[switch]})")
        elif mac in self.mac_line:
            self.problem(lineno, mac_col, f"MAC {mac} is also given at line {self.mac_line[mac]}: one MAC is one "
                         "switch's")
        else:
            self.out[switch] = mac
            self.switch_line[switch] = lineno
            self.mac_line[mac] = lineno

    def _switch_ok(self, lineno: int, switch: str) -> bool:
        """Whether the first column names a switch that can be provisioned (else reported)."""
        if not _TOKEN.match(switch):
            self.problem(lineno, 1, "the switch column is not a name fabgen gives (letters, digits, '_', '.', '-')")
            return False
        if switch not in self.known:
            hint = ""
            if self.hints < MAX_HINTS:
                from fabgen.inventory.messages import did_you_mean

                self.hints += 1
                hint = did_you_mean(switch, list(self.known))
            self.problem(lineno, 1, f"{switch} is not a switch of this inventory{hint}")
            return False
        why = self.known[switch]
        if why is not None:
            self.problem(lineno, 1, f"{switch} cannot be provisioned: {why}")
            return False
        return True
