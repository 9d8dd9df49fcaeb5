"""The cabling plan in the validators' own formats (cabling_formats.py), read by their readers.

* `ptm-topology.dot`: Graphviz (the DOT library Cumulus PTM is built on) parses it;
* `layer1_topology.json`: read as Batfish's Jackson creators read it (Layer1Topology `edges`,
  Layer1Edge `node1`/`node2` required, Layer1Node `hostname`/`interfaceName` required;
  batfish projects/common/.../topology/Layer1{Topology,Edge,Node}.java);
* `ibdm.topo` with `ibnl/`: ibutils' ibdmchk builds the fabric from them and routes it.
Each file holds exactly the cables of cabling.csv, and each reader refuses a broken copy."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import GOLDEN, IN_CI

HAVE_DOT = shutil.which("dot") is not None
HAVE_IBDMCHK = shutil.which("ibdmchk") is not None
if IN_CI and not (HAVE_DOT and HAVE_IBDMCHK):
    raise RuntimeError("CI must have graphviz and ibutils' ibdmchk (`make test` installs them)")

FABRICS = sorted(p.parent.parent for p in GOLDEN.glob("*/*/validate/ptm-topology.dot"))
IB_FABRICS = [p for p in FABRICS if (p / "validate" / "ibdm.topo").exists()]


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.name}"


def cables(fabric: Path) -> set[frozenset[tuple[str, str]]]:
    """Every cable of cabling.csv; on Ethernet a node's end as its netdev, which addresses.csv gives
    for the switch port at the other end (what the node's LLDP agent reports; RDMA names on
    InfiniBand, which has no addresses.csv)."""
    node_end: dict[tuple[str, str], tuple[str, str]] = {}
    if (fabric / "addresses.csv").exists():
        with open(fabric / "addresses.csv", newline="") as fh:
            for r in csv.DictReader(fh):
                if r["role"] == "node" and r["peer_device"]:
                    node_end[(r["peer_device"], r["peer_interface"])] = (r["device"], r["interface"])
    with open(fabric / "cabling.csv", newline="") as fh:
        return {frozenset({node_end.get((r["z_device"], r["z_port"]), (r["a_device"], r["a_port"])),
                           (r["z_device"], r["z_port"])}) for r in csv.DictReader(fh)}


def test_every_fabric_has_its_validator_files() -> None:
    fabrics = sorted(p.parent for p in GOLDEN.glob("*/*/cabling.csv"))
    assert fabrics and fabrics == FABRICS
    ib = [f for f in fabrics if (f / "infiniband").is_dir()]
    assert ib and set(ib) <= set(IB_FABRICS)


# Cumulus PTM's DOT --------------------------------------------------------------------------------

def dot_edges(text: str) -> tuple[int, set[frozenset[tuple[str, str]]]]:
    """Graphviz parses the file (`dot -Tcanon`); the edges are read from the file itself."""
    run = subprocess.run(["dot", "-Tcanon"], input=text, capture_output=True, text=True, timeout=120)
    edges = set(frozenset({(a, ap), (z, zp)}) for a, ap, z, zp in
                re.findall(r'^  "([^"]+)":"([^"]+)" -- "([^"]+)":"([^"]+)";$', text, re.M))
    return run.returncode, edges


@pytest.mark.skipif(not HAVE_DOT, reason="needs graphviz")
@pytest.mark.parametrize("fabric", FABRICS, ids=_id)
def test_ptm_dot_parses_and_holds_every_cable(fabric: Path) -> None:
    text = (fabric / "validate" / "ptm-topology.dot").read_text()
    rc, edges = dot_edges(text)
    assert rc == 0
    assert edges == cables(fabric)
    assert text.count(" -- ") == len(edges)  # each cable once


@pytest.mark.skipif(not HAVE_DOT, reason="needs graphviz")
def test_ptm_dot_broken_is_refused() -> None:
    text = (FABRICS[0] / "validate" / "ptm-topology.dot").read_text()
    assert dot_edges(text.replace(" -- ", " -- -- ", 1))[0] != 0
    assert dot_edges(text.rstrip().rstrip("}"))[0] != 0


# Batfish's layer1_topology.json -------------------------------------------------------------------

class Layer1Error(ValueError):
    pass


def read_layer1(text: str) -> set[tuple[tuple[str, str], tuple[str, str]]]:
    """Directed edges, as Batfish's Layer1Topology/Layer1Edge/Layer1Node creators accept them."""
    data = json.loads(text)
    if not isinstance(data, dict) or not isinstance(data.get("edges"), list):
        raise Layer1Error("edges must be a list")
    out = set()
    for edge in data["edges"]:
        ends = []
        for key in ("node1", "node2"):
            node = edge.get(key) if isinstance(edge, dict) else None
            if not isinstance(node, dict):
                raise Layer1Error(f"missing {key}")
            for prop in ("hostname", "interfaceName"):
                if not isinstance(node.get(prop), str):
                    raise Layer1Error(f"Missing {prop}")
            ends.append((node["hostname"], node["interfaceName"]))
        out.add((ends[0], ends[1]))
    return out


@pytest.mark.parametrize("fabric", FABRICS, ids=_id)
def test_batfish_layer1_holds_every_cable_both_ways(fabric: Path) -> None:
    edges = read_layer1((fabric / "validate" / "layer1_topology.json").read_text())
    assert {frozenset(e) for e in edges} == cables(fabric)
    assert all((z, a) in edges for a, z in edges)


def test_batfish_layer1_broken_is_refused() -> None:
    text = (FABRICS[0] / "validate" / "layer1_topology.json").read_text()
    with pytest.raises(Layer1Error):
        read_layer1(text.replace('"interfaceName"', '"interface"', 1))
    with pytest.raises(Layer1Error):
        read_layer1(text.replace('"node2"', '"nodeB"', 1))


# ibutils' IBDM topology ---------------------------------------------------------------------------

def ibdmchk(validate: Path, topo: Path) -> tuple[int, str]:
    """ibdmchk's design mode: build the fabric from the topology file and the IBNL systems, assign
    LIDs, route it and look for credit loops. The Debian build (ibutils 1.5.7) ends with a
    segmentation fault after its report, on its own bundled examples too (Buffalo8.topo), so a
    complete report is what passes, not the exit code."""
    first = topo.read_text().split("\n", 1)[0].split()[1]
    env = {**os.environ, "IBDM_IBNL_PATH": str(validate / "ibnl")}
    run = subprocess.run(["ibdmchk", "-t", str(topo), "-n", f"{first}/U1", "-p", "1"], cwd=validate, env=env,
                         capture_output=True, text=True, timeout=300)
    return run.returncode, run.stdout + run.stderr


@pytest.mark.skipif(not HAVE_IBDMCHK, reason="needs ibutils' ibdmchk")
@pytest.mark.parametrize("fabric", IB_FABRICS, ids=_id)
def test_ibdm_topology_builds_the_planned_fabric(fabric: Path) -> None:
    validate = fabric / "validate"
    rc, out = ibdmchk(validate, validate / "ibdm.topo")
    assert "-E-" not in out, out[-3000:]
    planned = cables(fabric)
    devices = {d for cable in planned for d, _ in cable}
    sw_types = {f.stem for f in (validate / "ibnl").glob("*.ibnl") if "\nNODE SW " in f.read_text()}
    systems = dict(line.split()[::-1] for line in (validate / "ibdm.topo").read_text().splitlines()
                   if line and not line[0].isspace())
    switches = {d for d, kind in systems.items() if kind in sw_types}
    assert switches and set(systems) == devices
    node_ports = {(d, p) for cable in planned for d, p in cable if d not in switches}
    m = re.search(r"-I- Defined (\d+)/(\d+) systems/nodes", out)
    assert m, out[-3000:]
    assert (int(m[1]), int(m[2])) == (len(devices), len(switches) + len(node_ports))
    assert "-I- no credit loops found" in out
    assert rc in (0, -11, 139), out[-3000:]


@pytest.mark.skipif(not HAVE_IBDMCHK, reason="needs ibutils' ibdmchk")
def test_ibdm_topology_broken_is_refused(tmp_path: Path) -> None:
    validate = IB_FABRICS[0] / "validate"
    text = (validate / "ibdm.topo").read_text()
    lines = text.split("\n")
    first_cable = next(i for i, line in enumerate(lines) if " -> " in line)
    port, rest = lines[first_cable].split(" -> ")
    kind, system, remote = rest.split()
    other = f"P{int(remote[1:]) + 1}" if remote.startswith("P") else remote + "x"
    broken = {
        "a port cabled twice": text.replace(lines[first_cable], f"{port} -> {kind} {system} {other}", 1),
        "an unknown system type": text.replace(lines[0], "NODE99 " + lines[0].split()[1], 1),
    }
    for why, body in broken.items():
        topo = tmp_path / "broken.topo"
        topo.write_text(body)
        rc, out = ibdmchk(validate, topo)
        assert rc == 1 and "-E- Fail to parse topology file" in out, why
