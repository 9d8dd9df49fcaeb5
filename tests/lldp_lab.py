"""A built fabric for `fabgen verify` to check: lldpd in one network namespace per device, one veth
pair per cable of a (possibly miswired) cabling plan, each switch port sending its planned name as
its LLDP port id (the interface is `pN`, at most 15 bytes and no `/`; the vendor name is its alias
and port id), each node port named by its netdev. Every device's `lldpctl -f json` is saved as
<device>.json, the evidence an operator collects. Built on fabgen's own namespace lab (every
namespace and process removed by name and PID, also on failure)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import time
from pathlib import Path

from fabgen.emulate.lab import Lab, run


def cables(out: Path, fabric: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((out / fabric / "cabling.csv").read_text())))


def netdevs(out: Path, fabric: str) -> dict[tuple[str, str], str]:
    """(node, its port as the plan names it) -> the port's netdev, from addresses.csv and cabling.csv:
    a node port keeps its name wherever it is plugged."""
    path = out / fabric / "addresses.csv"
    rows = csv.DictReader(io.StringIO(path.read_text())) if path.exists() else []
    by_far = {(r["device"], r["peer_device"], r["peer_interface"]): r["interface"] for r in rows if r["role"] == "node"}
    return {(c["a_device"], c["a_port"]): by_far[(c["a_device"], c["z_device"], c["z_port"])]
            for c in cables(out, fabric) if (c["a_device"], c["z_device"], c["z_port"]) in by_far}


def collect(la: Lab, rows: list[dict[str, str]], names: dict[tuple[str, str], str], evidence: Path,
            silent: set[str] = frozenset(), settle: float = 4.0) -> None:  # type: ignore[assignment]
    """Build the lab from `rows` (cabling rows), run lldpd everywhere but on `silent` devices, wait
    for the neighbours to be seen (bounded), save each device's lldpctl JSON into `evidence`."""
    devices = sorted({r[k] for r in rows for k in ("a_device", "z_device")})
    ns = {d: la.namespace(k) for k, d in enumerate(devices)}
    la.neighbours(len(rows))
    count: dict[str, int] = {}
    aliases: dict[str, list[tuple[str, str]]] = {}
    for r in rows:
        ends = []
        for dev, port, _far, _far_port in ((r["a_device"], r["a_port"], r["z_device"], r["z_port"]),
                                           (r["z_device"], r["z_port"], r["a_device"], r["a_port"])):
            name = names.get((dev, port))
            if name is None:
                count[dev] = count.get(dev, 0) + 1
                name = f"p{count[dev]}"
                aliases.setdefault(dev, []).append((name, port))
            ends.append(name)
        run("ip", "-n", ns[r["a_device"]], "link", "add", ends[0], "type", "veth", "peer", "name", ends[1], "netns",
            ns[r["z_device"]])
        for dev, name in ((r["a_device"], ends[0]), (r["z_device"], ends[1])):
            run("ip", "-n", ns[dev], "link", "set", name, "up")
    evidence.mkdir(parents=True, exist_ok=True)
    socks = {}
    for dev in devices:
        if dev in silent:
            continue
        conf = la.dir / f"{dev}.lldpd.conf"
        lines = [f"configure system hostname {dev}", "configure lldp tx-interval 1"]
        lines += [f"configure ports {ifn} lldp portidsubtype local {port} description {port}"
                  for ifn, port in aliases.get(dev, [])]
        conf.write_text("\n".join(lines) + "\n")
        socks[dev] = la.dir / f"{dev}.lldpd.sock"
        la.process(ns[dev], ["lldpd", "-d", "-u", str(socks[dev]), "-O", str(conf)], la.dir / f"{dev}.lldpd.log")
    expected = {d: sum(1 for r in rows if d in (r["a_device"], r["z_device"]) and
                       (r["z_device"] if r["a_device"] == d else r["a_device"]) not in silent) for d in socks}
    deadline = time.monotonic() + 60
    while True:
        seen = {d: _neighbours(socks[d]) for d in socks}
        if all(len(seen[d]) >= expected[d] for d in socks) or time.monotonic() > deadline:
            break
        time.sleep(1)
    short = {d: (len(seen[d]), expected[d]) for d in socks if len(seen[d]) < expected[d]}
    assert not short, f"the lab: lldpd saw fewer neighbours than cabled within 60 s (seen, cabled): {short}"
    time.sleep(settle)  # a last round of frames: every port id as configured
    for d in socks:
        doc = _settled(socks[d], expected[d])
        vendor = dict(aliases.get(d, []))  # a switch names its local ports as the vendor does (no `/` in Linux)
        iface = doc.get("lldp", {}).get("interface", [])
        items = iface if isinstance(iface, list) else [{k: v} for k, v in iface.items()]
        renamed = [{vendor.get(k, k): v for k, v in item.items()} for item in items]
        doc["lldp"]["interface"] = renamed if len(renamed) != 1 else renamed[0]
        (evidence / f"{d}.json").write_text(json.dumps(doc, indent=2))


def _settled(sock: Path, expected: int) -> dict:
    """A device's lldpctl JSON once it lists every cabled neighbour (bounded: ten tries a second
    apart). A spine once showed no neighbour in CI, and its evidence then said no port was
    cabled: that is the lab failing, not the plan."""
    for _ in range(10):
        doc = _read(sock)
        if len(_neighbours_of(doc)) >= expected:
            return doc
        time.sleep(1)
    raise AssertionError(f"the lab: {sock.name} lists fewer than its {expected} cabled neighbours")


def _read(sock: Path) -> dict:
    """What lldpctl shows (JSON); an empty document when it answers nothing."""
    done = subprocess.run(["lldpctl", "-u", str(sock), "-f", "json"], capture_output=True, text=True, timeout=20)
    return json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip() else {"lldp": {}}


def _neighbours_of(doc: dict) -> list:
    lldp = doc.get("lldp", {})
    iface = lldp.get("interface", []) if isinstance(lldp, dict) else []
    return iface if isinstance(iface, list) else [iface]


def _neighbours(sock: Path) -> list:
    return _neighbours_of(_read(sock))
