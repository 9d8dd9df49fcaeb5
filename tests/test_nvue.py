"""Spectrum-X (NVUE): the startup.yaml and the command script of every switch read back; they
say the same thing, and against the cabling plan every switch-to-switch port has adaptive
routing and a BGP unnumbered neighbor, host ports have the PFC watchdog (lossless mode only,
with the inventory's timers), RoCE runs in the inventory's mode with the congestion
thresholds of the shared QoS intent. Every file and every `nv set` line is checked against
NVIDIA's NVUE object model for the Cumulus Linux release the file's header names."""

from __future__ import annotations

import copy
import csv
import ipaddress
import re
import shutil
import subprocess
from pathlib import Path

import nvue_model
import pytest
from readback import nvue_ip, nvue_on, read_cabling, read_nvue

from conftest import IN_CI, INVENTORIES
from fabgen.inventory.platform import DEFAULT_VERSION
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


def release(header: dict) -> str:
    """'Cumulus Linux 5.14.0' -> '5.14'"""
    assert header["nvue-api-version"] == "nvue_v1" and header["model"] == "SN5600"
    return ".".join(header["version"].removeprefix("Cumulus Linux ").split(".")[:2])


def read_switch(base: Path) -> tuple[dict, list[str], str]:
    header, tree = read_nvue(base.with_suffix(".nvue.yaml"))
    script = base.with_suffix(".nvue.sh").read_text().splitlines()
    assert script[-1] == "nv config apply --confirm 600s --assume-yes"
    cmds = [line[len("nv set "):] for line in script if line.startswith("nv set ")]
    return tree, cmds, release(header)


def check_object_model(version: str, tree: dict, cmds: list[str], header: dict | None = None) -> None:
    """Zero unknown keys and bad values in the YAML and in the tree the `nv set` lines build."""
    assert nvue_model.problems(version, tree) == []
    if header is not None:
        assert nvue_model.header_problems(version, header) == []
    built: dict = {}
    for cmd in cmds:
        nvue_model.merge(built, nvue_model.parse_nv_set(version, "nv set " + cmd))
    assert nvue_model.problems(version, built) == []


def check_spectrum_x(out: Path, fabric: str, mode: str = "lossless", ar: bool = True,
                     thresholds: tuple[int, int, int] = (150000, 1500000, 100), version: str = DEFAULT_VERSION["nvue"],
                     watchdog: tuple[int, int] = (100, 2), model_sample: int = 6) -> dict[str, dict]:
    """watchdog: (polling interval, robustness) the inventory's timers make; every
    `model_sample`-th switch (and the first) is checked against the object model."""
    cabling = read_cabling(out, fabric)
    sw_dir = out / fabric / "switches"
    names = sorted(p.name[:-len(".nvue.yaml")] for p in sw_dir.glob("*.nvue.yaml"))
    trees = {}
    for k, name in enumerate(names):
        tree, cmds, found = read_switch(sw_dir / name)
        assert found == version
        # a secret is an Ansible lookup in the YAML and the variable itself in the script
        expected = [re.sub(r"\{\{ lookup\('ansible\.builtin\.env', '(\w+)'\) \}\}", r'"${\1}"', c)
                    for c in commands_of_yaml(tree)]
        assert cmds == expected, f"{name}: script and YAML differ"
        if k % model_sample == 0:
            check_object_model(version, tree, cmds)
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
        assert nvue_on(t["qos"]["roce"]) and nvue_on(t["router"]["bgp"])
        assert nvue_on(t["router"]["adaptive-routing"]) == ar
        if mode == "lossless":
            assert t["qos"]["pfc-watchdog"] == {"polling-interval": watchdog[0], "robustness": watchdog[1]}
        else:
            assert "pfc-watchdog" not in t["qos"], "lossy mode has no PFC, so no PFC watchdog"
        iface = t["interface"]
        (lo,) = nvue_ip(iface["lo"])["address"]
        assert lo not in loopbacks
        loopbacks.add(lo)
        bgp = t["vrf"]["default"]["router"]["bgp"]
        assert nvue_on(bgp)
        neighbors = bgp.get("neighbor", {})
        assert set(neighbors) == ends.get(name, set()), f"{name}: one BGP neighbor per switch-link end"
        for port in ends.get(name, ()):
            assert neighbors[port]["type"] == "unnumbered"
            assert bgp["peer-group"][neighbors[port]["peer-group"]]["remote-as"] == "external"
            has_ar = nvue_on(iface[port].get("router", {}).get("adaptive-routing", {}))
            assert has_ar == ar, f"{name} {port}: adaptive routing"
        for port in hosts.get(name, ()):
            if mode == "lossless":
                assert iface[port]["qos"]["pfc-watchdog"] == {"state": "enable"}
            else:
                assert "qos" not in iface[port]
            assert "router" not in iface[port]
        assert bgp["address-family"]["ipv4-unicast"]["multipaths"]["ebgp"] >= len(ends.get(name, ()))
    # the address plan is what the trees configure (switch links are unnumbered: none there)
    with open(out / fabric / "addresses.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["role"] != "node"]
    planned = {name: {r["interface"]: r["address"] for r in rows if r["device"] == name} for name in trees}
    assert len(rows) == sum(len(p) for p in planned.values())
    for name, t in trees.items():
        configured = {port: next(iter(nvue_ip(node)["address"])) for port, node in t["interface"].items()
                      if port != "eth0" and "address" in nvue_ip(node)}
        assert planned[name] == configured, name
    return trees


def test_example_reads_back(tmp_path: Path) -> None:
    render_to(INVENTORIES / "spectrumx-1su.yaml", tmp_path)
    trees = check_spectrum_x(tmp_path, "sx", version="5.14")  # the example keeps the older dialect
    leaf = trees["sx-su01-leaf1"]["interface"]
    # 800G cages split 2x for the 400G ports: swp1 is broken out, swp1s0 and swp1s1 carry links
    assert leaf["swp1"]["link"]["breakout"] == {"2x": {}}
    assert "swp1s0" in leaf and "swp1s1" in leaf and "swp64s1" in leaf


def test_two_plane_example_reads_back_plane_by_plane(tmp_path: Path) -> None:
    """Each network plane of the two-plane B300 unit is a Spectrum-X fabric of its own: every
    switch's tree matches NVIDIA's object model sample and the plane's cabling and address plan;
    loopbacks and ASNs differ between the planes."""
    render_to(INVENTORIES / "b300-spectrumx-2plane.yaml", tmp_path)
    planes = [check_spectrum_x(tmp_path, f"sx-plane{p}", model_sample=4) for p in (1, 2)]
    lo = [{next(iter(nvue_ip(t["interface"]["lo"])["address"])) for t in trees.values()} for trees in planes]
    asn = [{t["router"]["bgp"]["autonomous-system"] for t in trees.values()} for trees in planes]
    assert not lo[0] & lo[1] and not asn[0] & asn[1]


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
        _, tree = read_nvue(p)
        assert nvue_on(tree["router"]["adaptive-routing"])
        assert not any("router" in v for k, v in tree["interface"].items() if k != "lo")
        assert not any("breakout" in v.get("link", {}) for v in tree["interface"].values())


MANAGED = """    platform_version: "{version}"
    management:
      prefix: 192.168.9.0/24
      gateway: 192.168.9.1
      ntp: [10.0.0.1, 10.0.0.2]
      dns: [10.0.0.3]
      syslog: [10.0.0.4]
      domain: fab.example.net
      users:
        - {{name: netops, password_hash: {{env: FABGEN_NETOPS_HASH}}}}
    ethernet:
      host_addressing: leaf-subnet
      qos:
        mode: {mode}{watchdog}
"""
WATCHDOG = "\n        pfc_watchdog: {detection_ms: 600, poll_interval_ms: 200}"  # lossless only: lossy runs no PFC


@pytest.mark.parametrize("version,mode,tiers", [("5.13", "lossless", 2), ("5.14", "lossy", 3),
                                                ("5.15", "lossless", 3), ("5.18", "lossy", 2)])
def test_both_dialects_match_the_object_model(version: str, mode: str, tiers: int, tmp_path: Path) -> None:
    """Each release's dialect, with the management plane, leaf subnets, either QoS mode and
    non-default watchdog timers: every switch checked against that release's object model."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(INV.format(model="dgx-b200", count=40, models="", topology="rail-optimized",
                              extra=f"tiers: {tiers}\n    scalable_unit: 8\n" + MANAGED.format(
                                  version=version, mode=mode, watchdog=WATCHDOG if mode == "lossless" else "")))
    out = tmp_path / "out"
    render_to(inv, out)
    trees = check_spectrum_x(out, "f", mode=mode, version=version, watchdog=(200, 3), model_sample=1)
    new = version >= "5.15"
    for _name, t in trees.items():
        eth0 = t["interface"]["eth0"]
        assert nvue_ip(eth0)["gateway"] == {"192.168.9.1": {}}
        assert (eth0["vrf"] if new else eth0["ip"]["vrf"]) == "mgmt"
        ntp = t["system"]["ntp"]["server"] if new else t["service"]["ntp"]["mgmt"]["server"]
        assert set(ntp) == {"10.0.0.1", "10.0.0.2"}
        assert t["system"]["syslog"]["server"] == {"10.0.0.4": {"vrf": "mgmt"}}
        assert t["system"]["aaa"]["user"]["netops"]["role"] == "system-admin"
        groups = t["vrf"]["default"]["router"]["bgp"].get("peer-group", {})
        for g in groups.values():
            assert g["bfd"] == ({"profile": "FABRIC"} if new else {"enable": "on"})
    addresses = sorted(ipaddress.ip_interface(next(iter(nvue_ip(t["interface"]["eth0"])["address"]))).ip
                       for t in trees.values())
    assert len(set(addresses)) == len(trees) and ipaddress.ip_address("192.168.9.1") not in addresses


def test_object_model_check_rejects_unknown_keys_and_bad_values(tmp_path: Path) -> None:
    """The check is not a rubber stamp: a key the model lacks, a value outside an enum, a key
    of the other dialect and a bad `nv set` line are each reported."""
    render_to(INVENTORIES / "spectrumx-1su.yaml", tmp_path)
    base = sorted((tmp_path / "sx" / "switches").glob("*.nvue.yaml"))[0]
    tree, cmds, version = read_switch(base.with_name(base.name[:-len(".nvue.yaml")]))
    check_object_model(version, tree, cmds)

    unknown = copy.deepcopy(tree)
    unknown["qos"]["roce"]["lossless-mode"] = "on"
    assert any("lossless-mode: unknown key" in p for p in nvue_model.problems(version, unknown))
    bad_enum = copy.deepcopy(tree)
    bad_enum["qos"]["roce"]["mode"] = "lossles"
    assert any("qos.roce.mode" in p for p in nvue_model.problems(version, bad_enum))
    other_dialect = copy.deepcopy(tree)
    other_dialect["router"]["adaptive-routing"] = {"state": "enabled"}
    assert any("adaptive-routing.state: unknown key" in p for p in nvue_model.problems(version, other_dialect))
    with pytest.raises(ValueError, match="not a key here"):
        nvue_model.parse_nv_set(version, "nv set qos roce lossless-mode on")
    built = nvue_model.parse_nv_set(version, "nv set router adaptive-routing enable maybe")
    assert nvue_model.problems(version, built)


QOS_INVENTORY = """\
version: 1
cluster: q
node_groups:
  - {{name: gpu, model: dgx-b300, count: 4}}
fabrics:
  - name: sx
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    switch_model: sn5600
    node_groups: [gpu]
    ethernet:
      qos: {{{qos}}}
"""


@pytest.mark.parametrize("key,value", [("roce_dscp", 24), ("roce_priority", 4), ("cnp_dscp", 46), ("cnp_priority", 7),
                                       ("roce_bandwidth_percent", 60)])
def test_a_qos_value_the_roce_profile_fixes_is_refused_on_nvue(key: str, value: int, tmp_path: Path) -> None:
    """Cumulus's RoCE profile fixes the RoCE and CNP DSCPs, priorities and RoCE's bandwidth share:
    another value would reach the hosts and not the switches (RoCE lossy on the wire). Refused at
    its line, nothing written; the profile's own values render, and host and switch agree."""
    import subprocess
    import sys

    inv = tmp_path / "q.yaml"
    inv.write_text(QOS_INVENTORY.format(qos=f"{key}: {value}"))
    res = subprocess.run([sys.executable, "-m", "fabgen", "render", str(inv), "-o", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "q.yaml:13:" in res.stderr and f"qos.{key}" in res.stderr, res.stderr
    assert "RoCE profile" in res.stderr and not (tmp_path / "out").exists()
    from fabgen.inventory.platform import NVUE_ROCE_PROFILE

    inv.write_text(QOS_INVENTORY.format(qos=f"{key}: {NVUE_ROCE_PROFILE[key]}"))
    render_to(inv, tmp_path / "ok")
    _, leaf = read_nvue(tmp_path / "ok" / "sx" / "switches" / "sx-su01-leaf1.nvue.yaml")
    assert leaf["qos"]["roce"]["mode"] == "lossless"
    nccl = (tmp_path / "ok" / "host-groups" / "gpu" / "nccl.env").read_text()
    assert f"NCCL_IB_TC={NVUE_ROCE_PROFILE['roce_dscp'] * 4 + 2}" in nccl


@pytest.mark.parametrize("version", ["5.14", "5.16"])
def test_the_lossless_buffer_share_is_the_traffic_pools_nvidia_writes(version: str, tmp_path: Path) -> None:
    """lossless_buffer_percent: 90 gives every switch NVIDIA's generator's two traffic pools (RoCE
    lossless 90%, default lossy 10%: net-configurator's gl-plane1-01-config.sh) in the YAML and the
    script, accepted by the release's object model, which refuses a pool share past 100; without
    the key no pool is written (the RoCE profile's stand)."""
    inv = tmp_path / "q.yaml"
    inv.write_text(QOS_INVENTORY.format(qos="lossless_buffer_percent: 90").replace(
        "    platform: nvue\n", f"    platform: nvue\n    platform_version: '{version}'\n"))
    render_to(inv, tmp_path / "out")
    switches = sorted((tmp_path / "out" / "sx" / "switches").glob("*.nvue.yaml"))
    assert switches
    for path in switches:
        header, tree = read_nvue(path)
        assert nvue_model.release(header) == version
        assert tree["qos"]["traffic-pool"] == {"default-lossy": {"memory-percent": 10},
                                               "roce-lossless": {"memory-percent": 90}}
        assert nvue_model.problems(version, tree) == []
        script = path.with_name(path.name.replace(".yaml", ".sh")).read_text()
        assert "nv set qos traffic-pool roce-lossless memory-percent 90\n" in script
    tree["qos"]["traffic-pool"]["roce-lossless"]["memory-percent"] = 150
    assert any("memory-percent" in p for p in nvue_model.problems(version, tree))
    inv.write_text(QOS_INVENTORY.format(qos="mode: lossless"))
    render_to(inv, tmp_path / "plain")
    _, leaf = read_nvue(tmp_path / "plain" / "sx" / "switches" / "sx-su01-leaf1.nvue.yaml")
    assert "traffic-pool" not in leaf["qos"]


@pytest.mark.parametrize("change,why,eos", [
    ("mode: lossy, lossless_buffer_percent: 90", "lossy mode has no lossless pool", False),
    ("lossless_buffer_percent: 100", "must be at most 99", False),
    ("lossless_buffer_percent: 90", "eos switches take none from fabgen", True)])
def test_a_lossless_buffer_share_nvue_cannot_take_is_refused_at_its_line(change: str, why: str, eos: bool,
                                                                          tmp_path: Path) -> None:
    """Only NVUE in lossless mode has the pools; a share is a whole percentage below 100."""
    import subprocess
    import sys

    inv = tmp_path / "q.yaml"
    text = QOS_INVENTORY.format(qos=change)
    if eos:
        text = text.replace("kind: spectrum-x", "kind: roce").replace("platform: nvue", "platform: eos").replace(
            "sn5600", "arista-7060x5")
    inv.write_text(text)
    res = subprocess.run([sys.executable, "-m", "fabgen", "render", str(inv), "-o", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "q.yaml:13:" in res.stderr and why in res.stderr, res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "out").exists()
