"""Read a GUID map: the real GUIDs of a fabric's devices, one `device,port,guid` row each.

* switch rows: `leaf01,0,0xb8cef6030012a100` (port 0: the switch's node GUID);
* adapter rows: `dgx001,mlx5_0,0x946dae03002d1c6a` (the NIC's port GUID; for a single-port
  ConnectX it is also its node GUID).
A header row `device,port,guid` is allowed; `#` starts a comment. Every malformed,
unknown or repeated row is a located error in the map file itself.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from fabgen.errors import Problem

_GUID = re.compile(r"^(0x)?([0-9a-fA-F]{1,16})$")
MAX_BYTES = 16 * 1024 * 1024  # a GUID map of 100,000 GPUs' NICs and switches is a few MB
SYNTHETIC_PREFIX = 0xFAB0  # addressing.GUID_PREFIX: fabgen's own locally administered range


MAX_LINE = 1000  # device,port,guid is under 100 characters
MAX_PROBLEMS = 100  # a map of the wrong fabric is wrong on every row: the first ones say why
_TOKEN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,63}$")  # what a device or port name can be


def read_guid_map(path: Path, shown: str, known: dict[tuple[str, str], str],
                  fabric: str = "") -> tuple[dict[tuple[str, str], int], list[Problem]]:
    """known: (device, port) -> description of every device port of the fabric; `fabric`: its
    name, which every switch name starts with (a row without it gets that hint)."""
    out: dict[tuple[str, str], int] = {}
    try:
        if not path.is_file():
            what = "a directory" if path.is_dir() else "not a regular file"
            return out, [Problem(1, 1, "", f"the GUID map is {what}: give a CSV file", shown)]
        with path.open("rb") as fh:  # bounded read: a device or a FIFO has no size to check first
            raw = fh.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            return out, [Problem(1, 1, "", f"the GUID map is larger than {MAX_BYTES // 1024 // 1024} MiB", shown)]
        text = raw.decode("utf-8-sig")  # a UTF-8 byte-order mark (spreadsheet exports) is accepted
    except (OSError, UnicodeDecodeError) as exc:
        return out, [Problem(1, 1, "", f"cannot read the GUID map: {getattr(exc, 'strerror', None) or exc}", shown)]
    rows = _Rows(known, fabric, shown)
    # lines end at '\n' only, as editors and csv count them (str.splitlines also breaks at U+2028,
    # U+0085 and form feeds, which would shift every line number after one)
    for lineno, line in enumerate(text.split("\n"), 1):
        rows.read(lineno, line.rstrip("\r"))
        if len(rows.problems) > MAX_PROBLEMS:
            rows.problems[MAX_PROBLEMS:] = [Problem(lineno, 1, "", f"more than {MAX_PROBLEMS} problems: the rest of "
                                                    "the map is not read", shown)]
            break
    return rows.out, rows.problems


class _Rows:
    """The rows of one map read so far: every GUID and row checked once, in linear time."""

    def __init__(self, known: dict[tuple[str, str], str], fabric: str, shown: str):
        self.known, self.fabric, self.shown = known, fabric, shown
        self.out: dict[tuple[str, str], int] = {}
        self.problems: list[Problem] = []
        self.first_line: dict[tuple[str, str], int] = {}
        self.by_guid: dict[int, int] = {}
        self._ports: dict[str, list[str]] | None = None  # device -> its ports, built at the first unknown row

    def problem(self, lineno: int, col: int, message: str) -> None:
        self.problems.append(Problem(lineno, col, "", message, self.shown))

    def _cells(self, lineno: int, line: str) -> list[str] | None:
        """A row's cells as written, or None for a blank or comment line, the header, or a line
        that is no row (reported)."""
        line = line.split("#", 1)[0]
        if not line.strip():
            return None
        if len(line) > MAX_LINE:
            self.problem(lineno, 1, f"a line of {len(line):,} characters: a row is device,port,guid")
            return None
        try:
            cells = next(csv.reader([line]))
        except csv.Error as exc:
            self.problem(lineno, 1, f"not a CSV row ({exc})")
            return None
        if lineno == 1 and [c.strip().lower() for c in cells] == ["device", "port", "guid"]:
            return None
        return cells

    def read(self, lineno: int, line: str) -> None:
        cells = self._cells(lineno, line)
        if cells is None:
            return
        cols = [c.strip() for c in cells]

        def col(i: int) -> int:
            return sum(len(c) + 1 for c in cells[:i]) + (len(cells[i]) - len(cells[i].lstrip()) if i < len(cells)
                                                          else 0) + 1

        if len(cols) != 3:
            self.problem(lineno, 1, f"expected 3 columns device,port,guid, found {len(cols)}")
            return
        device, port, guid = cols
        m = _GUID.match(guid)
        if not m:
            shown = f"{guid!r} is" if _TOKEN.match(guid) else "the third column is"
            self.problem(lineno, col(2), f"{shown} not a GUID (64-bit hex, e.g. 0xb8cef6030012a100)")
            return
        port = "0" if port in ("", "0") else port
        key = (device, port)
        if key not in self.known:
            self.problem(lineno, 1, self._unknown(device, port))
            return
        value = int(m.group(2), 16)
        if key in self.out:
            self.problem(lineno, 1, f"{device} port {port} is listed again (first at line {self.first_line[key]})")
        elif value in self.by_guid:
            self.problem(lineno, col(2), f"GUID 0x{value:016x} is also given at line {self.by_guid[value]}")
        elif value == 0:
            self.problem(lineno, col(2), "GUID 0 is not a valid GUID")
        elif value >> 48 == SYNTHETIC_PREFIX:
            self.problem(lineno, col(2), f"GUID 0x{value:016x} is in fabgen's synthetic range (0xfab0...): copy the "
                         "device's real GUID (ibstat, ibnetdiscover)")
        else:
            self.out[key] = value
            self.first_line[key] = lineno
            self.by_guid[value] = lineno

    def _unknown(self, device: str, port: str) -> str:
        """Why (device, port) is not in the fabric, with the hint that fits."""
        if not (_TOKEN.match(device) and _TOKEN.match(port)):
            return "the device or port column is not a name fabgen gives (letters, digits, '_', '.', ':', '/', '-')"
        if self._ports is None:
            self._ports = {}
            for d, p in self.known:
                self._ports.setdefault(d, []).append(p)
        if device in self._ports:
            ports = sorted(self._ports[device], key=lambda p: [int(t) if t.isdigit() else t
                                                              for t in re.split(r"(\d+)", p)])
            return f"{device} port {port} is not in this fabric; {device} has port(s) {', '.join(ports[:20])}"
        prefixed = f"{self.fabric}-{device}"
        if self.fabric and prefixed in self._ports:
            return (f"{device} port {port} is not in this fabric: switch names start with the fabric's name, "
                    f"did you mean {prefixed}?")
        return f"{device} port {port} is not in this fabric"
