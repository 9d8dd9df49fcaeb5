"""Slurm topology files read back: every compute node under exactly one level-1 switch, every
referenced switch defined, one root per fabric, and the grouping follows the cabling."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from conftest import INVENTORIES
from readback import read_cabling
from fabgen.hostlist import compress, expand
from fabgen.pipeline import render_to


def read_conf(path: Path) -> dict[str, dict[str, list[str]]]:
    switches = {}
    for line in path.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"SwitchName=(\S+) (Nodes|Switches)=(\S+)", line)
        assert m, f"not topology.conf syntax: {line}"
        assert m.group(1) not in switches
        switches[m.group(1)] = {m.group(2): expand(m.group(3))}
    return switches


@pytest.mark.parametrize("case,fabric", [("superpod-4su", "compute"), ("ib-3tier", "ib"),
                                         ("fattree-2to1", "fabric"), ("ib-storage", "ib")])
def test_topology_follows_the_cabling(case: str, fabric: str, tmp_path: Path) -> None:
    render_to(INVENTORIES / f"{case}.yaml", tmp_path)
    conf = read_conf(tmp_path / "slurm" / "topology.conf")
    cabling = read_cabling(tmp_path, fabric)
    leaves_of: dict[str, set[str]] = {}
    for r in cabling:
        if r["tier"] == "node-leaf":
            leaves_of.setdefault(r["a_device"], set()).add(r["z_device"])
    compute = {h for h, leaves in leaves_of.items() if not any("-storage-leaf" in x for x in leaves)}
    placed = [n for sw in conf.values() for n in sw.get("Nodes", [])]
    assert sorted(placed) == sorted(compute), "every compute node exactly once, no storage node"
    children = [c for sw in conf.values() for c in sw.get("Switches", [])]
    assert set(children) <= set(conf) and len(children) == len(set(children))
    roots = set(conf) - set(children)
    assert len(roots) == 1
    # nodes under one level-1 switch share their leaves: one hop apart on every rail
    for sw in conf.values():
        nodes = sw.get("Nodes")
        if nodes is None:
            continue
        assert len({frozenset(leaves_of[n]) for n in nodes}) == 1
    doc = yaml.safe_load((tmp_path / "slurm" / "topology.yaml").read_text())
    assert doc[0]["topology"] == f"{fabric}-tree" and doc[0]["cluster_default"] is True
    tree = {s["switch"]: s for s in doc[0]["tree"]["switches"]}
    assert set(tree) == set(conf)
    block = doc[1]["block"]
    sizes = block["block_sizes"]
    assert all(b == a * 2 ** (b // a).bit_length() // 2 and (b // a) & (b // a - 1) == 0
               for a, b in zip(sizes, sizes[1:])), "successive block sizes: power-of-two multiples"
    assert sorted(n for b in block["blocks"] for n in expand(b["nodes"])) == sorted(compute)


def test_hostlist_round_trip() -> None:
    names = ["dgx001", "dgx002", "dgx003", "dgx010", "b200-01", "login", "dgx011"]
    expr = compress(names)
    assert expr == "dgx[001-003,010-011],b200-01,login"
    assert sorted(expand(expr)) == sorted(names)
