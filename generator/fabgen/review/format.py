"""The review as text or as one Markdown pull-request comment: the summary (compare.py's
Review), then the folded file diffs, each cut to its limit; `--output` keeps the whole review."""

from __future__ import annotations

import difflib
import html
import json
import re
from typing import Any

from fabgen.review.compare import LIST_LIMIT, Fold, Review, compact, file_kind, fold, moved_alike, natural, verdict


def _limited(items: list[str], limit: int = LIST_LIMIT) -> list[str]:
    if len(items) <= limit:
        return items
    return items[:limit] + [f"... and {len(items) - limit} more"]


def _link_bundles(links: list[tuple[str, str, str]]) -> list[str]:
    """Links grouped by their lower end's device: one line with the far devices as a hostlist and
    the count ('gpu04065 -- f-su128-leaf[1-8] (8 links)'), a single link with its ports."""
    bundles: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for fab, a, z in links:
        bundles.setdefault((fab, a.split()[0]), []).append((a, z))
    out = []
    for (fab, dev), ends in bundles.items():
        if len(ends) == 1:
            out.append(f"{fab}: {ends[0][0]} -- {ends[0][1]}")
            continue
        far = list(dict.fromkeys(z.split()[0] for _, z in ends))
        out.append(f"{fab}: {dev} -- {','.join(compact(far, counts=False))} ({len(ends)} links)")
    return out


def _summary_lines(rv: Review) -> list[tuple[str, list[str]]]:
    """(heading, bullet lines) for every non-empty part of the review."""
    parts: list[tuple[str, list[str]]] = []
    if rv.clusters:
        parts.append(("Different clusters (1)", [f"cluster: {rv.clusters[0]} -> {rv.clusters[1]}"]))
    if rv.design:
        parts.append((f"Fabric design changed ({len(rv.design)})",
                      [f"{fab}: {k}: {_shown(a)} -> {_shown(b)}" for fab, k, a, b in rv.design]))
    if rv.counts:
        parts.append((f"Sizes changed ({len(rv.counts)})",
                      [f"{fab}: {what}: {a} -> {b}" for fab, what, a, b in rv.counts]))
    parts += _device_parts(rv)
    parts += _link_parts(rv)
    parts += _address_parts(rv)
    if rv.intent:
        parts.append((f"Fabric intent changed ({len(rv.intent)})",
                      [f"{fab}: {k}: {json.dumps(a)} -> {json.dumps(b)}" for fab, k, a, b in rv.intent]))
    return parts


def _device_parts(rv: Review) -> list[tuple[str, list[str]]]:
    """_summary_lines' devices added, removed, extended and changed."""
    parts: list[tuple[str, list[str]]] = []
    if rv.added:
        parts.append((f"Devices added ({len(rv.added)})", _limited(compact(rv.added))))
    if rv.removed:
        parts.append((f"Devices removed ({len(rv.removed)})", _limited(compact(rv.removed))))
    if rv.extended:
        parts.append((f"Devices extended, additions only ({len(rv.extended)})", _limited(compact(rv.extended))))
    if rv.changed:
        parts.append((f"Devices changed ({len(rv.changed)})", _limited(compact(rv.changed))))
    return parts


def _link_parts(rv: Review) -> list[tuple[str, list[str]]]:
    """_summary_lines' links re-cabled, added and removed."""
    parts: list[tuple[str, list[str]]] = []
    if rv.recabled:
        parts.append((f"Links re-cabled ({len(rv.recabled)})",
                      _limited([f"{fab}: {a}: {before} -> {after}" for fab, a, before, after in rv.recabled])))
    if rv.links_added:
        parts.append((f"Links added ({len(rv.links_added)})", _limited(_link_bundles(rv.links_added))))
    if rv.links_removed:
        parts.append((f"Links removed ({len(rv.links_removed)})",
                      _limited([f"{fab}: {a} -- {z}" for fab, a, z in rv.links_removed])))
    return parts


def _address_parts(rv: Review) -> list[tuple[str, list[str]]]:
    """_summary_lines' ASNs, addresses and management addresses."""
    parts: list[tuple[str, list[str]]] = []
    if rv.asns:
        parts.append((f"ASNs changed ({len(rv.asns)})", _limited([f"{d}: {a} -> {b}" for d, a, b in rv.asns])))
    for word, rows in (("added", [(w, b) for w, a, b in rv.addresses if a is None]),
                       ("removed", [(w, a) for w, a, b in rv.addresses if b is None])):
        if rows:
            parts.append((f"Addresses {word} ({len(rows)})", _limited([f"{w}: {x}" for w, x in rows])))
    changed = [(w, a, b) for w, a, b in rv.addresses if a is not None and b is not None]
    if changed:
        parts.append((f"Addresses changed ({len(changed)})", _limited([f"{w}: {a} -> {b}" for w, a, b in changed])))
    for word, mgmt_rows in (("added", [(d, w, b) for d, w, a, b in rv.management if a is None]),
                            ("removed", [(d, w, a) for d, w, a, b in rv.management if b is None])):
        if mgmt_rows:
            parts.append((f"Management addresses {word} ({len(mgmt_rows)})",
                          _limited([f"{d} {w}: {x}" for d, w, x in mgmt_rows])))
    moved = [row for row in rv.management if row[2] is not None and row[3] is not None]
    if moved:
        parts.append((f"Management addresses changed ({len(moved)})", _limited(moved_alike(moved))))
    return parts


def _shown(value: Any) -> str:
    return "(default)" if value is None else str(value)


def _fold_heading(f: Fold) -> str:
    if len(f.paths) == 1:
        return f.paths[0]
    owners = ",".join(compact(sorted(f.owners, key=natural), counts=False))
    return f"{f.kind}: the same change on {len(f.owners)}: {owners}"


def _stat_lines(rv: Review) -> list[str]:
    """`--stat`: changed files per kind with lines added and removed, like git's."""
    from fabgen.review.sides import source_of

    kinds: dict[str, list[int]] = {}
    counted: dict[str, tuple[int, int]] = {}
    sides = {path: (a, b) for path, a, b in rv.files}
    for path, a, b in rv.files:
        kind = file_kind(path)
        source = source_of(path, a, b)
        if source not in counted:  # a stand-in counts as the file whose change it shares
            counted[source] = _line_counts(*sides[source])
        plus, minus = counted[source]
        k = kinds.setdefault(kind, [0, 0, 0])
        k[0], k[1], k[2] = k[0] + 1, k[1] + plus, k[2] + minus
    width = max((len(k) for k in kinds), default=0)
    return [f"{kind:<{width}}  {n:>6} file{'s' if n != 1 else ' '}  +{p} -{m}" for kind, (n, p, m) in kinds.items()]


def _line_counts(a: bytes | None, b: bytes | None) -> tuple[int, int]:
    """Lines added and removed between two versions of a file (binary files count as one line)."""
    try:
        la, lb = (a or b"").decode().splitlines(), (b or b"").decode().splitlines()
    except UnicodeDecodeError:
        return int(b is not None), int(a is not None)
    plus = minus = 0
    for line in difflib.unified_diff(la, lb, lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            plus += 1
        elif line.startswith("-") and not line.startswith("---"):
            minus += 1
    return plus, minus


TEXT_LIMIT = 5_000  # lines a text review prints before it keeps the file diffs for --output


def format_text(rv: Review, old_name: str, new_name: str, files: bool = True, stat: bool = False,
                limit: int | None = None, whole_to: str | None = None) -> str:
    """The review: its verdict first, the summary, then the folded file diffs; where those would
    take the review past `limit` lines they are left out and counted (`whole_to`: the file the
    whole review was written to)."""
    notes = "".join(f"WARNING: {n}\n" for n in rv.notes) + ("\n" if rv.notes else "")
    if not rv.differs:
        return f"{notes}no differences between {old_name} and {new_name}\n"
    # files edited since fabgen wrote them come before the verdict: the verdict reads them as fabgen's
    out = [notes + f"fabgen diff {old_name} {new_name}: {verdict(rv)}", ""]
    for heading, lines in _summary_lines(rv):
        out.append(f"{heading}:")
        out += [f"  {line}" for line in lines]
        out.append("")
    out.append(f"Files changed: {len(rv.files)}")
    sections = [f"\n== {_fold_heading(f)}\n{f.body}" for f in fold(rv)] if files and not stat else []
    body = sum(sec.count("\n") for sec in sections)
    cut = bool(sections and limit and len(out) + body > limit)
    if stat or cut:
        out += [f"  {line}" for line in _stat_lines(rv)]
    if cut:
        where = f"written to {whole_to}" if whole_to else "--output FILE writes them, --max-lines 0 prints them"
        out += ["", f"File diffs not shown: {body:,} lines in {len(sections):,} sections, more than "
                    f"--max-lines {limit:,} ({where})"]
        sections = []
    return "\n".join(out) + "\n" + "".join(sections)


MARKDOWN_LIMIT = 65_536  # characters in one GitHub comment


def format_markdown(rv: Review, old_name: str, new_name: str, files: bool = True, stat: bool = False,
                    limit: int | None = MARKDOWN_LIMIT) -> str:
    """The review as one pull-request comment: summary, then folded diffs until `limit` is reached,
    then a note saying what was left out (`--output FILE` writes it all)."""
    notes = "".join(f"> **Warning:** {n}\n" for n in rv.notes) + ("\n" if rv.notes else "")
    if not rv.differs:
        return f"{notes}**fabgen diff**: no differences between `{old_name}` and `{new_name}`.\n"
    out = [f"## fabgen diff: `{old_name}` → `{new_name}`", "", f"**Verdict:** {verdict(rv)}", "",
           *([notes] if notes else [])]
    for heading, lines in _summary_lines(rv):
        out.append(f"### {heading}")
        out += [f"- `{line}`" if not line.startswith("...") else f"- {line}" for line in lines]
        out.append("")
    out.append(f"**Files changed:** {len(rv.files)}")
    out.append("")
    if stat:
        out += ["```", *_stat_lines(rv), "```", ""]
    sections = []
    if files and not stat:
        for f in fold(rv):
            fence = "`" * max(3, 1 + max((len(r) for r in re.findall("`+", f.body)), default=0))
            sections.append("\n".join([f"<details><summary><code>{html.escape(_fold_heading(f))}</code></summary>", "",
                                        f"{fence}diff", f.body.rstrip("\n"), fence, "",
                                        "</details>", ""]) + "\n")
    return _within("\n".join(out) + "\n", sections, limit)


def _within(head: str, sections: list[str], limit: int | None) -> str:
    """head plus the sections that fit in `limit` characters, in order (a large one is skipped so the
    smaller ones after it still show), and a note naming what was left out."""
    if limit is None:
        return head + "".join(sections)
    room = limit - 2_000  # the note: its fixed words and up to ten names
    if len(head) > room:
        head = head[:head.rfind("\n", 0, room) + 1] + "\n(summary cut here)\n"
    text, used, skipped = [head], len(head), []
    for sec in sections:
        if used + len(sec) <= room:
            text.append(sec)
            used += len(sec)
        else:
            skipped.append(sec)
    if skipped:
        names = [_heading_of(sec)[:150] for sec in skipped[:10]]
        text.append(f"\n> **Truncated** to fit one comment: {len(skipped)} diff section(s), "
                    f"{sum(map(len, skipped))} characters, not shown"
                    + "".join(f"\n> - `{n}`" for n in names)
                    + (f"\n> - ... and {len(skipped) - 10} more" if len(skipped) > 10 else "")
                    + "\n>\n> `fabgen diff --format markdown --output FILE` writes the whole review.\n")
    return "".join(text)


def _heading_of(section: str) -> str:
    """A diff section's heading: the text of the <code> every section starts with."""
    m = re.search(r"<code>(.*?)</code>", section)
    assert m is not None
    return html.unescape(m.group(1))
