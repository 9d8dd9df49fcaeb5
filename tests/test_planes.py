"""Multi-plane Ethernet fabrics (`planes`): each plane its own network (switches, names,
addresses, ASNs), NIC port p of every rail on plane p, read back from the rendered files; the
published DGX SuperPOD B300 Spectrum-4 two-plane table; NCCL_IB_HCA in the form the declared
NCCL release parses (checked with the parsers of NCCL's source); every node's netplan through
the real `netplan generate`."""

from __future__ import annotations

import csv
import ipaddress
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml
from readback import read_cabling, read_fabric

from conftest import IN_CI, INVENTORIES, ROOT
from fabgen.pipeline import prepare, render_to
from fabgen.topology.analysis import cables

FABGEN = [str(ROOT / ".venv" / "bin" / "fabgen")]


def _inventory(tmp_path: Path, *, kind: str = "spectrum-x", platform: str = "nvue", switch: str = "sn5600",
               topology: str = "rail-optimized", planes: int = 2, groups: str = "", count: int = 64,
               extra: str = "", name: str = "sx") -> Path:
    path = tmp_path / "inv.yaml"
    groups = groups or f"  - {{name: gpu, model: dgx-b300, count: {count}}}\n"
    members = re.findall(r"name: (\w+)", groups)
    path.write_text(f"""version: 1
cluster: c
node_groups:
{groups}fabrics:
  - name: {name}
    kind: {kind}
    platform: {platform}
    topology: {topology}
    switch_model: {switch}
    node_groups: [{", ".join(members)}]
    planes: {planes}
{extra}""")
    return path


# DGX SuperPOD B300, Spectrum-4 Ethernet, two planes (NVIDIA SuperPOD DGX B300 Systems,
# Spectrum-4 Ethernet and DC Busbar Power RA, Table 3 "Larger DGX SuperPOD component counts",
# docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300/latest/
# dgx-superpod-architecture.html): SUs, nodes, leaf, spine, node-leaf and leaf-spine cables.
B300_SPECTRUM4 = [(1, 64, 16, 8, 512, 512), (2, 128, 32, 16, 1024, 1024), (4, 256, 64, 32, 2048, 2048),
                  (8, 512, 128, 64, 4096, 4096), (16, 1024, 256, 128, 8192, 8192)]


@pytest.mark.parametrize("units,nodes,leaf,spine,nl,ls", B300_SPECTRUM4)
def test_b300_spectrum4_two_plane_table(units, nodes, leaf, spine, nl, ls, tmp_path: Path) -> None:
    """Each row, built from dgx-b300 + sn5600 + planes: 2 and nothing else: switches summed over
    the planes, cables as the hardware is cabled (a NIC's 800G cable carries a 400G leg to each
    plane and counts once; two 400G leaf-spine links share one cage-to-cage cable)."""
    p = prepare(_inventory(tmp_path, count=nodes))
    planes = [p.fabrics["sx-plane1"], p.fabrics["sx-plane2"]]
    roles = Counter(s.role for f in planes for s in f.switches)
    assert (roles["leaf"], roles["spine"], roles["core"]) == (leaf, spine, 0)
    assert all(f.plan.units == units and f.plan.unit_nodes == 64 and f.plan.speed == 400 for f in planes)
    counted = [cables(f) for f in planes]
    assert (sum(c["node-leaf"] for c in counted), sum(c["leaf-spine"] for c in counted)) == (nl, ls)
    links = Counter(lk.tier for f in planes for lk in f.links)
    assert (links["node-leaf"], links["leaf-spine"]) == (2 * nl, 2 * ls), "two links per cable"


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def parse_hca_2_30_7(value: str) -> list[tuple[str, int, int, int]]:
    """NCCL v2.30.7 src/misc/utils.cc parseStringList, after the '^'/'=' prefixes: entries split
    at ',', fields at ':' into name, port, rail, plane (-1 where absent or empty)."""
    out = []
    for entry in value.lstrip("^").lstrip("=").split(","):
        fields = entry.split(":") + [""] * 3
        if fields[0]:
            out.append((fields[0], *(int(f) if f else -1 for f in fields[1:4])))
    return out


def parse_hca_before(value: str) -> list[tuple[str, int]]:
    """NCCL up to v2.30.4: the name up to ':', then atoi() of the rest (which stops at the next ':')."""
    out = []
    for entry in value.lstrip("^").lstrip("=").split(","):
        name, _, rest = entry.partition(":")
        digits = re.match(r"\d*", rest).group(0)
        out.append((name, int(digits) if digits else (0 if rest else -1)))
    return out


def _env(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if line and not line.startswith("#"))


GROUPS = ("  - {name: new, model: dgx-b300, count: 20, nccl_version: 2.30.7}\n"
          "  - {name: old, model: dgx-b300, count: 12, nccl_version: '2.28'}\n")


@pytest.mark.parametrize("kind,platform,switch,topology,planes", [
    ("roce", "eos", "arista-7060x5", "rail-optimized", 2),
    ("roce", "sonic", "sn5600-sonic", "rail-optimized", 2),
    ("spectrum-x", "nvue", "sn5600", "fat-tree", 4),
])
def test_planes_are_separate_networks_and_hosts_agree(kind, platform, switch, topology, planes,  # noqa: C901 (the docstring's claims, checked in turn)
                                                      tmp_path: Path) -> None:
    """An unseen cluster of 32 DGX B300 in two NCCL releases: each plane's switches, addresses and
    ASNs its own; port p of every NIC cabled to plane p; each node's netplan address sits on the
    /31 of the plane leaf it is cabled to; NCCL_IB_HCA lists every port once with its rail and
    plane (2.30.7) or in the older form with NCCL_CROSS_NIC=0 (2.28)."""
    render_to(_inventory(tmp_path, kind=kind, platform=platform, switch=switch, topology=topology,
                         planes=planes, groups=GROUPS), tmp_path / "out")
    out = tmp_path / "out"
    names = [f"sx-plane{p + 1}" for p in range(planes)]
    plane_of_port: dict[tuple[str, str], int] = {}
    leaf_rail: dict[str, int] = {}
    switches: list[set[str]] = []
    for p, name in enumerate(names):
        cabling = read_cabling(out, name)
        devs = {r["z_device"] for r in cabling} | {r["a_device"] for r in cabling if r["tier"] != "node-leaf"}
        assert all(d.startswith(name + "-") for d in devs)
        switches.append(devs)
        for r in cabling:
            if r["tier"] == "node-leaf":
                assert (r["a_device"], r["a_port"]) not in plane_of_port
                plane_of_port[(r["a_device"], r["a_port"])] = p
                assert r["speed"] == f"{800 // planes}G"
                m = re.search(r"-leaf(\d+)$", r["z_device"])
                if topology == "rail-optimized":
                    leaf_rail[r["z_device"]] = int(m.group(1)) - 1
    assert len(plane_of_port) == 32 * 8 * planes
    for node in {h for h, _ in plane_of_port}:  # NIC r's port p: mlx5_{planes x r + p}, on plane p
        assert {port: pl for (h, port), pl in plane_of_port.items() if h == node} == \
            {f"mlx5_{planes * r + p}": p for r in range(8) for p in range(planes)}
    rows = [row for name in names for row in _rows(out / name / "addresses.csv")]
    addresses = [row["address"] for row in rows]
    assert len(addresses) == len(set(addresses)), "no address in two places, across planes"
    asns = {}
    for _p, name in enumerate(names):
        for row in _rows(out / name / "addresses.csv"):
            if row["asn"]:
                asns.setdefault(row["device"], set()).add(row["asn"])
    for p in range(planes):
        for q in range(p + 1, planes):
            mine = {a for d in switches[p] if d in asns for a in asns[d]}
            theirs = {a for d in switches[q] if d in asns for a in asns[d]}
            assert not mine & theirs, "planes share no ASN"
    peer = {(row["device"], row["interface"]): row for row in rows}
    node_ips = [(ipaddress.ip_interface(peer[key]["address"]).ip, pl) for key, pl in plane_of_port.items()]
    for node in ("new001", "old012"):
        plan = yaml.safe_load((out / "hosts" / node / "netplan.yaml").read_text())["network"]["ethernets"]
        assert set(plan) == {port for h, port in plane_of_port if h == node}
        for port, cfg in plan.items():
            row = peer[(node, port)]
            (addr,) = cfg["addresses"]
            assert addr == row["address"]
            leaf_side = peer[(row["peer_device"], row["peer_interface"])]
            net = ipaddress.ip_interface(addr).network
            assert ipaddress.ip_interface(leaf_side["address"]).network == net
            assert ([r["via"] for r in cfg["routes"] if "via" in r]
                    == [str(ipaddress.ip_interface(leaf_side["address"]).ip)] * 2)  # its table's, the main table's
            rail, plane = divmod(int(port.split("_")[1]), planes)
            assert cfg["routing-policy"][0]["table"] == 100 + planes * rail + plane
            # an unbound client's route: every node address of this port's plane, none of another's
            (main,) = [r for r in cfg["routes"] if "table" not in r]
            assert main["metric"] == 100 * (rail + 1)
            block = ipaddress.ip_network(main["to"])
            assert all((there in block) == (pl == plane) for there, pl in node_ips), (node, port, block)
    new = _env(out / "host-groups" / "new" / "nccl.env")
    from fabgen.targets.hosts import NCCL_KNOWN  # the variables NCCL's env.rst documents (test_hosts)
    assert set(new) <= NCCL_KNOWN
    parsed = parse_hca_2_30_7(new["NCCL_IB_HCA"])
    assert len(parsed) == 8 * planes and len({n for n, *_ in parsed}) == 8 * planes
    for name, port, rail, plane in parsed:
        assert port == 1 and plane == plane_of_port[("new001", name)]
        assert rail == int(name.split("_")[1]) // planes
    old = _env(out / "host-groups" / "old" / "nccl.env")
    assert sorted(parse_hca_before(old["NCCL_IB_HCA"])) == sorted((n, 1) for n, *_ in parsed)
    assert old["NCCL_CROSS_NIC"] == "0" and new["NCCL_CROSS_NIC"] == "0"
    # the older parser reading the newer form keeps the names and ports (it drops rail and plane)
    assert sorted(parse_hca_before(new["NCCL_IB_HCA"])) == sorted((n, 1) for n, *_ in parsed)
    if platform in ("eos", "sonic"):  # switch side read back: each plane's configs carry exactly its address plan
        for name in names:
            configs = read_fabric(out, name)
            assert set(configs) == {d for d in switches[names.index(name)]}
            for dev, cfg in configs.items():
                assert f"{cfg['loopback']}/32" in addresses
                for port, pc in cfg["ports"].items():
                    if pc["ip"]:
                        assert peer[(dev, port)]["address"] == f"{pc['ip']}/{pc['prefix']}", (dev, port)
    from test_hosts import read_setup, scripts_ok
    for group in ("new", "old"):  # one NIC setup per port of every plane, and the script runs
        setup = read_setup(out / "host-groups" / group / "hca-setup.sh")
        assert setup["link_type"] == {"2"}
    scripts_ok(sorted((out / "host-groups").glob("*/hca-setup.sh")))
    text = (out / "host-groups" / "new" / "hca-setup.sh").read_text()
    assert all(f"mlx5_{k}" in text for k in range(8 * planes))
    labels = [d for d in yaml.safe_load_all((out / "kubernetes" / "node-labels.yaml").read_text()) if d]
    assert len(labels) == 32 and len({d["metadata"]["name"] for d in labels}) == 32
    conf = (out / "slurm" / "topology.conf").read_text()
    # units are the fabric's (sx-su01); a fat-tree node's group is its leaf on plane 1, cabled as on every plane
    assert ("sx-plane" not in conf) if topology == "rail-optimized" else ("sx-plane2" not in conf)
    assert conf.count("new[") >= 1 and conf.count("old[") >= 1
    inv = yaml.safe_load((out / "ansible" / "inventory.yml").read_text())["all"]["children"]
    assert "new001" in inv["fabric_sx"]["hosts"] and "new001" not in inv["fabric_sx_plane2"]["hosts"]
    assert set(inv["fabric_sx_plane2"]["hosts"]) == switches[1]
    if platform == "sonic":  # SONiC's YANG models accept every plane's config_db.json (where they are kept)
        from test_ethernet import yang_check
        yang_check(sorted(out.glob("sx-plane*/switches/*/config_db.json"))[::4])


def test_nccl_version_comparison() -> None:
    from fabgen.targets.hosts import PLANES_FROM, nccl_before_release

    assert nccl_before_release("2.30.4", PLANES_FROM) and nccl_before_release("2.30", PLANES_FROM)
    assert not nccl_before_release("2.30.7", PLANES_FROM) and not nccl_before_release("2.31", PLANES_FROM)


NETPLAN = shutil.which("netplan") or ("/usr/sbin/netplan" if os.path.exists("/usr/sbin/netplan") else None)


def _netplan_generate(files: dict[str, str], root: Path) -> subprocess.CompletedProcess:
    (root / "etc" / "netplan").mkdir(parents=True)
    for name, text in files.items():
        p = root / "etc" / "netplan" / name
        p.write_text(text)
        p.chmod(0o600)
    return subprocess.run([NETPLAN, "generate", "--root-dir", str(root)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("case,ports", [("b300-spectrumx-2plane", 16), ("spectrumx-1su", 8), ("roce-3tier", 8),
                                        ("fattree-2to1", 8), ("spectrumx-518-lossy", 8), ("roce-2node", 8)])
def test_netplan_generates_every_port(case: str, ports: int, tmp_path: Path) -> None:
    """netplan's own generator (Debian netplan.io) accepts the rendered netplan of nodes of every
    Ethernet example (p2p and leaf-subnet addressing, one and two planes) and writes a networkd
    unit per port with the address, the two routes and the rule of its table; a broken file (a
    route without its destination) is refused."""
    if NETPLAN is None:
        if IN_CI:
            raise RuntimeError("CI must have netplan.io: `make test` installs it")
        pytest.skip("netplan.io is not installed (`make test` installs it)")
    render_to(INVENTORIES / f"{case}.yaml", tmp_path / "out")
    hosts = sorted((tmp_path / "out" / "hosts").iterdir())
    for node in hosts[:: max(1, len(hosts) // 6)]:
        text = (node / "netplan.yaml").read_text()
        root = tmp_path / "root" / node.name
        run = _netplan_generate({"60-fabgen-rails.yaml": text}, root)
        assert run.returncode == 0, run.stderr
        ethernets = yaml.safe_load(text)["network"]["ethernets"]
        units = root / "run" / "systemd" / "network"
        assert len(ethernets) == ports
        for name, cfg in ethernets.items():
            unit = (units / f"10-netplan-{name}.network").read_text()
            assert f"Name={name}\n" in unit and f"Address={cfg['addresses'][0]}\n" in unit
            table = cfg["routing-policy"][0]["table"]
            in_table = sum(r.get("table") == table for r in cfg["routes"])  # 2, 3 with the other planes unreachable
            assert unit.count(f"Table={table}\n") == in_table + 1 and in_table == (3 if "2plane" in case else 2)
            assert ("Type=unreachable\n" in unit) == ("2plane" in case) and "Gateway=" in unit
            assert f"From={cfg['routing-policy'][0]['from']}\n" in unit
            assert "Destination=0.0.0.0/0" not in unit, "no default route on a rail port"
    text = (hosts[0] / "netplan.yaml").read_text()
    broken = re.sub(r"- to: \"?10\.[0-9./]+\"?\n\s+via:", "- via:", text, count=1)
    assert broken != text
    run = _netplan_generate({"60-fabgen-rails.yaml": broken}, tmp_path / "broken")
    assert run.returncode != 0 and "route" in run.stderr.lower(), run.stderr


@pytest.mark.parametrize("extra,groups,where,says", [
    ("", "", r"fabrics\[0\]\.planes", "an InfiniBand fabric has one plane"),
    ("", "  - {name: gpu, model: dgx-h100, count: 8}\n", r"fabrics\[0\]\.node_groups",
     "dgx-h100 does not say how its NICs split across planes"),
    ("", "  - {name: gpu, model: dgx-b300, count: 8}\n  - {name: st, model: dgx-b300, count: 2, role: storage}\n",
     r"fabrics\[0\]\.node_groups", "storage nodes on a multi-plane fabric"),
])
def test_planes_refused_where_they_cannot_work(extra, groups, where, says, tmp_path: Path) -> None:
    kind = "infiniband" if "InfiniBand" in says else "roce"
    platform = "opensm" if kind == "infiniband" else "eos"
    switch = "q3400" if kind == "infiniband" else "arista-7060x5"
    inv = _inventory(tmp_path, kind=kind, platform=platform, switch=switch, groups=groups, extra=extra)
    run = subprocess.run([*FABGEN, "render", str(inv), "--out", str(tmp_path / "out")], capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 2 and re.search(r"inv\.yaml:\d+:\d+: " + where, run.stderr), run.stderr
    assert says in run.stderr and "Traceback" not in run.stderr and not (tmp_path / "out").exists()


def test_a_long_name_leaves_no_room_for_the_plane(tmp_path: Path) -> None:
    inv = _inventory(tmp_path, kind="roce", platform="eos", switch="arista-7060x5", name="x" * 36, count=8)
    run = subprocess.run([*FABGEN, "validate", str(inv)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "fabrics[0].name" in run.stderr and "-plane2" in run.stderr, run.stderr


def _outside_parts(addresses: list[dict], parts: dict[str, str]) -> list[str]:
    """Rows of a plane's addresses.csv outside the part of the pool their kind comes from:
    loopbacks (interface lo), host ports (a node on either end), switch-to-switch links."""
    nets = {k: ipaddress.ip_network(v) for k, v in parts.items()}
    nodes = {r["device"] for r in addresses if r["role"] == "node"}
    bad = []
    for r in addresses:
        pool = ("loopbacks" if r["interface"] == "lo" else
                "hosts" if nodes & {r["device"], r["peer_device"]} else "links")
        if ipaddress.ip_interface(r["address"]).ip not in nets[pool]:
            bad.append(f"{r['device']} {r['interface']} {r['address']} not in {pool} {parts[pool]}")
    return bad


@pytest.mark.parametrize("planes", [2, 4])
def test_each_plane_numbers_inside_its_reported_part_of_every_pool(planes: int, tmp_path: Path) -> None:
    """report.json names each plane's own part of every pool (addressing.plane_pools); every
    address the plane's addresses.csv holds is inside the part of its kind, the parts of the
    planes are disjoint and inside the pool; the check finds plane 2's rows outside plane 1's parts."""
    import json

    render_to(_inventory(tmp_path, planes=planes, groups=GROUPS), tmp_path / "out")
    out = tmp_path / "out"
    report = json.loads((out / "report.json").read_text())["fabrics"]
    parts = [report[f"sx-plane{p + 1}"]["addressing"]["plane_pools"] for p in range(planes)]
    pools = report["sx-plane1"]["addressing"]["pools"]
    for key, pool in pools.items():
        nets = [ipaddress.ip_network(part[key]) for part in parts]
        assert all(n.subnet_of(ipaddress.ip_network(pool)) for n in nets)
        assert len({n.num_addresses for n in nets}) == 1
        assert not any(a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1:])
    rows = [_rows(out / f"sx-plane{p + 1}" / "addresses.csv") for p in range(planes)]
    for p in range(planes):
        assert rows[p] and _outside_parts(rows[p], parts[p]) == []
    assert len(_outside_parts(rows[1], parts[0])) == len(rows[1])
