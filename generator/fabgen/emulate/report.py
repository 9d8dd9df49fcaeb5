"""The emulation's verdict for people: what ran, what passed, each failing device."""

from __future__ import annotations

from typing import Any


def text(r: Any) -> str:
    head = (f"fabgen emulate: {', '.join(r.fabrics)}: {r.routers} routers, {r.hosts} hosts, {r.links} links, "
            f"{r.seconds:.0f} s")
    out = [head, ""]
    routed = [f for f in r.fabrics if f not in r.evpn and f not in getattr(r, "overlay", [])]
    if r.ok and routed:
        out.append("PASS: every BGP session and BFD peer up, every switch at the plan's ASN, every prefix at the "
                   "planned ECMP width in FRR's RIB and the kernel's FIB, every host port reaching the next host "
                   "of its rail from its own address and unbound (through the main table, as a mount), every node "
                   "of a storage fabric reaching a storage server unbound")
    if r.ok and r.evpn:
        out.append(f"PASS ({', '.join(r.evpn)}): every BGP session (underlay and EVPN) up, every Ethernet segment "
                   "held by both leaves of its pair, every VNI up, every node's bond one LACP aggregate across its "
                   "pair, every node reaching the others' storage and in-band addresses and its gateway; again "
                   "with one leaf of each pair down")
    if r.ok and getattr(r, "overlay", None):
        out.append(f"PASS ({', '.join(r.overlay)}): every BGP session (underlay and the overlay's EVPN between "
                   "loopbacks) up, every VNI up, every kept node's GPU ports resolving the anycast gateway, every "
                   "port's MAC announced to the other leaves (EVPN type-2), every port reaching another node's "
                   "port on another rail over VXLAN; again with a leaf of each plane down")
    if not r.ok:
        out.append(f"FAIL: {len(r.findings)} finding(s) on {len(r.failed)} device(s): {', '.join(r.failed[:20])}"
                   + (" ..." if len(r.failed) > 20 else ""))
        out.append("")
        if r.suspects:
            out.append("Most likely at fault:")
            out += [f"  {d}: {why}" for d, why in r.suspects[:10]]
            out.append("")
            out.append("Every finding:")
        for f in r.findings:
            out.append(f"  {f.device}: {f.check}: {f.message}")
    out.append("")
    if r.checked:
        out.append("Checked, device by device (sessions established of planned; prefixes at the planned width "
                   "in FRR's RIB and the kernel's FIB; pings that passed)" + (":" if not _failed_over(r) else
                   ", before and after --fail (a width that changed: prefix before -> after, the plan's after):"))
        out += [f"  {dev}: {line}" for dev, line in _devices(r.checked)]
        out.append("")
    out += [f"note: {n}" for n in r.notes]
    if r.left_out:
        out.append(f"note: left out of the configs, not emulated: {', '.join(r.left_out)}")
    return "\n".join(out) + "\n"


SHOWN = 8  # prefixes named per device and line: the text summarises, the JSON holds every prefix


def _failed_over(r: Any) -> bool:
    """Whether --fail ran: some device has an `after` phase."""
    return any("after" in phase for d in r.checked.values()
               for phase in (d.get("sessions", {}), *d.get("widths", {}).values()))


def _devices(checked: dict[str, Any]) -> list[tuple[str, str]]:
    """One line per device: what was checked on it and what it held, before (and after) --fail."""
    out = []
    for dev, c in sorted(checked.items()):
        parts = []
        for phase in ("before", "after"):
            words = []
            s = c.get("sessions", {}).get(phase)
            if s:
                words.append(f"{s['established']} of {s['planned']} sessions")
            widths = {p: w[phase] for p, w in c.get("widths", {}).items() if phase in w}
            if widths:
                good = sum(1 for w in widths.values() if w["planned"] == w["rib"] == w["fib"])
                words.append(f"{good} of {len(widths)} prefixes at the planned width")
            reach = [x for x in c.get("reach", []) if phase in x]
            if reach:
                unbound = sum(1 for x in reach if x["from"] is None)
                passed = sum(1 for x in reach if x[phase]["ok"])
                words.append(f"{passed} of {len(reach)} pings ({len(reach) - unbound} from a port's address, "
                             f"{unbound} unbound)")
            if words:
                parts.append(("after --fail: " if phase == "after" else "") + ", ".join(words))
        changed = [f"{p} {w['before']['rib']} -> {w['after']['rib']} (plan {w['after']['planned']})"
                   for p, w in sorted(c.get("widths", {}).items()) if "after" in w and "before" in w
                   and (w["before"]["rib"], w["before"]["planned"]) != (w["after"]["rib"], w["after"]["planned"])]
        if changed:
            parts.append("widths: " + ", ".join(changed[:SHOWN]) + (
                f" and {len(changed) - SHOWN} more (--format json lists every prefix)" if len(changed) > SHOWN
                else ""))
        out.append((dev, "; ".join(parts) or "nothing"))
    return out
