"""A growth import for NetBox: the objects a grown cluster's NetBox files add to an earlier
render's, with each file's header, so NetBox's bulk import takes them after the first import
(it refuses an object that already exists, and a file without its header).

Read as every render reader does (rendered/read.py: only files the manifest lists, as fabgen
wrote them). A row is new when its object (the key columns of its file) is not in the earlier
file; an object whose row changed is not a growth (NetBox would refuse it as a duplicate), so it
is refused by name: planned growth never changes one (docs/growth.md).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from fabgen.errors import printable
from fabgen.rendered.read import NotARender, read_render

# the columns that name an object in each file (the rest describe it)
KEYS = {
    "manufacturers": ("name",), "device-roles": ("name",), "device-types": ("model",), "sites": ("name",),
    "racks": ("name",), "devices": ("name",), "interfaces": ("device", "name"),
    "cables": ("side_a_device", "side_a_name"), "vrfs": ("name",), "virtual-interfaces": ("device", "name"),
    "ip-addresses": ("address", "vrf", "device", "interface"),
}
PREFIX = "netbox/"


class NotAGrowth(Exception):
    """The later render changes objects of the earlier one (or its files' columns): one line."""


def _table(data: bytes, where: str) -> tuple[list[str], list[list[str]]]:
    try:
        rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise NotARender(f"{where}: not a CSV file fabgen wrote ({exc})") from None
    if not rows:
        raise NotARender(f"{where}:1:1: empty; fabgen writes a header")
    return rows[0], rows[1:]


def growth(before: Path, after: Path) -> dict[str, bytes]:
    """netbox/<file> -> the rows of AFTER's file whose objects BEFORE's lacks, with the header; files
    that add nothing are left out."""
    old, new = read_render(before), read_render(after)
    for side, files in ((before, old), (after, new)):
        if files.edited or files.missing or files.unlisted:
            raise NotARender(f"{printable(str(side))}: {' '.join(files.notes)}; render it again")
    out: dict[str, bytes] = {}
    for path in sorted(p for p in new if p.startswith(PREFIX) and p.endswith(".csv")):
        kind = Path(path).stem.split("-", 1)[1]
        if kind not in KEYS:
            raise NotARender(f"{printable(str(after))}/{printable(path)}: not a NetBox file fabgen writes")
        header, rows = _table(new[path], f"{printable(str(after))}/{path}")
        earlier = old.get(path)
        known: dict[tuple[str, ...], list[str]] = {}
        if earlier is not None:
            old_header, old_rows = _table(earlier, f"{printable(str(before))}/{path}")
            if old_header != header:
                raise NotAGrowth(f"{path}: its columns changed ({','.join(old_header)} -> {','.join(header)}); "
                                 "a growth import adds rows to the same columns: import the whole file with NetBox's "
                                 "update mode instead")
            known = {_key(header, r, kind): r for r in old_rows}
        added, changed = [], []
        for r in rows:
            was = known.get(_key(header, r, kind))
            if was is None:
                added.append(r)
            elif was != r:
                changed.append(":".join(_key(header, r, kind)))
        if changed:
            raise NotAGrowth(f"{path}: {len(changed)} object(s) the earlier render has changed, which a growth "
                             f"import cannot add: {printable(', '.join(changed[:5]))}"
                             f"{' and more' if len(changed) > 5 else ''}")
        if added:
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerows([header, *added])
            out[path] = buf.getvalue().encode()
    return out


def _key(header: list[str], row: list[str], kind: str) -> tuple[str, ...]:
    cells = dict(zip(header, row, strict=False))
    return tuple(cells.get(k, "") for k in KEYS[kind])


def write(files: dict[str, bytes], out: Path) -> None:
    """The growth files under a new directory OUT (never into an existing one: fabgen replaces no
    file it did not write)."""
    out.mkdir(parents=True)
    for path, data in files.items():
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "xb") as fh:
            fh.write(data)
