"""The verdict of fabgen verify: for a terminal, as a ticket (Markdown) or for a program (JSON).

JSON keys (docs/verify.md): `ok`, `checked` (planned cables held against evidence), `cabled`
(matching), `states` (switches whose FRR state was held against the plan), `configs` (switches
whose running config was held against the rendered one), `remediation` (per switch: `kind` and
`lines`, what makes its running config the plan's), `findings` (each:
`kind`, `fabric`, `device`, `port`, `expected`, `found`, `tier`), `repairs` (moves, a crossed pair
as one), `counts` (per fabric and per tier, per kind), `notes` (with a line for each fabric no
evidence was given for), `fabrics` (every fabric of the plan: held, no evidence given, or not
asked). Text and Markdown name every fabric too, in a section of their own.

Names in findings, repairs and notes come from the evidence, which is untrusted: text writes every
control character as its escape (a finding stays one line), Markdown escapes what would make a
table cell, a link, emphasis or HTML of it; JSON's own escaping keeps it valid.
"""

from __future__ import annotations

import json
from typing import Any

from fabgen.errors import printable
from fabgen.verify.cabling import APART, ISSUES, Verdict

# Markdown's punctuation that opens a cell, a link or image, code, emphasis or strikethrough: each
# backslash-escaped; HTML's three as entities, so that no tag is left even where the ticket is read as HTML.
_MARKDOWN = str.maketrans({**{c: "\\" + c for c in "\\`*_[]()|~"}, "<": "&lt;", ">": "&gt;", "&": "&amp;"})


def _md(text: str) -> str:
    """Evidence's text as Markdown text: one line, no markup of its own."""
    return printable(text).translate(_MARKDOWN)


def as_dict(v: Verdict) -> dict[str, Any]:
    return {"ok": not v.issues, "checked": v.checked, "cabled": v.ok, "states": v.states, "configs": v.configs,
            "findings": [f.as_dict() for f in v.findings], "repairs": v.repairs, "counts": v.counts(),
            "remediation": {d: {"kind": what, "lines": body} for d, (what, body) in sorted(v.remedies.items())},
            "notes": v.notes + _unheld(v), "fabrics": v.fabrics}


def _unheld(v: Verdict) -> list[str]:
    """The fabrics no evidence was given for, as notes: a program that reads only the notes still
    learns that their cables were not counted."""
    return [line for name, line in zip(sorted(v.fabrics), v.fabric_lines())
            if v.fabrics[name] == "no evidence given"]


def to_json(v: Verdict) -> str:
    return json.dumps(as_dict(v), indent=2, sort_keys=True) + "\n"


def _line(f: Any) -> str:
    """One finding, one line: a newline in a name from the evidence is written as its escape."""
    where = f"{f.device} {f.port}" if f.port else f.device  # a whole switch (no-config) names no port
    return printable(f"{f.fabric}: {where}: expected {f.expected}, found {f.found}")


def _body(body: list[str], indent: str) -> list[str]:
    """A remediation's lines, each printable on its own: a name from the running config cannot end the
    block or forge a line of the report."""
    return [indent + printable(line).replace("````", "\\`\\`\\`\\`") for line in body]


def _scope(v: Verdict) -> str:
    parts = []
    if v.checked or not (v.states or v.configs):
        parts.append(f"{v.checked} planned cables checked, {v.ok} as planned")
    if v.states:
        parts.append(f"the FRR state of {v.states} switch(es) checked")
    if v.configs:
        parts.append(f"the running config of {v.configs} switch(es) checked")
    return "; ".join(parts)


def to_text(v: Verdict) -> str:
    issues = v.issues
    out = [f"fabgen verify: {_scope(v)}, {len(issues)} finding(s)"]
    if v.fabrics:
        out += ["", f"fabrics ({len(v.fabrics)}):"] + [f"  {printable(line)}" for line in v.fabric_lines()]
    for kind in ISSUES:
        rows = [f for f in issues if f.kind == kind]
        if rows:
            out += ["", f"{kind} ({len(rows)}):"] + [f"  {_line(f)}" for f in rows]
    if v.repairs:
        out += ["", f"repairs ({len(v.repairs)}):"] + [f"  {printable(r)}" for r in v.repairs]
    for device, (what, body) in sorted(v.remedies.items()):
        out += ["", f"remediation of {printable(device)}, {what}:"] + _body(body, "  ")
    for kind in APART:
        rows = [f for f in v.findings if f.kind == kind]
        if rows:
            out += ["", f"{kind}, reported apart ({len(rows)}):"] + [f"  {_line(f)}" for f in rows[:50]]
            if len(rows) > 50:
                out.append(f"  ... and {len(rows) - 50} more")
    out += [f"note: {printable(n)}" for n in v.notes]
    return "\n".join(out) + "\n"


def to_markdown(v: Verdict) -> str:
    issues = v.issues
    out = [f"## fabgen verify: {_scope(v)}, {len(issues)} finding(s)", ""]
    if v.fabrics:
        out += ["### Fabrics", ""] + [f"- {_md(line)}" for line in v.fabric_lines()] + [""]
    if v.repairs:
        out += ["### Repairs", ""] + [f"- [ ] {_md(r)}" for r in v.repairs] + [""]
    for device, (what, body) in sorted(v.remedies.items()):
        out += [f"### Remediation of {_md(device)}", "", _md(what), "", "````"] + _body(body, "") + ["````", ""]
    if issues:
        out += ["### Findings", "", "| kind | fabric | device | port | expected | found |", "|---|---|---|---|---|---|"]
        out += ["| " + " | ".join(_md(x) for x in (f.kind, f.fabric, f.device, f.port, f.expected, f.found)) + " |"
                for f in issues]
        out.append("")
    counts = v.counts()
    if counts:
        out += ["### Counts", "", "| where | " + " | ".join(ISSUES + APART) + " |",
                "|---|" + "---:|" * len(ISSUES + APART)]
        for where, c in sorted(counts.items()):
            out.append(f"| {_md(where)} | " + " | ".join(str(c.get(k, 0)) for k in ISSUES + APART) + " |")
        out.append("")
    out += [f"> {_md(n)}" for n in v.notes]
    return "\n".join(out) + "\n"
