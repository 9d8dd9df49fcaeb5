"""The emulation's verdict for people: what ran, what passed, each failing device."""

from __future__ import annotations

from typing import Any


def text(r: Any) -> str:
    head = (f"fabgen emulate: {', '.join(r.fabrics)}: {r.routers} routers, {r.hosts} hosts, {r.links} links, "
            f"{r.seconds:.0f} s")
    out = [head, ""]
    routed = [f for f in r.fabrics if f not in r.evpn]
    if r.ok and routed:
        out.append("PASS: every BGP session and BFD peer up, every switch at the plan's ASN, every prefix at the "
                   "planned ECMP width in FRR's RIB and the kernel's FIB, every host port reaching the next host "
                   "of its rail")
    if r.ok and r.evpn:
        out.append(f"PASS ({', '.join(r.evpn)}): every BGP session (underlay and EVPN) up, every Ethernet segment "
                   "held by both leaves of its pair, every VNI up, every node's bond one LACP aggregate across its "
                   "pair, every node reaching the others' storage and in-band addresses and its gateway; again "
                   "with one leaf of each pair down")
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
    out += [f"note: {n}" for n in r.notes]
    if r.left_out:
        out.append(f"note: left out of the configs, not emulated: {', '.join(r.left_out)}")
    return "\n".join(out) + "\n"
