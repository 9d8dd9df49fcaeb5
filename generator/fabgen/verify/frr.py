"""FRR's own state of SONiC and Cumulus switches held against the plan's (state.py).

A directory holds, per switch, the JSON FRR prints (vtysh), named after the device as the plan
names it: `<device>.bgp.json` (`show bgp ipv4 unicast summary json`; `show bgp summary json`'s
`ipv4Unicast` is read too), `<device>.routes.json` (`show ip route json`) and, where the switch
runs BFD, `<device>.bfd.json` (`show bfd peers json`). `fabgen emulate --save-state` writes exactly
these. Unnumbered peers and next hops are named by the switch's port, as a switch reports them.

Findings: bgp-session (a planned peer missing or not Established), bgp-asn (the switch's or a
peer's ASN not the plan's), bgp-unplanned (a peer the plan has not), ecmp-width (a prefix whose
selected BGP route has another number of active next hops than planned; 0 = no route), bfd (a
planned BFD peer missing or not up); no-state (a switch without files) is reported apart.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from fabgen.verify.cabling import Finding, Verdict
from fabgen.verify.state import Expected

FRR_PLATFORMS = ("sonic", "nvue")
KINDS = ("bgp", "routes", "bfd")


class FrrError(ValueError):
    """A file that is not FRR's JSON of its kind (located by path)."""


def read_dir(folder: Path, known: set[str], read: Callable[[Path], str]) -> dict[str, dict[str, Any]]:
    """device -> kind -> parsed JSON; every file must be `<planned device>.<kind>.json`."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.iterdir()):
        name = path.name
        device, _, rest = name.partition(".")
        kind = rest.removesuffix(".json")
        if not name.endswith(".json") or kind not in KINDS:
            raise FrrError(f"{path}: not <device>.bgp.json, .routes.json or .bfd.json")
        if device not in known:
            raise FrrError(f"{path}: {device} is no FRR-based switch of the plan (name each file after its device)")
        try:
            doc = json.loads(read(path))
        except (ValueError, RecursionError) as exc:
            raise FrrError(f"{path}: not JSON ({exc})") from None
        out.setdefault(device, {})[kind] = _shaped(doc, kind, path)
    return out


def _shaped(doc: Any, kind: str, path: Path) -> Any:
    if kind == "bgp":
        if isinstance(doc, dict) and "ipv4Unicast" in doc:
            doc = doc["ipv4Unicast"]
        if not isinstance(doc, dict) or not isinstance(doc.get("peers", {}), dict):
            raise FrrError(f"{path}: not FRR's `show bgp ipv4 unicast summary json` (no peers object)")
        for key, peer in doc.get("peers", {}).items():
            if not isinstance(peer, dict):
                raise FrrError(f"{path}: peer {key} is not an object")
        return doc
    if kind == "routes":
        if not isinstance(doc, dict) or not all(isinstance(v, list) for v in doc.values()):
            raise FrrError(f"{path}: not FRR's `show ip route json` (prefix -> list of routes)")
        return doc
    if not isinstance(doc, list) or not all(isinstance(p, dict) for p in doc):
        raise FrrError(f"{path}: not FRR's `show bfd peers json` (a list of peers)")
    return doc


def compare(expects: list[Expected], state: dict[str, dict[str, Any]], v: Verdict) -> None:
    """Add each FRR-based switch's findings to `v`."""
    for e in expects:
        if e.platform not in FRR_PLATFORMS:
            continue
        got = state.get(e.device)

        def add(kind: str, port: str, expected: str, found: str) -> None:
            v.findings.append(Finding(kind, e.fabric, e.device, port, expected, found, e.role))
        if not got:
            add("no-state", "", "FRR's JSON of the switch", "no file")
            continue
        v.states += 1
        if "bgp" in got:
            _bgp(e, got["bgp"], add)
        if "routes" in got:
            _routes(e, got["routes"], add)
        if e.bfd and "bfd" in got:
            _bfd(e, got["bfd"], add)
        missing = [k for k in ("bgp", "routes") if k not in got] + (["bfd"] if e.bfd and "bfd" not in got else [])
        if missing:
            v.notes.append(f"{e.device}: no {', '.join(f'{e.device}.{k}.json' for k in missing)}: not checked")


def _bgp(e: Expected, doc: dict[str, Any], add: Callable[..., None]) -> None:
    if doc.get("as") is not None and _int(doc["as"]) != e.asn:
        add("bgp-asn", "", f"AS {e.asn}", f"AS {doc['as']}")
    peers = doc.get("peers", {})
    for key, (far, asn) in sorted(e.peers.items()):
        p = peers.get(key)
        if p is None:
            add("bgp-session", key, f"Established with {far}", "no such peer")
            continue
        if p.get("state") != "Established":
            add("bgp-session", key, f"Established with {far}", str(p.get("state", "no state")))
        if p.get("remoteAs") is not None and _int(p["remoteAs"]) != asn:
            add("bgp-asn", key, f"{far} at AS {asn}", f"AS {p['remoteAs']}")
    for key in sorted(set(peers) - set(e.peers)):
        add("bgp-unplanned", key, "no session", f"{peers[key].get('state', 'a peer')} with {peers[key].get('hostname', key)}")


def _routes(e: Expected, doc: dict[str, Any], add: Callable[..., None]) -> None:
    for prefix, want in e.widths.items():
        got = 0
        for route in doc.get(prefix, []):
            if isinstance(route, dict) and route.get("protocol") == "bgp" and route.get("selected"):
                got = sum(1 for nh in route.get("nexthops", []) if isinstance(nh, dict) and nh.get("active"))
        if got != want:
            add("ecmp-width", prefix, f"{want} next hop(s)", f"{got} next hop(s)")


def _bfd(e: Expected, doc: list[dict[str, Any]], add: Callable[..., None]) -> None:
    status: dict[str, str] = {}
    for p in doc:
        for key in (p.get("interface"), p.get("peer")):
            if isinstance(key, str):
                status[key] = str(p.get("status", ""))
    for key in sorted(e.bfd):
        if status.get(key) != "up":
            add("bfd", key, "BFD up", status.get(key) or "no BFD peer")


def _int(x: Any) -> int | None:
    try:
        return int(x)
    except (TypeError, ValueError):
        return None
