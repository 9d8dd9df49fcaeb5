"""Spectrum-X (NVUE): the startup.yaml and the command script of every switch read back; they
say the same thing, and against the cabling plan every switch-to-switch port has adaptive
routing and a BGP unnumbered neighbor, host ports have the PFC watchdog, RoCE runs in the
inventory's mode with the congestion thresholds of the shared QoS intent."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import INVENTORIES, IN_CI
from readback import read_cabling
from fabgen.pipeline import render_to


def commands_of_yaml(node, path=()) -> list[str]:
    """An independent flattening of an NVUE tree: leaves `{}` are path words."""
    out = []
    for key, value in node.items():
        here = (*path, str(key))
        if isinstance(value, dict) and value:
            out += commands_of_yaml(value, here)
        elif isinstance(value, dict):
            out.append(" ".join(here))
        else:
            out.append(" ".join((*here, str(value))))
    return out


def read_switch(base: Path) -> tuple[dict, list[str]]:
    doc = yaml.safe_load(base.with_suffix(".nvue.yaml").read_text())
    assert isinstance(doc, list) and list(doc[0]) == ["set"]
    script = base.with_suffix(".nvue.sh").read_text().splitlines()
    assert script[-1] == "nv config apply --assume-yes"
    cmds = [line[len("nv set "):] for line in script if line.startswith("nv set ")]
    return doc[0]["set"], cmds


def check_spectrum_x(out: Path, fabric: str, mode: str = "lossless", ar: bool = True,
                     thresholds: tuple[int, int, int] = (150000, 1500000, 100)) -> dict[str, dict]:
    cabling = read_cabling(out, fabric)
    sw_dir = out / fabric / "switches"
    names = sorted(p.name[:-len(".nvue.yaml")] for p in sw_dir.glob("*.nvue.yaml"))
    trees = {}
    for name in names:
        tree, cmds = read_switch(sw_dir / name)
        assert cmds == commands_of_yaml(tree), f"{name}: script and YAML differ"
        trees[name] = tree
    ends: dict[str, set[str]] = {}
    hosts: dict[str, set[str]] = {}
    for r in cabling:
        if r["tier"] == "node-leaf":
            hosts.setdefault(r["z_device"], set()).add(r["z_port"])
        else:
            ends.setdefault(r["a_device"], set()).add(r["a_port"])
            ends.setdefault(r["z_device"], set()).add(r["z_port"])
    assert set(trees) == set(ends) | set(hosts)
    loopbacks = set()
    for name, t in trees.items():
        assert t["system"]["hostname"] == name
        assert t["qos"]["roce"]["mode"] == mode
        tc = t["qos"]["congestion-control"]["default-global"]["traffic-class"]["3"]
        assert (tc["min-threshold"], tc["max-threshold"], tc["probability"]) == thresholds
        assert t["router"]["adaptive-routing"]["enable"] == ("on" if ar else "off")
        iface = t["interface"]
        (lo,) = iface["lo"]["ip"]["address"]
        assert lo not in loopbacks
        loopbacks.add(lo)
        bgp = t["vrf"]["default"]["router"]["bgp"]
        neighbors = bgp.get("neighbor", {})
        assert set(neighbors) == ends.get(name, set()), f"{name}: one BGP neighbor per switch-link end"
        for port in ends.get(name, ()):
            assert neighbors[port]["type"] == "unnumbered"
            assert bgp["peer-group"][neighbors[port]["peer-group"]]["remote-as"] == "external"
            has_ar = iface[port].get("router", {}).get("adaptive-routing", {}).get("enable") == "on"
            assert has_ar == ar, f"{name} {port}: adaptive routing"
        for port in hosts.get(name, ()):
            assert "pfc-watchdog" in iface[port]["qos"]
            assert "router" not in iface[port]
        assert bgp["address-family"]["ipv4-unicast"]["multipaths"]["ebgp"] >= len(ends.get(name, ()))
    return trees


def test_example_reads_back(tmp_path: Path) -> None:
    render_to(INVENTORIES / "spectrumx-1su.yaml", tmp_path)
    trees = check_spectrum_x(tmp_path, "sx")
    leaf = trees["sx-su01-leaf1"]["interface"]
    # 800G cages split 2x for the 400G ports: swp1 is broken out, swp1s0 and swp1s1 carry links
    assert leaf["swp1"]["link"]["breakout"] == {"2x": {}}
    assert "swp1s0" in leaf and "swp1s1" in leaf and "swp64s1" in leaf


def test_scripts_pass_shellcheck(tmp_path: Path) -> None:
    if not shutil.which("shellcheck"):
        if IN_CI:
            raise RuntimeError("CI must have shellcheck: `make test` installs it")
        pytest.skip("shellcheck not installed")
    render_to(INVENTORIES / "spectrumx-1su.yaml", tmp_path)
    scripts = sorted((tmp_path / "sx" / "switches").glob("*.nvue.sh"))
    run = subprocess.run(["shellcheck", "-s", "bash", *map(str, scripts[:4])], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout


INV = """version: 1
cluster: sim
node_groups:
  - {{name: n, model: {model}, count: {count}}}
{models}fabrics:
  - name: f
    kind: spectrum-x
    platform: nvue
    topology: {topology}
    switch_model: sn5600
    node_groups: [n]
    {extra}
"""
NIC800 = """node_models:
  cx8:
    gpus: 8
    nics: [{rdma: mlx5_0, speed: 800}, {rdma: mlx5_1, speed: 800}, {rdma: mlx5_2, speed: 800},
           {rdma: mlx5_3, speed: 800}]
"""


@pytest.mark.parametrize("shape", ["three-tier", "lossy-fat-tree", "subnet-2tier"])
def test_other_shapes_read_back(shape: str, tmp_path: Path) -> None:
    extra = {"three-tier": "tiers: 3",
             "lossy-fat-tree": "ethernet: {qos: {mode: lossy, ecn: {min_threshold_kbytes: 100, "
                               "max_threshold_kbytes: 400, probability: 10}}}",
             "subnet-2tier": "ethernet: {host_addressing: leaf-subnet}"}[shape]
    inv = tmp_path / "inv.yaml"
    inv.write_text(INV.format(model="dgx-b200", count=72 if shape != "three-tier" else 40, models="",
                              topology="fat-tree" if shape == "lossy-fat-tree" else "rail-optimized", extra=extra))
    out = tmp_path / "out"
    result = render_to(inv, out)
    if shape == "lossy-fat-tree":
        check_spectrum_x(out, "f", mode="lossy", thresholds=(100000, 400000, 10))
    else:
        check_spectrum_x(out, "f")
    assert result.fabrics["f"].plan.tiers == (3 if shape == "three-tier" else 2)


def test_adaptive_routing_on_800g_warns_and_stays_off_the_ports(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(INV.format(model="cx8", count=40, models=NIC800, topology="rail-optimized",
                              extra="ethernet: {adaptive_routing: true}"))
    out = tmp_path / "out"
    result = render_to(inv, out)
    warnings = result.contexts["f"].summary.warnings
    assert any("ethernet.adaptive_routing (line 17, column 34)" in w and "800G" in w for w in warnings), warnings
    # the inventory asked for it: on globally, but on no 800G port; no breakout at 800G
    for p in sorted((out / "f" / "switches").glob("*.nvue.yaml")):
        tree = yaml.safe_load(p.read_text())[0]["set"]
        assert tree["router"]["adaptive-routing"]["enable"] == "on"
        assert not any("router" in v for k, v in tree["interface"].items() if k != "lo")
        assert not any("breakout" in v.get("link", {}) for v in tree["interface"].values())
