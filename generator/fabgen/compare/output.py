"""The comparison for people (a terminal table, Markdown) and for machines (JSON).

One list of rows (a label, then one cell per option) feeds both text formats, so they never
disagree; JSON is the data itself with sorted keys (docs/compare.md lists every key).
"""

from __future__ import annotations

import json
from typing import Any

SYMBOL = {"USD": "$", "EUR": "€", "GBP": "£"}


def to_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, sort_keys=True, allow_nan=False) + "\n"  # JSON has no Infinity


def _money(value: float | None, currency: str, digits: int = 0) -> str:
    if value is None:
        return "n/a"
    text = f"{value:,.{digits}f}"
    return f"{SYMBOL[currency]}{text}" if currency in SYMBOL else f"{text} {currency}"


def _size(n: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n:g} B"


def _seconds(s: float | None) -> str:
    if s is None:
        return "n/a"
    return f"{s * 1000:.2f} ms" if s < 1 else f"{s:.2f} s"


def _parts(counts: dict[str, int]) -> str:
    return "; ".join(f"{n:,} x {part}" for part, n in counts.items()) or "none"


def rows(data: dict[str, Any], fabric: dict[str, Any]) -> list[list[str]]:
    """Label, then one cell per option of one fabric."""
    cur, size = data["currency"], _size(data["allreduce_bytes"])
    opts = fabric["options"]

    def row(label: str, cell) -> list[str]:
        return [label, *(cell(o) for o in opts)]

    def total(o: dict[str, Any]) -> str:
        c = o["cost"]
        if not c["priced"]:
            return f"not priced: {', '.join(c['missing'])}"
        text = _money(c["total"], cur)
        return text if c["complete"] else f"≥ {text} (unpriced: {', '.join(c['missing'])})"

    def partial(o: dict[str, Any], text: str) -> str:
        if not o["cost"]["priced"]:
            return "-"
        return text if o["cost"]["complete"] else f"≥ {text}"

    def later(o: dict[str, Any]) -> str:
        c = o["cost_later"]
        if c is None:
            return "-"
        text = _money(c["total"] if c["priced"] else c["priced_subtotal"], cur)
        return text if c["complete"] else f"≥ {text} (unpriced: {', '.join(c['missing'])})"

    planned = [row("bought later, as the plan fills (not above)", later)] \
        if any(o.get("cost_later") for o in opts) else []
    compute = fabric.get("role", "compute") == "compute"
    estimates = [
        row("bus bandwidth per GPU (estimate)", lambda o: _gbs(o["estimate"]["busbw_per_gpu_gbs"])),
        row(f"all-reduce of {size} (estimate)", lambda o: _seconds(o["estimate"]["allreduce_seconds"])),
        row(f"all-reduce of {size} with SHARP (estimate)",
            lambda o: _seconds(o["estimate"]["allreduce_seconds_sharp"]) if o["kind"] == "infiniband" else "-"),
    ] if compute else []
    return [
        ["", *(o["label"] for o in opts)],
        row("switch model", lambda o: o["switch_model"] + (" (inventory)" if o["current"] else "")),
        row("network planes", lambda o: f"{o['planes']} x {o['link_speed_gbps']}G ports per NIC"
            if o["planes"] > 1 else f"1 ({o['link_speed_gbps']}G)"),
        *([row("scalable unit", lambda o: f"{o['scalable_unit']:,} nodes" + (
            f", {o['leaves_per_rail']} leaves per rail" if o["leaves_per_rail"] > 1 else ""))]
          if fabric["topology"] == "rail-optimized" else []),
        row("tiers", lambda o: str(o["tiers"])),
        row("switches: leaf / spine / core", lambda o: "{leaf} / {spine} / {core}".format(**o["switches"])),
        row("switches", lambda o: f"{o['switches']['total']:,}"),
        row("links: node-leaf / leaf-spine / spine-core",
            lambda o: " / ".join(f"{o['links'][t]:,}" for t in ("node-leaf", "leaf-spine", "spine-core"))),
        row("cables", lambda o: _parts(o["cables"])),
        row("transceivers", lambda o: _parts(o["transceivers"])),
        row("switch ports used", lambda o: f"{o['switch_ports']['used']:,} of {o['switch_ports']['total']:,}"),
        row("bisection bandwidth", lambda o: f"{o['bisection_bandwidth_gbps'] / 1000:,.1f} Tb/s"),
        row("oversubscription (leaf, spine)",
            lambda o: f"{o['oversubscription']['leaf']:g}:1, {o['oversubscription']['spine']:g}:1"),
        row("switch hops between units", lambda o: str(o["switch_hops"])),
        row("latency class", lambda o: o["estimate"]["latency_class"].split("; ", 1)[1]),
        row("needs that the others do not", lambda o: "; ".join(o["needs_only_this"]) or "nothing"),
        row("share of the BOM priced", lambda o: f"{o['cost']['priced_share']:.0%}"),
        row(f"capital cost ({'estimate' if data['prices_are_estimates'] else 'quoted'})", total),
        row("rank by cost per GPU-hour", lambda o: str(o["rank"]) if o["rank"] else "-"),
        row("per GPU", lambda o: partial(o, _money(o["cost"]["per_gpu"], cur))),
        row(f"per GPU-month ({data['amortization_months']} months)",
            lambda o: partial(o, _money(o["cost"]["per_gpu_month"], cur, 2))),
        row("per GPU-hour", lambda o: partial(o, _money(o["cost"]["per_gpu_hour"], cur, 3))),
        *planned,
        *estimates,
    ]


def _gbs(v: float | None) -> str:
    return "n/a" if v is None else f"{v:g} GB/s"


def _notes(data: dict[str, Any], fabric: dict[str, Any]) -> list[str]:
    eff = data["assumptions"]["efficiency"]
    out = [f"Prices: {data['price_list']} ({data['currency']})"
           + (", estimates, not a quote" if data["prices_are_estimates"] else "")
           + (f". {data['price_note']}" if data["price_note"] else "")]
    out += [f"{k} = {v}" for k, v in data["formulas"].items()]
    out.append("Efficiencies assumed: link " + f"{eff['link']:g}; fabric " +
               ", ".join(f"{k} {eff[k]:g}" for k in ("infiniband", "spectrum-x", "roce")) +
               " (where traffic crosses a spine layer)")
    out += [f"Source: {v}" for v in data["assumptions"]["sources"].values()]
    out += [f"Not priced (no total, rank or chart point): {o['label']}: switches "
            f"{'priced' if o['cost']['switches_priced'] else 'unpriced'}, {o['cost']['priced_share']:.0%} of the "
            f"BOM priced" for o in fabric["options"] if not o["cost"]["priced"]]
    out += [f"Not an option: {n['kind']} / {n['platform']} / {n['switch_model']}"
            f"{' / ' + str(n['planes']) + ' planes' if n['planes'] > 1 else ''}"
            f"{' / SU of ' + str(n['racks_per_unit']) + ' racks' if n['racks_per_unit'] else ''}: {n['reason']}"
            for n in fabric["not_options"]]
    return out


def _heading(name: str, f: dict[str, Any]) -> str:
    return (f"{name}: {f['nodes']:,} nodes, {f['gpus']:,} GPUs, {f['nics_per_node']} x {f['link_speed_gbps']}G "
            f"NICs per node, {f['topology']}, tiers {f['tiers_requested']}, "
            f"oversubscription {f['oversubscription_requested']:g}:1")


def to_markdown(data: dict[str, Any]) -> str:
    out = [f"# Fabric comparison: {data['cluster']}", ""]
    for name, f in data["fabrics"].items():
        out += [f"## {_heading(name, f)}", ""]
        table = rows(data, f)
        out.append("| " + " | ".join(_md(c) for c in table[0]) + " |")
        out.append("|" + "---|" * len(table[0]))
        out += ["| " + " | ".join(_md(c) for c in r) + " |" for r in table[1:]]
        out.append("")
        out += [f"- {_md(n)}" for n in _notes(data, f)]
        out.append("")
    return "\n".join(out)


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def to_text(data: dict[str, Any], width: int = 28, columns: int = 0) -> str:
    """Rows side by side; a long cell wraps inside its column; where the options do not fit in
    `columns` characters (the terminal's width; 0: no limit) they are shown a few at a time, each
    group a table of its own with the labels repeated."""
    import textwrap

    out = [f"Fabric comparison: {data['cluster']}", ""]
    for name, f in data["fabrics"].items():
        out += [_heading(name, f), ""]
        table = rows(data, f)
        label_w = max(len(r[0]) for r in table)
        col_w = max(12, min(width, max(len(c) for r in table for c in r[1:])))
        per = len(table[0]) - 1
        if columns:
            per = max(1, min(per, (columns - label_w - 2) // (col_w + 2)))
        for start in range(1, len(table[0]), per):
            part = [[r[0], *r[start:start + per]] for r in table]
            out += _table_text(part, label_w, col_w) + [""]
        out += textwrap.wrap("; ".join(_notes(data, f)[:1]), 100)
        out += [f"  {n}" for n in _notes(data, f)[1:]]
        out.append("")
    return "\n".join(out)


def _table_text(table: list[list[str]], label_w: int, col_w: int) -> list[str]:
    import textwrap

    out = []
    for r in table:
        cells = [textwrap.wrap(c, col_w) or [""] for c in r[1:]]
        for k in range(max(len(c) for c in cells)):
            label = r[0] if k == 0 else ""
            line = f"{label:<{label_w}}  " + "  ".join(f"{(c[k] if k < len(c) else ''):<{col_w}}" for c in cells)
            out.append(line.rstrip())
        if r is table[0]:
            out.append("-" * (label_w + 2 + (col_w + 2) * len(cells)))
    return out
