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


def read_guid_map(path: Path, shown: str, known: dict[tuple[str, str], str]) -> tuple[dict[tuple[str, str], int],
                                                                                        list[Problem]]:
    """known: (device, port) -> description of every device port of the fabric."""
    problems: list[Problem] = []
    out: dict[tuple[str, str], int] = {}
    first_line: dict[tuple[str, str], int] = {}
    by_guid: dict[int, int] = {}
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
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0]
        if not line.strip():
            continue
        cells = next(csv.reader([line]))
        cols = [c.strip() for c in cells]
        if lineno == 1 and [c.lower() for c in cols] == ["device", "port", "guid"]:
            continue

        def col(i: int) -> int:
            return sum(len(c) + 1 for c in cells[:i]) + (len(cells[i]) - len(cells[i].lstrip()) if i < len(cells)
                                                          else 0) + 1

        if len(cols) != 3:
            problems.append(Problem(lineno, 1, "", f"expected 3 columns device,port,guid, found {len(cols)}", shown))
            continue
        device, port, guid = cols
        m = _GUID.match(guid)
        if not m:
            problems.append(Problem(lineno, col(2), "", f"{guid!r} is not a GUID (64-bit hex, e.g. "
                                    "0xb8cef6030012a100)", shown))
            continue
        port = "0" if port in ("", "0") else port
        key = (device, port)
        if key not in known:
            devices = sorted({d for d, _ in known})
            hint = ""
            if device in devices:
                ports = sorted((p for d, p in known if d == device),
                               key=lambda p: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p)])
                hint = f"; {device} has port(s) {', '.join(ports)}"
            problems.append(Problem(lineno, 1, "", f"{device} port {port} is not in this fabric{hint}", shown))
            continue
        value = int(m.group(2), 16)
        if key in out:
            problems.append(Problem(lineno, 1, "", f"{device} port {port} is listed again (first at line "
                                    f"{first_line[key]})", shown))
            continue
        if value in by_guid:
            problems.append(Problem(lineno, col(2), "", f"GUID 0x{value:016x} is also given at line {by_guid[value]}",
                                    shown))
            continue
        if value == 0:
            problems.append(Problem(lineno, col(2), "", "GUID 0 is not a valid GUID", shown))
            continue
        if value >> 48 == SYNTHETIC_PREFIX:
            problems.append(Problem(lineno, col(2), "", f"GUID 0x{value:016x} is in fabgen's synthetic range "
                                    "(0xfab0...): copy the device's real GUID (ibstat, ibnetdiscover)", shown))
            continue
        out[key] = value
        first_line[key] = lineno
        by_guid[value] = lineno
    return out, problems
