"""Host side read back and cross-checked against the rendered switch files: the host's PFC
priority is the switches' no-drop priority, its ToS maps through the switches' DSCP map to
that class, NCCL_IB_HCA is exactly the node's compute NICs in rail order, every host
address sits in its leaf port's /31 or subnet; the scripts pass shellcheck and run with
--dry-run on a machine without those NICs."""

from __future__ import annotations

import ipaddress
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from readback import nvue_ip, read_cabling, read_fabric, read_nvue

from conftest import IN_CI, INVENTORIES
from fabgen.pipeline import render_to
from fabgen.targets.hosts import NCCL_KNOWN, TABLES

NOT_NCCL = {"NCCL_IB_CUDA_SUPPORT", "NCCL_LL_THRESHOLD", "NCCL_TREE_THRESHOLD", "NCCL_SINGLE_RING_THRESHOLD",
            "NCCL_NVLINK_ENABLE", "NCCL_IB_ENABLE", "NCCL_FALLBACK_DISABLED"}


def read_env(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            key, value = line.split("=", 1)
            assert key not in out
            out[key] = value
    return out


def read_setup(path: Path) -> dict:
    text = path.read_text()
    pfc = re.findall(r"--pfc ([01](?:,[01]){7})", text)
    mtu = re.findall(r"ip link set \"\$if\" mtu (\d+)", text)
    cnp = re.findall(r"put (\d+) \"[^\"]*/cnp_dscp\"", text)
    cnp_prio = re.findall(r"put (\d+) \"[^\"]*/cnp_802p_prio\"", text)
    return {"pfc": set(pfc), "mtu": set(mtu), "cnp_dscp": set(cnp), "cnp_prio": set(cnp_prio),
            "link_type": set(re.findall(r"LINK_TYPE_P1=(\d)", text))}


def switch_ports(out: Path, fabric: str) -> dict[tuple[str, str], tuple[str | None, int | None, tuple | None]]:
    """(device, port) -> (ip, prefix, svi) read from whichever switch files the fabric has."""
    ports = {}
    nvue = sorted((out / fabric / "switches").glob("*.nvue.yaml"))
    if nvue:
        for p in nvue:
            _, tree = read_nvue(p)
            svi = None
            for _name, node in tree["interface"].items():
                if node.get("type") == "svi":
                    addr = ipaddress.ip_interface(next(iter(nvue_ip(node)["address"])))
                    svi = (str(addr.ip), addr.network.prefixlen)
            for name, node in tree["interface"].items():
                addr = next(iter(nvue_ip(node).get("address", {})), None)
                ip = ipaddress.ip_interface(addr) if addr else None
                ports[(p.name[:-len(".nvue.yaml")], name)] = (str(ip.ip) if ip else None,
                                                             ip.network.prefixlen if ip else None, svi)
        return ports
    for dev, d in read_fabric(out, fabric).items():
        for name, port in d["ports"].items():
            ports[(dev, name)] = (port["ip"], port["prefix"], d["svi"])
    return ports


def switch_qos(out: Path, fabric: str) -> tuple[set, tuple | None]:
    """(no-drop priorities of used ports, DSCP map) from the switch files."""
    nvue = sorted((out / fabric / "switches").glob("*.nvue.yaml"))
    if nvue:
        from fabgen.inventory.platform import NVUE_ROCE_PROFILE as profile

        trees = [read_nvue(p)[1] for p in nvue]
        modes = {t["qos"]["roce"]["mode"] for t in trees}
        assert len(modes) == 1
        # the switch runs Cumulus's RoCE profile and nothing that overrides its map (validation refuses
        # a QoS value the profile fixes, so the hosts cannot be told another one)
        assert all(set(t["qos"]) <= {"roce", "congestion-control", "pfc-watchdog"} for t in trees)
        dscp = [0] * 64
        dscp[profile["roce_dscp"]], dscp[profile["cnp_dscp"]] = profile["roce_priority"], profile["cnp_priority"]
        return ({(profile["roce_priority"],)} if modes == {"lossless"} else {()}), tuple(dscp)
    devices = read_fabric(out, fabric)
    no_drop = {p["no_drop"] for d in devices.values() for p in d["ports"].values() if p["up"]}
    maps = {d["dscp_to_tc"] for d in devices.values()}
    assert len(maps) == 1
    return no_drop, maps.pop()


def check_hosts(out: Path, fabric: str, groups: dict[str, tuple[str, int]]) -> None:
    """groups: node group -> (hostname prefix, node count)."""
    cabling = read_cabling(out, fabric)
    nics: dict[str, list[tuple[str, str, str]]] = {}
    for r in cabling:
        if r["tier"] == "node-leaf":
            nics.setdefault(r["a_device"], []).append((r["a_port"], r["z_device"], r["z_port"]))
    ethernet = not (out / fabric / "infiniband").exists()
    no_drop, dscp_map = switch_qos(out, fabric) if ethernet else (None, None)
    ports = switch_ports(out, fabric) if ethernet else {}
    for group, (prefix, count) in groups.items():
        env = read_env(out / "host-groups" / group / "nccl.env")
        assert set(env) <= NCCL_KNOWN and not set(env) & NOT_NCCL, sorted(env)
        setup = read_setup(out / "host-groups" / group / "hca-setup.sh")
        members = [h for h in nics if h.startswith(prefix)]
        assert len(members) == count
        hca = env["NCCL_IB_HCA"]
        assert hca.startswith("=")
        for host in members:
            assert hca[1:].split(",") == [f"{rdma}:1" for rdma, _, _ in nics[host]], host
        if not ethernet:
            assert setup["link_type"] == {"1"}
            continue
        assert setup["link_type"] == {"2"}
        tos = int(env["NCCL_IB_TC"])
        dscp = tos >> 2
        assert tos & 3 == 2, "ECT(0) set"
        (pfc,) = setup["pfc"]
        host_no_drop = tuple(i for i, bit in enumerate(pfc.split(",")) if bit == "1")
        assert no_drop == {host_no_drop}, (no_drop, host_no_drop)
        if host_no_drop:
            assert dscp_map[dscp] == host_no_drop[0], "the host's ToS lands in the switches' no-drop class"
        (cnp,) = setup["cnp_dscp"]
        (cnp_prio,) = setup["cnp_prio"]
        assert dscp_map[int(cnp)] == int(cnp_prio)
    if not ethernet:  # no rail in any netplan (a node's storage or in-band ports may have one)
        for host in nics:
            plan = out / "hosts" / host / "netplan.yaml"
            assert not plan.exists() or all(
                c["routing-policy"][0]["table"] >= TABLES["storage"]
                for c in yaml.safe_load(plan.read_text())["network"]["ethernets"].values() if "routing-policy" in c)
        return
    for host, host_nics in nics.items():
        plan = yaml.safe_load((out / "hosts" / host / "netplan.yaml").read_text())["network"]
        # the compute ports (a node on storage and in-band fabrics too has their ports in the same file)
        eths = [(n, c) for n, c in plan["ethernets"].items()
                if "routing-policy" in c and c["routing-policy"][0]["table"] < TABLES["storage"]]
        assert len(eths) == len(host_nics)
        tables = set()
        for (_netdev, cfg), (rdma, leaf, port) in zip(eths, host_nics):
            (addr,) = cfg["addresses"]
            host_if = ipaddress.ip_interface(addr)
            sw_ip, sw_prefix, svi = ports[(leaf, port)]
            if sw_ip is not None:
                gateway = ipaddress.ip_interface(f"{sw_ip}/{sw_prefix}")
            else:
                gateway = ipaddress.ip_interface(f"{svi[0]}/{svi[1]}")
            assert host_if.network == gateway.network, f"{host} {rdma}: {addr} not in {gateway}"
            assert host_if.ip != gateway.ip
            via = {r["via"] for r in cfg["routes"] if "via" in r}
            assert via == {str(gateway.ip)}, "rail traffic goes to its own leaf"
            assert not any(r["to"] in ("default", "0.0.0.0/0") for r in cfg["routes"])
            (main,) = [r for r in cfg["routes"] if "table" not in r]  # an unbound client's route to the plane
            assert host_if.ip in ipaddress.ip_network(main["to"]) and main["metric"] % 100 == 0
            (rule,) = cfg["routing-policy"]
            assert rule["from"] == str(host_if.ip) and rule["table"] == cfg["routes"][0]["table"]
            tables.add(rule["table"])
        assert len(tables) == len(host_nics), "one routing table per rail NIC"


def scripts_ok(paths: list[Path], firmware: bool = True) -> None:
    """Each script's dry run succeeds: it stops at the firmware settings (firmware: True, on a
    machine without mlxconfig every setting differs) or, with none, goes straight to the QoS."""
    for p in paths:
        run = subprocess.run(["bash", str(p), "--dry-run"], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        if firmware:
            assert "would run: mlxconfig" in run.stdout or "would" not in run.stdout
        else:
            assert "mlxconfig" not in run.stdout and "would run: mlnx_qos" in run.stdout, run.stdout
    if not shutil.which("shellcheck"):
        if IN_CI:
            raise RuntimeError("CI must have shellcheck: `make test` installs it")
        pytest.skip("shellcheck not installed")
    run = subprocess.run(["shellcheck", *map(str, paths)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout


@pytest.mark.parametrize("case,fabric,groups", [
    ("superpod-4su", "compute", {"gpu": ("dgx", 127)}), ("fattree-2to1", "fabric", {"b200": ("b200-", 40)}),
    ("roce-3tier", "eth", {"gpu": ("gpu", 32)}), ("spectrumx-1su", "sx", {"gpu": ("gpu", 64)}),
    ("ib-storage", "ib", {"gpu": ("gpu", 48)}),
])
def test_examples_hosts_agree_with_switches(case: str, fabric: str, groups: dict, tmp_path: Path) -> None:
    render_to(INVENTORIES / f"{case}.yaml", tmp_path)
    check_hosts(tmp_path, fabric, groups)
    scripts_ok(sorted((tmp_path / "host-groups").glob("*/hca-setup.sh")))


def test_one_file_per_group_not_per_node(tmp_path: Path) -> None:
    render_to(INVENTORIES / "superpod-4su.yaml", tmp_path)
    assert sorted(p.name for p in (tmp_path / "host-groups").iterdir()) == ["gpu"]
    assert not (tmp_path / "host-groups" / "storage").exists()


SHAPES = {
    "sonic-leaf-subnet-fattree": ("roce", "sonic", "arista-7060x6-64pe-b", "fat-tree", "dgx-h100", 24,
                                  "ethernet: {host_addressing: leaf-subnet, qos: {roce_dscp: 34, roce_priority: 4}}"),
    "eos-rail-3tier": ("roce", "eos", "arista-7060x5", "rail-optimized", "dgx-b200", 40, "tiers: 3"),
    "spectrum-x-lossy": ("spectrum-x", "nvue", "sn5600", "rail-optimized", "dgx-h100", 16,
                         "ethernet: {qos: {mode: lossy}, gid_index: 3}"),
    "opensm-fattree": ("infiniband", "opensm", "qm9790", "fat-tree", "dgx-h100", 20, ""),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_other_shapes_hosts_agree(shape: str, tmp_path: Path) -> None:
    kind, platform, switch, topology, model, count, extra = SHAPES[shape]
    inv = tmp_path / "inv.yaml"
    inv.write_text(f"""version: 1
cluster: sim
node_groups:
  - {{name: node, model: {model}, count: {count}, bootstrap_interface: bond0}}
fabrics:
  - name: f
    kind: {kind}
    platform: {platform}
    topology: {topology}
    switch_model: {switch}
    node_groups: [node]
    {extra}
""")
    out = tmp_path / "out"
    render_to(inv, out)
    check_hosts(out, "f", {"node": ("node", count)})
    env = read_env(out / "host-groups" / "node" / "nccl.env")
    assert env["NCCL_SOCKET_IFNAME"] == "=bond0"
    assert env.get("NCCL_CROSS_NIC") == ("0" if topology == "rail-optimized" else "1")
    if shape == "sonic-leaf-subnet-fattree":
        assert env["NCCL_IB_TC"] == str(34 * 4 + 2)
    if shape == "spectrum-x-lossy":
        assert env["NCCL_IB_GID_INDEX"] == "3" and env["NCCL_IB_ADAPTIVE_ROUTING"] == "1"
        assert read_setup(out / "host-groups" / "node" / "hca-setup.sh")["pfc"] == {"0,0,0,0,0,0,0,0"}
    else:
        assert "NCCL_IB_GID_INDEX" not in env
    scripts_ok([out / "host-groups" / "node" / "hca-setup.sh"])


def _stubs(tmp_path: Path, link_type: str, pause: str) -> dict[str, str]:
    """Stub NIC tools on PATH: mlxconfig reports the given link type and ATS off; ethtool -a
    reports pause on or off; every other tool only records that it ran."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "mlxconfig").write_text(f"""#!/bin/sh
case "$*" in
  *"query LINK_TYPE_P1"*) echo "LINK_TYPE_P1                        {link_type}" ;;
  *"query ATS_ENABLED"*) echo "ATS_ENABLED                         False(0)" ;;
esac
""")
    (bin_dir / "ethtool").write_text("#!/bin/sh\nprintf 'Pause parameters for x:\\nAutonegotiate:\\toff\\n"
                                     f"RX:\\t\\t{pause}\\nTX:\\t\\t{pause}\\n'\n")
    for p in bin_dir.iterdir():
        p.chmod(0o755)
    return {"PATH": f"{bin_dir}:/usr/bin:/bin"}


def test_hca_setup_stops_before_qos_when_the_link_type_changes(tmp_path: Path) -> None:
    """A port still in InfiniBand mode needs a reboot before any Ethernet QoS: the script says
    so and stops (exit 3); once the firmware matches it goes on; a global pause already off is
    left alone, so a re-run changes nothing."""
    render_to(INVENTORIES / "roce-2node.yaml", tmp_path / "out")
    script = tmp_path / "out" / "host-groups" / "gpu" / "hca-setup.sh"
    ib_mode = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60,
                             env=_stubs(tmp_path / "a", "IB(1)", "off"))
    assert ib_mode.returncode == 3, ib_mode.stdout + ib_mode.stderr
    assert "reboot the node" in ib_mode.stdout and "mlx5_0(LINK_TYPE_P1=2)" in ib_mode.stdout
    dry = subprocess.run(["bash", str(script), "--dry-run"], capture_output=True, text=True, timeout=60,
                         env=_stubs(tmp_path / "b", "ETH(2)", "off"))
    assert dry.returncode == 0, dry.stderr
    assert "would run: mlxconfig" not in dry.stdout and "would stop here" not in dry.stdout
    assert "would run: mlnx_qos" in dry.stdout and "would run: ethtool -A" not in dry.stdout
    assert "cma_roce_mode -d mlx5_0 -p 1 -m 2" in dry.stdout and "cma_roce_tos -d mlx5_0 -t 106" in dry.stdout
    paused = subprocess.run(["bash", str(script), "--dry-run"], capture_output=True, text=True, timeout=60,
                            env=_stubs(tmp_path / "c", "ETH(2)", "on"))
    # the port by the name its netplan gives it (the script checks a real node agrees)
    assert "would run: ethtool -A enp24s0np0 rx off tx off" in paused.stdout


@pytest.mark.parametrize("version,pinned", [("2.19.3", True), ("2.20", True), ("2.21", False), ("2.28.3", False)])
def test_old_nccl_gets_the_roce_v2_gid_index(version: str, pinned: bool, tmp_path: Path) -> None:
    """NCCL 2.20 and older use GID 0 (RoCE v1, not routed) unless told; 2.21+ pick RoCE v2."""
    inv = (INVENTORIES / "roce-2node.yaml").read_text().replace(
        "    count: 2\n", f'    count: 2\n    nccl_version: "{version}"\n')
    assert f'nccl_version: "{version}"' in inv
    (tmp_path / "inv.yaml").write_text(inv)
    render_to(tmp_path / "inv.yaml", tmp_path / "out")
    env = (tmp_path / "out" / "host-groups" / "gpu" / "nccl.env").read_text()
    assert ("\nNCCL_IB_GID_INDEX=3\n" in env) == pinned
    assert f"for NCCL {version}" in env


def test_gid_index_of_roce_v1_is_warned(tmp_path: Path) -> None:
    inv = (INVENTORIES / "roce-2node.yaml").read_text() + "    ethernet: {gid_index: 0}\n"
    (tmp_path / "inv.yaml").write_text(inv)
    result = render_to(tmp_path / "inv.yaml", tmp_path / "out")
    assert any("GID index 0 is RoCE v1" in w for w in result.contexts["roce"].summary.warnings)


def test_bootstrap_on_loopback_is_warned(tmp_path: Path) -> None:
    inv = (INVENTORIES / "roce-2node.yaml").read_text().replace(
        '    hostname: "gpu{n:02d}"\n', '    hostname: "gpu{n:02d}"\n    bootstrap_interface: lo\n')
    assert "bootstrap_interface: lo" in inv
    (tmp_path / "inv.yaml").write_text(inv)
    result = render_to(tmp_path / "inv.yaml", tmp_path / "out")
    assert any("NCCL_SOCKET_IFNAME=lo is the loopback interface" in w and "bootstrap_interface (line" in w
               for w in result.contexts["roce"].summary.warnings)


def test_a_nodes_netplan_ports_are_written_as_their_plain_mapping() -> None:
    """A node's ports of a fabric are one yamlout.Filled of the node's shape, its ethernets a
    Joined of each fabric's part (targets/hosts.py): the netplan text is what the plain mapping
    with the same entries gives, written entry by entry, and YAML reads back those entries; a
    name in two parts (which the whole-cluster check refuses first) keeps the later entry."""
    from functools import partial

    from fabgen.formats import yamlout
    from fabgen.targets.hosts import _joined, _netplan_text, _ports

    layout = (("enp1s0np0", 101, 100, "10.0.0.0/17", False, False),
              ("enp2s0np0", 102, 200, "10.0.0.0/17", True, False))
    values = ["10.0.0.1/31", "10.0.0.0/31", "10.0.0.0", "10.0.0.1",
              "10.0.0.3/31", "10.0.0.2/31", "10.0.0.2", "10.0.0.3"]
    shape = yamlout.Shape(partial(_ports, layout, 9000, "10.0.0.0/16", "10.255.0.0/24"), len(values))
    parts = [shape.fill(*values), {"lo": {"addresses": ["10.255.0.1/32"]}}]
    plain = {"network": {"version": 2, "renderer": "networkd", "ethernets": {**parts[0], **parts[1]}}}
    joined = {"network": {**plain["network"], "ethernets": _joined(parts)}}
    assert type(joined["network"]["ethernets"]) is yamlout.Joined
    text = _netplan_text(joined)
    assert text == _netplan_text(plain)
    assert yaml.safe_load(text) == plain
    assert yaml.safe_load(text)["network"]["ethernets"]["enp2s0np0"]["routes"][-3:] == \
        [{"to": "10.0.0.0/17", "via": "10.0.0.2", "metric": 200},
         {"to": "10.255.0.0/24", "via": "10.0.0.2", "metric": 200},  # BGP to the host: the service addresses
         {"to": "default", "via": "10.0.0.2", "metric": 200}]
    assert {"to": "10.0.0.0/16", "type": "unreachable", "table": 102} in \
        yaml.safe_load(text)["network"]["ethernets"]["enp2s0np0"]["routes"]  # the rest of the pool: another plane's
    twice = _joined([*parts, {"enp1s0np0": {"mtu": 1500}}])
    assert type(twice) is dict and twice["enp1s0np0"] == {"mtu": 1500} and list(twice)[0] == "enp1s0np0"
