"""The one reader of a render folder: every file through its manifest, as fabgen wrote it.

The review, emulate and verify all read a render here, so each meets the same refusals: no
file outside the manifest, none through a link or of unbounded size, a file edited since
fabgen wrote it named (and refused by emulate and verify unless the user trusts it), and the
tables and report.json the readers parse held to fabgen's shapes before they are parsed.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fabgen.errors import printable
from fabgen.rendered import manifest as manifests
from fabgen.rendered.paths import ADDRESS_COLUMNS, CABLING_COLUMNS, COUNTED


class NotARender(Exception):
    """A side that is neither an inventory nor a directory fabgen rendered: one line, naming the file."""


Progress = Callable[[str], None]


def quiet(stage: str) -> None:
    pass


class RenderFiles(dict[str, bytes]):
    """A rendered directory's files (path -> bytes) as its manifest lists them, with what the
    review must say first about them (`notes`: files edited or missing since fabgen wrote them;
    `edited`, `missing`, `unlisted`: their paths, which emulate and verify refuse)."""

    notes: list[str]
    edited: list[str]
    missing: list[str]
    unlisted: list[str]


# What a review of render folders holds in memory per side: a 32k-GPU render is a few hundred MB; larger
# fabrics are reviewed from their inventories (diffsides.py renders only what differs)
MAX_RENDER_BYTES = 1024**3


MAX_REVIEW_FILE = 256 * 1024**2


def read_render(path: Path, progress: Progress = quiet) -> RenderFiles:
    """A render folder, read only through its manifest: every listed file a plain file (never
    through a link, never a FIFO), of a bounded size, its digest checked. Files the manifest does
    not list are not read; listed files that changed or went missing since fabgen wrote them are
    kept in `notes`, which the review shows before anything else."""
    progress(f"reading {path}")
    shown = printable(str(path))
    try:
        found = manifests.read(path)
    except manifests.ManifestError as exc:
        raise NotARender(f"{exc}: not a render fabgen wrote") from None
    if found is None:
        raise NotARender(f"{shown}: not a fabgen render (no manifest.json); give an inventory or the OUT of "
                         "fabgen render")
    total = sum(e.size for e in found.entries)
    if total > MAX_RENDER_BYTES:
        raise NotARender(f"{shown}/manifest.json lists {total:,} bytes, more than the {MAX_RENDER_BYTES:,} a review "
                         "of render folders reads: review the inventories instead (fabgen diff OLD.yaml NEW.yaml)")
    files = RenderFiles()
    edited, missing, read = [], [], 0
    with manifests.Tree(path) as tree:
        for e in found.entries:
            try:  # no link on the way, no hard link to elsewhere, never more than the bounds
                data = tree.read(e.path, min(MAX_REVIEW_FILE, MAX_RENDER_BYTES - read), single=True)
            except FileNotFoundError:
                missing.append(e.path)
                continue
            except manifests.ManifestError as exc:
                raise NotARender(f"{exc} (manifest.json lists it): not a render fabgen wrote") from None
            read += len(data)
            if len(data) != e.size or manifests.digest(data) != e.sha256:
                edited.append(e.path)
            files[e.path] = data
        files[manifests.MANIFEST] = tree.read(manifests.MANIFEST, manifests.MAX_MANIFEST_BYTES)
    files.notes = []
    files.edited, files.missing = edited, missing
    if edited:
        files.notes.append(f"{shown}: {len(edited)} file(s) changed since fabgen wrote them (their digest no longer "
                           f"matches manifest.json; review them as edited by hand): {_names(edited)}")
    if missing:
        files.notes.append(f"{shown}: {len(missing)} file(s) that manifest.json lists are missing: {_names(missing)}")
    extra = _unlisted(path, set(files))
    files.unlisted = [printable(x) for x in extra]
    if extra:
        files.notes.append(f"{shown}: {len(extra)} entr{'y' if len(extra) == 1 else 'ies'} that manifest.json does "
                           f"not list, left out of the review: {_names([printable(x) for x in extra])}")
    return files


TRUST_OPTION = "--trust-edited"


def trusted(path: Path, files: RenderFiles, trust: bool, command: str) -> list[str]:
    """The render's files as emulate and verify may use them: a file that changed since fabgen
    wrote it, went missing, or that the manifest does not list is refused (NotARender naming
    them) unless the user typed TRUST_OPTION; then the notes that the report must carry."""
    if not (files.edited or files.missing or files.unlisted):
        return []
    if not trust:
        what = "; ".join(x for x in (
            f"{len(files.edited)} changed since fabgen wrote them: {_names(files.edited)}" if files.edited else "",
            f"{len(files.missing)} missing: {_names(files.missing)}" if files.missing else "",
            f"{len(files.unlisted)} not written by fabgen: {_names(files.unlisted)}" if files.unlisted else "") if x)
        raise NotARender(f"{printable(str(path))}/manifest.json: {what}. fabgen {command} reads only the files fabgen "
                         f"wrote, as it wrote them; render again, or pass {TRUST_OPTION} to use the edited files")
    return [f"{TRUST_OPTION}: {note}" for note in files.notes]


def _unlisted(root: Path, listed: set[str]) -> list[str]:
    """Entries under ROOT its manifest does not list (links are not followed; a directory that
    holds nothing listed counts once)."""
    # a render's own temporary tree is not the user's to delete, but it is no file of the render either
    temporary = sorted(e.name for e in Path(root).iterdir() if e.name.startswith(manifests.INPLACE_PREFIX))
    return sorted(manifests.unlisted({p: "" for p in listed}, root) + temporary)


def _names(paths: list[str], limit: int = 10) -> str:
    return ", ".join(paths[:limit]) + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def check_render(root: Path, files: dict[str, bytes]) -> None:
    """Refuse, naming the file, a file of a rendered directory that is not what fabgen writes (so
    the review never meets a traceback): the files the review parses, in the shapes it reads."""
    for rel, data in sorted(files.items()):
        where = f"{printable(str(root))}/{rel}"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotARender(f"{where}: not UTF-8 text (byte {exc.start}); fabgen writes only UTF-8") from None
        try:
            why = _shape_problem(rel, text)
        except (ValueError, csv.Error, RecursionError) as exc:
            why = str(exc)[:200]
        if why:
            raise NotARender(f"{where}: not what fabgen writes ({printable(why)[:300]})")


def _shape_problem(rel: str, text: str) -> str | None:
    """Why the text of `rel` is not in the shape the review reads, or None."""
    if rel == "report.json":
        return _report_problem(json.loads(text))
    if rel == "manifest.json":
        json.loads(text)
        return None
    if rel.endswith(("/cabling.csv", "/addresses.csv")) and rel.count("/") == 1:
        columns = CABLING_COLUMNS if rel.endswith("/cabling.csv") else ADDRESS_COLUMNS
        lines = text.split("\n")
        if tuple(lines[0].split(",")) != columns:
            return f"columns {lines[0][:200] or '(none)'}, not fabgen's {','.join(columns)}"
        for n, line in enumerate(lines[1:], 2):
            if line and line.count(",") != len(columns) - 1:
                return f"line {n} has {line.count(',') + 1} fields, not {len(columns)}"
        return None
    if rel.startswith(("ansible/host_vars/", "ansible/configs/")):
        body = text.split("\n", 1)[1] if text.startswith("#") else text
        # host_vars: JSON after the comment and, since issue 59, YAML's document start
        doc = json.loads(body[4:] if body.startswith("---\n") else body)
        if rel.startswith("ansible/configs/") and not isinstance(doc, dict):
            return "a device config is a JSON object"
    return None


def _report_problem(rep: Any) -> str | None:
    """Why report.json is not in the shape the review reads (fabrics by name, each with its
    counts as numbers or mappings of numbers), or None."""
    if not isinstance(rep, dict) or not isinstance(rep.get("fabrics", {}), dict):
        return "report.json is an object with a fabrics object"
    for name, f in rep.get("fabrics", {}).items():
        if not isinstance(f, dict):
            return f"fabrics.{name} is not an object"
        if not isinstance(f.get("role", ""), str):
            return f"fabrics.{name}.role is not text"
        for key in ("switches", *COUNTED):
            value = f.get(key)
            if value is None or (key != "switches" and is_number(value)):
                continue
            if not (isinstance(value, dict) and all(map(is_number, value.values()))):
                return f"fabrics.{name}.{key} is not {'' if key == 'switches' else 'a number or '}a mapping of numbers"
    return None


def is_number(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) or isinstance(x, float) and math.isfinite(x)
