"""The whole cluster as one (check/cluster.py, docs/cluster.md): one port, one cable, one address
across every fabric, role and plane, read back from the rendered files as a user's tools read
them (cabling.csv, addresses.csv, netplans, nccl.env); interface names a host has; and the
out-of-band network placed so that a change of one fabric never moves another's cables."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from conftest import IN_CI, INVENTORIES
from fabgen.check.cluster import check_cluster
from fabgen.errors import InventoryError
from fabgen.inventory.loader import load_text
from fabgen.inventory.rdmalinks import read_rdma_links
from fabgen.inventory.validate import validate
from fabgen.pipeline import build, render_to, run

NETPLAN = shutil.which("netplan") or ("/usr/sbin/netplan" if Path("/usr/sbin/netplan").exists() else None)


# Reading the render back -------------------------------------------------------------------------

def cabling(out: Path) -> list[dict[str, str]]:
    return [row | {"fabric": p.parent.name} for p in sorted(out.glob("*/cabling.csv"))
            for row in csv.DictReader(p.open())]


def addresses(out: Path) -> list[dict[str, str]]:
    return [row | {"fabric": p.parent.name} for p in sorted(out.glob("*/addresses.csv"))
            for row in csv.DictReader(p.open())]


def invariants(out: Path) -> None:  # noqa: C901 (the numbered invariants, in turn)
    """What a cluster must be, from its files alone."""
    cables, rows = cabling(out), addresses(out)
    ends: dict[tuple[str, str], str] = {}
    for r in cables:  # 1. every port is one cable end in the whole cluster
        for end in ((r["a_device"], r["a_port"]), (r["z_device"], r["z_port"])):
            assert end not in ends, f"{end} cabled on {ends[end]} and on {r['fabric']}"
            ends[end] = r["fabric"]
    owner: dict[str, tuple[str, str]] = {}
    for r in rows:  # 2. every address on one device's one interface (a bond member has none)
        if not r["address"]:
            continue
        ip = r["address"].split("/")[0]
        assert owner.setdefault(ip, (r["device"], r["interface"])) == (r["device"], r["interface"]), (ip, r)
    inventory = yaml.safe_load((out / "ansible" / "inventory.yml").read_text())
    for device, ip in _hosts_with(inventory, "ansible_host").items():  # management: one device each
        assert owner.setdefault(ip, (device, "management"))[0] == device, (ip, device, owner[ip])
    node_rows: dict[str, dict[str, str]] = {}
    for r in rows:
        if r["role"] == "node":
            node_rows.setdefault(r["device"], {})[r["interface"]] = r["address"]
    for h in sorted((out / "hosts").iterdir()) if (out / "hosts").exists() else []:
        text = (h / "netplan.yaml").read_text()  # 3. every node address in its netplan, on the named interface
        net = yaml.safe_load(text)["network"]
        eths = net["ethernets"]
        # a northsouth bond carries its in-band tenant untagged (on the bond), the others as VLANs on it
        named = {**eths, **net.get("bonds", {}), **net.get("vlans", {})}
        for iface, address in node_rows.get(h.name, {}).items():
            if not address:  # a bond member: in the netplan, in its bond
                assert any(iface in b["interfaces"] for b in net.get("bonds", {}).values()), (h.name, iface)
                continue
            assert address in named.get(iface, {}).get("addresses", []), (h.name, iface, address)
        for bond in net.get("bonds", {}).values():  # 3b. a bond's members are the node's own ports, in no other bond
            assert all(m in eths and "addresses" not in eths[m] for m in bond["interfaces"]), (h.name, bond)
        named_after_rdma = [n for n in eths if re.fullmatch(r"mlx5_\d+", n)]
        if named_after_rdma:  # 4. RDMA names as interfaces only where the file says they are placeholders
            head = text.split("network:")[0]
            assert "# PLACEHOLDER interface names" in head, head
    report = yaml.safe_load((out / "report.json").read_text())["fabrics"]
    compute = {name for name, d in report.items() if d.get("role", "compute") == "compute"}
    ports_of: dict[str, set[tuple[str, str]]] = {}
    for r in cables:
        ports_of.setdefault(r["a_device"], set()).add((r["fabric"], r["a_port"]))
    groups = _groups(inventory)
    envs = sorted(out.glob("host-groups/*/nccl.env"))
    assert all(groups.get(env.parent.name) for env in envs), (sorted(groups), envs)
    for env in envs:  # 5. NCCL_IB_HCA: cabled compute ports only
        hca = re.search(r"^NCCL_IB_HCA==(.*)$", env.read_text(), re.M).group(1)
        ports = {p.split(":")[0] for p in hca.split(",")}
        for node in groups.get(env.parent.name, []):
            on = {(f, p) for f, p in ports_of.get(node, ()) if p in ports}
            assert {p for _, p in on} == ports, (node, ports - {p for _, p in on})
            assert all(f in compute or _base(f) in compute for f, _ in on), (node, sorted(on)[:4])


def _groups(inventory: dict) -> dict[str, list[str]]:
    """node group -> its nodes, from the Ansible inventory's nodes_<name> groups."""
    out: dict[str, list[str]] = {}

    def walk(node: dict) -> None:
        for key, value in (node or {}).items():
            if not isinstance(value, dict):
                continue
            if key.startswith("nodes_"):
                out.setdefault(key[len("nodes_"):], []).extend((value.get("hosts") or {}).keys())
            walk(value.get("children") or {})
    walk(inventory)
    return out


def _base(fabric: str) -> str:
    return re.sub(r"-plane\d+$", "", fabric)


def _hosts_with(node: dict, var: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for _key, value in (node or {}).items():
        if not isinstance(value, dict):
            continue
        for h, hv in (value.get("hosts") or {}).items():
            if isinstance(hv, dict) and var in hv:
                out[h] = hv[var]
        out.update(_hosts_with(value.get("children") or {}, var))
    return out


# Whole clusters drawn at random -------------------------------------------------------------------

COMPUTE = {  # kind, platform, switch model, node model, planes
    "ib": ("infiniband", "ufm", "qm9700", "dgx-h100", 1),
    "eos": ("roce", "eos", "arista-7060x5", "dgx-h100", 1),
    "sonic": ("roce", "sonic", "sn5600-sonic", "dgx-h100", 1),
    "sx": ("spectrum-x", "nvue", "sn5600", "dgx-h100", 1),
    "sx-b300": ("spectrum-x", "nvue", "sn5600", "dgx-b300", 2),
    "eos-b300": ("roce", "eos", "arista-7060x5", "dgx-b300", 2),
    "sx-custom": ("spectrum-x", "nvue", "sn5600", "box", 2),
}
ROLE_FABRIC = {  # platforms a storage or in-band fabric may run
    "eos": ("roce", "eos", "arista-7060x5"), "sonic": ("roce", "sonic", "sn5600-sonic"),
    "sx": ("spectrum-x", "nvue", "sn5600"),
}
BOX = {"gpus": 8, "plane_rdma": "mlx5_{k}",
       "nics": [{"rdma": f"mlx5_{i}", "netdev": f"enp{i + 1}s0np0", "speed": 800} for i in range(4)],
       "ports": [{"role": "storage", "rdma": "mlx5_20", "netdev": "ens1f0np0", "speed": 400},
                 {"role": "storage", "rdma": "mlx5_21", "netdev": "ens1f1np1", "speed": 400},
                 {"role": "inband", "rdma": "mlx5_22", "netdev": "ens2f0np0", "speed": 400},
                 {"role": "inband", "rdma": "mlx5_23", "netdev": "ens2f1np1", "speed": 400},
                 {"role": "oob", "rdma": "bmc", "speed": 1}]}
STORE = {"gpus": 0, "ports": [{"role": "storage", "rdma": "mlx5_0", "netdev": "enp1s0f0np0", "speed": 400},
                              {"role": "storage", "rdma": "mlx5_1", "netdev": "enp1s0f1np1", "speed": 400},
                              {"role": "oob", "rdma": "bmc", "speed": 1}]}


def cluster(compute: str, nodes: int, planned: int | None, storage: str | None, inband: str | None, oob: bool,  # noqa: C901 (one branch an optional part of the inventory)
            servers: int, storage_platform_override: str | None = None, northsouth: str | None = None) -> dict:
    """A whole cluster; `northsouth` (eos or sx): one converged fabric instead of storage and in-band."""
    kind, platform, switch, model, planes = COMPUTE[compute]
    doc: dict = {"version": 1, "cluster": "w",
                 "node_groups": [{"name": "gpu", "model": model, "count": nodes, "hostname": "gpu{n:03d}",
                                  "nccl_version": "2.30.7"}],
                 "node_models": {"box": BOX, "store": STORE}, "fabrics": []}
    f = {"name": "cmp", "kind": kind, "platform": platform, "topology": "rail-optimized", "switch_model": switch,
         "node_groups": ["gpu"], "management": {"prefix": "192.168.10.0/24", "gateway": "192.168.10.1"}}
    if planes > 1:
        f["planes"] = planes
    if planned:
        f["planned_nodes"] = planned
    if platform == "eos":
        f["management"]["users"] = [{"name": "ops", "password_hash": {"env": "H"}}]
    doc["fabrics"].append(f)
    for role, choice, n in (("storage", storage, 1), ("inband", inband, 2)):
        if choice is None:
            continue
        choice = storage_platform_override if role == "storage" and storage_platform_override else choice
        kind, platform, switch = ROLE_FABRIC[choice]
        groups = ["gpu"] + (["store"] if role == "storage" and servers else [])
        r = {"name": role[:3] + "net", "role": role, "kind": kind, "platform": platform, "topology": "rail-optimized",
             "switch_model": switch, "node_groups": groups,
             "management": {"prefix": f"192.168.{10 + n}.0/24", "gateway": f"192.168.{10 + n}.1"},
             "ethernet": {"pools": {"loopbacks": f"10.{250 + n}.0.0/24", "links": f"10.{240 + n}.0.0/22",
                                    "hosts": f"100.{100 + n}.0.0/16"},
                          "asn": {"leaf": 4200020000 + 10000 * n, "spine": 4200002000 + 1000 * n,
                                  "core": 4200001000 + 100 * n}}}
        if planned:
            r["planned_nodes"] = planned
        if platform == "eos":
            r["management"]["users"] = [{"name": "ops", "password_hash": {"env": "H"}}]
        doc["fabrics"].append(r)
    if northsouth:
        kind, platform, switch = ROLE_FABRIC[northsouth]
        r = {"name": "nsnet", "role": "northsouth", "kind": kind, "platform": platform, "topology": "rail-optimized",
             "switch_model": switch, "node_groups": ["gpu"] + (["store"] if servers else []), "scalable_unit": 4,
             "management": {"prefix": "192.168.13.0/24", "gateway": "192.168.13.1"},
             "ethernet": {"pools": {"loopbacks": "10.253.0.0/24", "links": "10.243.0.0/22", "hosts": "100.103.0.0/16"},
                          "asn": {"leaf": 4200050000, "spine": 4200005000, "core": 4200005500}}}
        if planned:
            r["planned_nodes"] = planned
        if platform == "eos":
            r["management"]["users"] = [{"name": "ops", "password_hash": {"env": "H"}}]
        doc["fabrics"].append(r)
    if servers and (storage or northsouth):
        doc["node_groups"].append({"name": "store", "model": "store", "role": "storage", "count": servers,
                                   "hostname": "store{n:02d}"})
    if oob:
        groups = ["gpu"] + (["store"] if servers and (storage or northsouth) else [])
        doc["fabrics"].append({"name": "oob", "role": "oob", "kind": "ethernet", "platform": "nvue",
                               "switch_model": "sn2201", "node_groups": groups, "scalable_unit": 16,
                               "management": {"prefix": "192.168.0.0/22", "gateway": "192.168.0.1"}})
    return doc


@st.composite
def clusters(draw):
    compute = draw(st.sampled_from(sorted(COMPUTE)))
    nodes = draw(st.sampled_from([4, 8]))
    planned = draw(st.sampled_from([None, 32, 64]))
    storage = draw(st.sampled_from([None, "eos", "sonic", "sx"]))
    inband = draw(st.sampled_from([None, "eos", "sx"]))
    oob = draw(st.booleans())
    northsouth = draw(st.sampled_from([None, None, "eos", "sx"])) if storage is None and inband is None else None
    servers = draw(st.sampled_from([0, 2])) if storage or northsouth else 0
    return compute, nodes, planned, storage, inband, oob, servers, northsouth


RENDERED: list = []
REFUSED: list = []


def _render(doc: dict, tmp_path: Path, name: str) -> Path:
    inv = tmp_path / f"{name}.yaml"
    inv.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = tmp_path / name
    render_to(inv, out)
    return out


def _oob_cables(out: Path) -> set[tuple[str, str, str, str]]:
    path = out / "oob" / "cabling.csv"
    if not path.exists():
        return set()
    return {(r["a_device"], r["a_port"], r["z_device"], r["z_port"]) for r in csv.DictReader(path.open())}


# a whole cluster renders in a few seconds: a dozen draws, and a failure is reported as drawn (shrinking one
# would render hundreds more)
@settings(max_examples=25, deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate),
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=clusters())
@example(case=("ib", 4, 32, None, None, True, 2, "sx"))  # a converged north-south fabric, each engine once
@example(case=("sx-custom", 8, 64, None, None, False, 2, "eos"))
def test_whole_clusters_keep_the_invariants_and_oob_cables_never_move(case, tmp_path_factory) -> None:
    """Random whole clusters: the invariants hold in the rendered files; growing the compute fabric
    inside its plan and changing the storage fabric's platform move no existing out-of-band cable
    (a changed fabric's own switches may be renamed, their management cables only)."""
    compute, nodes, planned, storage, inband, oob, servers, northsouth = case
    tmp = tmp_path_factory.mktemp("whole")
    doc = cluster(compute, nodes, planned, storage, inband, oob, servers, northsouth=northsouth)
    try:
        out = _render(doc, tmp, "base")
    except InventoryError as exc:  # a drawn cluster that cannot be built is refused with located problems
        assert all(p.line >= 1 for p in exc.problems)
        REFUSED.append(exc.problems[0].format())
        return
    RENDERED.append(case)
    invariants(out)
    before = _oob_cables(out)
    bmc = {c for c in before if c[1] not in ("Management1", "eth0", "mgmt0")}
    if planned and nodes * 2 <= planned:
        grown = _render(cluster(compute, nodes * 2, planned, storage, inband, oob, servers, northsouth=northsouth),
                        tmp, "grown")
        invariants(grown)
        assert before <= _oob_cables(grown), sorted(before - _oob_cables(grown))[:3]
    if storage and oob:
        other = next(p for p in ROLE_FABRIC if p != storage)
        changed = _render(cluster(compute, nodes, planned, storage, inband, oob, servers, other), tmp, "changed")
        invariants(changed)
        after = _oob_cables(changed)
        kept = {c for c in before if not c[0].startswith("stonet-")}  # the changed fabric's own switches aside
        assert kept <= after, sorted(kept - after)[:3]
        assert bmc <= after


def test_most_drawn_clusters_render() -> None:
    """The property test above is not vacuous: most of its draws render (run after it, in file order)."""
    if RENDERED or REFUSED:
        assert len(RENDERED) >= len(REFUSED), REFUSED[:3]


@pytest.mark.parametrize("case", ["b300-cluster", "gb300-cluster", "superpod-cluster", "b300-spectrumx-2plane",
                                  "gb300-northsouth"])
def test_the_examples_keep_the_invariants(case: str, tmp_path: Path) -> None:
    render_to(INVENTORIES / f"{case}.yaml", tmp_path / "out")
    invariants(tmp_path / "out")


def test_gb300_on_two_planes_beside_storage_and_inband_cables_each_port_once(tmp_path: Path) -> None:
    """The GB300 tray's split ports (docs/hardware.md: PCI order) and its BlueField-3 ports, which the
    split renumbers, never meet: gb300-cluster with its compute fabric on two Spectrum-X planes keeps
    every invariant, and each tray has 10 distinct network ports (8 plane ports, its one BlueField-3's
    storage P1 and in-band P2, ERA-00012) beside its three out-of-band ones."""
    text = (INVENTORIES / "gb300-cluster.yaml").read_text()
    text = text.replace("    kind: infiniband\n    platform: ufm\n    topology: rail-optimized\n"
                        "    switch_model: q3400",
                        "    kind: spectrum-x\n    platform: nvue\n    topology: rail-optimized\n"
                        "    switch_model: sn5600\n    planes: 2", 1)
    text = re.sub(r"\n    rdma_links: .*", "", text)  # the example's file is of the unsplit tray
    assert "planes: 2" in text
    inv = tmp_path / "inv.yaml"
    inv.write_text(text)
    render_to(inv, tmp_path / "out")
    invariants(tmp_path / "out")
    ports = [row["a_port"] for f in (tmp_path / "out").glob("*/cabling.csv")
             for row in csv.DictReader(f.open()) if row["a_device"] == "gb001"
             and row["a_port"] not in ("bmc", "host-1g", "bf3-oob")]
    assert len(ports) == len(set(ports)) == 10


# The check itself ----------------------------------------------------------------------------------

def test_a_custom_model_whose_plane_ports_take_its_storage_names_is_refused_naming_both(tmp_path: Path) -> None:
    doc = cluster("sx-custom", 4, None, "eos", None, False, 0)
    doc["node_models"]["box"] = {**BOX, "ports": [{**p, "rdma": "mlx5_6"} if p["role"] == "storage" and
                                                  p["rdma"] == "mlx5_20" else p for p in BOX["ports"]]}
    with pytest.raises(InventoryError) as exc:
        _render(doc, tmp_path, "x")
    text = str(exc.value)
    assert "node_models.box.plane_rdma" in text and "mlx5_6" in text and "storage ports" in text
    assert not (tmp_path / "x").exists()


def test_two_ports_with_one_netdev_are_refused_by_the_whole_cluster_check(tmp_path: Path) -> None:
    """Netdev names are the model's to give: two ports of one node named alike would leave one
    address out of the netplan; the check names the node, both fabrics and the key."""
    doc = cluster("sx-custom", 4, None, "eos", "sx", False, 0)
    doc["node_models"]["box"] = {**BOX, "ports": [{**p, "netdev": "ens2f0np0"} if p["rdma"] == "mlx5_20" else p
                                                  for p in BOX["ports"]]}
    with pytest.raises(InventoryError) as exc:
        _render(doc, tmp_path, "x")
    text = str(exc.value)
    assert "would name two ports ens2f0np0" in text and "fabrics[2].node_groups[0]" in text
    assert "(and alike on 3 more nodes of the group)" in text


@pytest.mark.parametrize("writer_fails", [False, True])
def test_the_whole_cluster_check_run_aside_is_what_a_user_sees(writer_fails: bool, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """On a large cluster the check runs in a forked process beside structure and render
    (pipeline.build): its finding is still the error, nothing is written, also when a writer
    fails first on the data the check refuses (here a writer made to fail)."""
    from fabgen import parallel, pipeline
    from fabgen.targets import registry

    monkeypatch.setattr(parallel, "SPLIT_THRESHOLD", 0)  # every check and render forks, as at 1,500 devices
    monkeypatch.setenv("FABGEN_WORKERS", "2")  # also on a one-core machine
    ran = tmp_path / "writer-ran"
    if writer_fails:
        def broken(data):
            ran.touch()  # seen from a forked process too
            raise KeyError("a writer broken by two ports named alike")
        targets = {name: replace(t, render=broken) if name == "hosts" else t for name, t in registry().items()}
        monkeypatch.setattr(pipeline, "registry", lambda: targets)
    doc = cluster("sx-custom", 4, None, "eos", "sx", False, 0)
    doc["node_models"]["box"] = {**BOX, "ports": [{**p, "netdev": "ens2f0np0"} if p["rdma"] == "mlx5_20" else p
                                                  for p in BOX["ports"]]}
    with pytest.raises(InventoryError) as exc:
        _render(doc, tmp_path, "x")
    assert "would name two ports ens2f0np0" in str(exc.value)
    assert not (tmp_path / "x").exists()
    assert ran.exists() == writer_fails  # the check ran aside: the work went on until it failed
    with pytest.raises(InventoryError):  # run: the in-memory render, alike
        run(tmp_path / "x.yaml")


def test_an_address_configured_twice_is_refused_naming_both_claimants(tmp_path: Path) -> None:
    """A planted duplicate (no valid inventory makes one: prefixes and pools never overlap, which
    validate checks): the check finds it from the allocation and names both devices."""
    text = (INVENTORIES / "superpod-cluster.yaml").read_text()
    v = validate(load_text(text, "c.yaml"))
    fabrics, contexts = build(v)
    storage = contexts["storagenet"]
    leaf = next(iter(storage.allocation.loopbacks))
    stolen = contexts["internalnet"].allocation.loopbacks
    spine = next(iter(stolen))
    stolen[spine] = storage.allocation.loopbacks[leaf]
    with pytest.raises(InventoryError) as exc:
        check_cluster(v, fabrics, contexts)
    message = str(exc.value)
    assert f"{storage.allocation.loopbacks[leaf]} is configured twice: on {leaf} loopback" in message
    assert f"on {spine} loopback" in message and "fabrics[2].ethernet.pools.loopbacks" in message


def test_the_check_passes_every_example() -> None:
    from fabgen.inventory.loader import load

    for inv in sorted(INVENTORIES.glob("*.yaml")):
        build(validate(load(inv)))  # runs check_cluster


# Interface names a host has ------------------------------------------------------------------------

@pytest.mark.parametrize("text,found", [
    ("link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev ens6f0np0\n", {"mlx5_0": "ens6f0np0"}),
    ("link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 2 sm_lid 2 lmc 0 state ACTIVE physical_state LINK_UP\n",
     {"mlx5_0": None}),
    ("0/1: mlx5_3/1: state ACTIVE physical_state LINK_UP netdev enp64s0np0\n", {"mlx5_3": "enp64s0np0"}),
    ("mlx5_3 port 1 ==> ibp64s0 (Up)\n", {"mlx5_3": "ibp64s0"}),
    ("0000:40:00.0 mlx5_3 (MT4129 - MCX75310AAS-NEAT) NVIDIA ConnectX-7 fw 28.39.1002 port 1 (ACTIVE) ==> "
     "ibp64s0 (Up)\n", {"mlx5_3": "ibp64s0"}),
])
def test_rdma_links_formats(text: str, found: dict, tmp_path: Path) -> None:
    path = tmp_path / "links.txt"
    path.write_text("# saved on gpu001\n" + text)
    assert read_rdma_links(path, "links.txt") == (found, [])


@pytest.mark.parametrize("text,words", [
    ("mlx5_0 ==> eth0\n", "not a line of `rdma link show`"),
    ("link mlx5_0/1 state ACTIVE netdev a\nlink mlx5_0/1 state ACTIVE netdev b\n", "listed again (first at line 1)"),
    ("link mlx5_0/1 state ACTIVE netdev $(reboot)\n", "not a line of"),
    ("", "lists no RDMA device"),
])
def test_rdma_links_problems_are_located(text: str, words: str, tmp_path: Path) -> None:
    path = tmp_path / "links.txt"
    path.write_text(text)
    _, problems = read_rdma_links(path, "links.txt")
    assert problems and words in problems[0].message and problems[0].file == "links.txt"


def test_rdma_links_name_every_port_in_netplans_and_address_plans(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to(INVENTORIES / "b300-cluster.yaml", out)
    found, _ = read_rdma_links(INVENTORIES / "b300-cluster-rdma-links.txt", "x")
    eths = yaml.safe_load((out / "hosts" / "gpu001" / "netplan.yaml").read_text())["network"]["ethernets"]
    assert set(eths) == set(found.values()), "every port of the node by the name its node gave"
    assert "PLACEHOLDER" not in (out / "hosts" / "gpu001" / "netplan.yaml").read_text()
    rows = [r for r in addresses(out) if r["device"] == "gpu001" and r["fabric"] != "oob"]
    assert {r["interface"] for r in rows} == set(found.values())


def test_rdma_links_missing_a_device_is_refused(tmp_path: Path) -> None:
    links = (INVENTORIES / "b300-cluster-rdma-links.txt").read_text()
    (tmp_path / "b300-cluster-rdma-links.txt").write_text(links.replace("link mlx5_17/1", "link mlx5_99/1"))
    (tmp_path / "inv.yaml").write_text((INVENTORIES / "b300-cluster.yaml").read_text())
    with pytest.raises(InventoryError) as exc:
        render_to(tmp_path / "inv.yaml", tmp_path / "out")
    assert "node_groups[0].rdma_links" in str(exc.value) and "lists no mlx5_17" in str(exc.value)


@pytest.mark.integration
def test_the_host_playbook_refuses_placeholder_names_and_passes_real_ones(tmp_path: Path) -> None:
    """The real deploy-hosts.yml, its guard only (`--tags guard`, on the control node): a render
    without rdma_links is refused, the same with them passes."""
    playbook = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent))
    assert playbook, "ansible-core is a test dependency"
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "ANSIBLE_NOCOLOR": "1", "HOME": str(tmp_path)}
    text = (INVENTORIES / "b300-cluster.yaml").read_text()
    (tmp_path / "plain.yaml").write_text(text.replace("    rdma_links: b300-cluster-rdma-links.txt\n", ""))
    results = {}
    for name, inv in (("plain", tmp_path / "plain.yaml"), ("named", INVENTORIES / "b300-cluster.yaml")):
        out = tmp_path / name
        render_to(inv, out)
        results[name] = subprocess.run([playbook, "-i", "ansible/inventory.yml", "ansible/deploy-hosts.yml",
                                        "--tags", "guard", "--limit", "gpu001"], cwd=out,
                                       capture_output=True, text=True, timeout=300, env=env)
    assert results["plain"].returncode != 0
    assert "names ports after their RDMA devices" in results["plain"].stdout, results["plain"].stdout[-2000:]
    assert results["named"].returncode == 0, results["named"].stdout[-2000:]


@pytest.mark.parametrize("case,node,ports", [("b300-cluster", "gpu001", 20), ("b300-cluster", "store01", 2),
                                             ("gb300-cluster", "gb001", 2)])  # one BlueField-3: P1, P2
def test_netplan_generate_accepts_the_whole_cluster_nodes(case: str, node: str, ports: int, tmp_path: Path) -> None:
    """netplan's own generator writes a networkd unit per port, named as the node's rdma_links says,
    with the in-band default route; it refuses a file with a port whose address is not one."""
    if NETPLAN is None:
        if IN_CI:
            raise RuntimeError("CI must have netplan.io: `make test` installs it")
        pytest.skip("netplan.io is not installed")
    render_to(INVENTORIES / f"{case}.yaml", tmp_path / "out")
    text = (tmp_path / "out" / "hosts" / node / "netplan.yaml").read_text()
    eths = yaml.safe_load(text)["network"]["ethernets"]
    assert len([n for n in eths if n != "lo"]) == ports

    def generate(body: str, root: Path) -> subprocess.CompletedProcess:
        (root / "etc" / "netplan").mkdir(parents=True)
        (root / "etc" / "netplan" / "60-fabgen.yaml").write_text(body)
        (root / "etc" / "netplan" / "60-fabgen.yaml").chmod(0o600)
        return subprocess.run([NETPLAN, "generate", "--root-dir", str(root)], capture_output=True, text=True,
                              timeout=60)
    done = generate(text, tmp_path / "root")
    assert done.returncode == 0, done.stderr
    units = tmp_path / "root" / "run" / "systemd" / "network"
    for name, cfg in eths.items():
        if name != "lo":
            unit = (units / f"10-netplan-{name}.network").read_text()
            assert f"Name={name}\n" in unit and f"Address={cfg['addresses'][0]}\n" in unit
    first = next(n for n in eths if n != "lo")
    broken = text.replace(eths[first]["addresses"][0], "10.0.0.999/31", 1)
    assert generate(broken, tmp_path / "broken").returncode != 0
