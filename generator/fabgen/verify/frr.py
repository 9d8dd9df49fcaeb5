"""FRR's own state of SONiC and Cumulus switches held against the plan's (state.py).

A directory holds, per switch, the JSON FRR prints (vtysh), named after the device as the plan
names it: `<device>.bgp.json` (`show bgp ipv4 unicast summary json`; `show bgp summary json`'s
`ipv4Unicast` is read too), `<device>.routes.json` (`show ip route json`) and, where the switch
runs BFD, `<device>.bfd.json` (`show bfd peers json`). `fabgen emulate --save-state` writes exactly
these. Unnumbered peers and next hops are named by the switch's port, as a switch reports them.
Each file is untrusted: read within the bounds of untrusted.py, through the shapes below (a value
of the wrong type is refused at its key), one switch's files at a time.

Findings: bgp-session (a planned peer missing or not Established), bgp-asn (the switch's or a
peer's ASN not the plan's), bgp-unplanned (a peer the plan has not), ecmp-width (a prefix whose
selected BGP route has another number of active next hops than planned; 0 = no route), bfd (a
planned BFD peer missing or not up); no-state (a switch without files) is reported apart.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, PlainValidator, TypeAdapter
from pydantic_core import PydanticCustomError

from fabgen.spec.platforms import PLATFORMS
from fabgen.verify.cabling import Finding, Verdict
from fabgen.verify.state import Expected
from fabgen.verify.untrusted import Refused, Shape, load, validated

FRR_PLATFORMS = tuple(name for name, p in PLATFORMS.items() if p.runs_frr)
KINDS = ("bgp", "routes", "bfd")


class FrrError(Refused):
    """A file that is not FRR's JSON of its kind (located by path, and by key)."""


def _as_number(value: object) -> int | str:
    """FRR writes an ASN as a number, or as text (asdot, "internal"/"external" before the peering is up)."""
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        return value
    raise PydanticCustomError("as_number", "an AS number")


AsNumber = Annotated[Any, PlainValidator(_as_number)]


class Peer(Shape):
    state: str | None = None
    remote_as: AsNumber = Field(None, alias="remoteAs")
    hostname: str | None = None


class Summary(Shape):
    """`show bgp ipv4 unicast summary json`."""

    asn: AsNumber = Field(None, alias="as")
    peers: dict[str, Peer] = {}


class NextHop(Shape):
    active: bool | None = None


class Route(Shape):
    protocol: str | None = None
    selected: bool | None = None
    nexthops: list[NextHop] = []


class BfdPeer(Shape):
    interface: str | None = None
    peer: str | None = None
    status: str | None = None


_SHAPES: dict[str, tuple[TypeAdapter, str]] = {
    "bgp": (TypeAdapter(Summary), "FRR's `show bgp ipv4 unicast summary json`"),
    "routes": (TypeAdapter(dict[str, list[Route]]), "FRR's `show ip route json` (prefix -> list of routes)"),
    "bfd": (TypeAdapter(list[BfdPeer]), "FRR's `show bfd peers json` (a list of peers)"),
}


def check_dir(expects: list[Expected], folder: Path, known: set[str], read: Callable[[Path], str],
              v: Verdict) -> None:
    """Hold the state in `folder` against the plan, one switch's files in memory at a time (a folder of
    switches each at the bound of one file's JSON would not fit at once)."""
    files = files_of(folder, known)
    for e in expects:
        compare([e], {e.device: read_device(files.get(e.device, {}), read)}, v)


def files_of(folder: Path, known: set[str]) -> dict[str, dict[str, Path]]:
    """device -> kind -> its file; every file must be `<planned device>.<kind>.json` (all named before
    any is read)."""
    out: dict[str, dict[str, Path]] = {}
    for path in sorted(folder.iterdir()):
        name = path.name
        device, _, rest = name.partition(".")
        kind = rest.removesuffix(".json")
        if not name.endswith(".json") or kind not in KINDS:
            raise FrrError(f"{path}: not <device>.bgp.json, .routes.json or .bfd.json")
        if device not in known:
            raise FrrError(f"{path}: {device} is no FRR-based switch of the plan (name each file after its device)")
        out.setdefault(device, {})[kind] = path
    return out


def read_device(paths: dict[str, Path], read: Callable[[Path], str]) -> dict[str, Any]:
    """kind -> one switch's FRR state, read within bounds and its shape checked."""
    return {kind: shaped(load(read(path), str(path), FrrError), kind, str(path)) for kind, path in paths.items()}


def shaped(doc: Any, kind: str, where: str) -> Any:
    """FRR's JSON of `kind` read through its shape (a Summary, prefix -> routes, BFD peers); the
    already shaped pass as they are."""
    shape, what = _SHAPES[kind]
    if kind == "bgp" and isinstance(doc, dict) and "ipv4Unicast" in doc:  # `show bgp summary json`
        return validated(shape, doc["ipv4Unicast"], where, what, FrrError, ("ipv4Unicast",))
    return validated(shape, doc, where, what, FrrError)


def compare(expects: list[Expected], state: dict[str, dict[str, Any]], v: Verdict) -> None:
    """Add each FRR-based switch's findings to `v`."""
    for e in expects:
        if e.platform not in FRR_PLATFORMS:
            continue
        got = state.get(e.device)

        def add(kind: str, port: str, expected: str, found: str, e: Expected = e) -> None:  # this iteration's e
            v.findings.append(Finding(kind, e.fabric, e.device, port, expected, found, e.role))
        if not got:
            add("no-state", "", "FRR's JSON of the switch", "no file")
            continue
        v.states += 1
        if "bgp" in got:
            _bgp(e, shaped(got["bgp"], "bgp", f"{e.device}.bgp.json"), add)
        if "routes" in got:
            _routes(e, shaped(got["routes"], "routes", f"{e.device}.routes.json"), add)
        if e.bfd and "bfd" in got:
            _bfd(e, shaped(got["bfd"], "bfd", f"{e.device}.bfd.json"), add)
        missing = [k for k in ("bgp", "routes") if k not in got] + (["bfd"] if e.bfd and "bfd" not in got else [])
        if missing:
            v.notes.append(f"{e.device}: no {', '.join(f'{e.device}.{k}.json' for k in missing)}: not checked")


def _bgp(e: Expected, doc: Summary, add: Callable[..., None]) -> None:
    if doc.asn is not None and _int(doc.asn) != e.asn:
        add("bgp-asn", "", f"AS {e.asn}", f"AS {doc.asn}")
    peers = doc.peers
    for key, (far, asn) in sorted(e.peers.items()):
        p = peers.get(key)
        if p is None:
            add("bgp-session", key, f"Established with {far}", "no such peer")
            continue
        if p.state != "Established":
            add("bgp-session", key, f"Established with {far}", p.state or "no state")
        if p.remote_as is not None and _int(p.remote_as) != asn:
            add("bgp-asn", key, f"{far} at AS {asn}", f"AS {p.remote_as}")
    for key in sorted(set(peers) - set(e.peers)):
        add("bgp-unplanned", key, "no session", f"{peers[key].state or 'a peer'} with {peers[key].hostname or key}")


def _routes(e: Expected, doc: dict[str, list[Route]], add: Callable[..., None]) -> None:
    for prefix, want in e.widths.items():
        got = 0
        for route in doc.get(prefix, []):
            if route.protocol == "bgp" and route.selected:
                got = sum(1 for nh in route.nexthops if nh.active)
        if got != want:
            add("ecmp-width", prefix, f"{want} next hop(s)", f"{got} next hop(s)")


def _bfd(e: Expected, doc: list[BfdPeer], add: Callable[..., None]) -> None:
    status: dict[str, str] = {}
    for p in doc:
        for key in (p.interface, p.peer):
            if key is not None:
                status[key] = p.status or ""
    for key in sorted(e.bfd):
        if status.get(key) != "up":
            add("bfd", key, "BFD up", status.get(key) or "no BFD peer")


def _int(x: Any) -> int | None:
    try:
        return int(x)
    except (TypeError, ValueError):
        return None
