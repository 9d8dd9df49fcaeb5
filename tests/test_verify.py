"""fabgen verify: a built fabric's cabling held against the plan.

InfiniBand: ibsim loads the rendered topology.net, or a copy with cables swapped (within a leaf,
across leaves), removed or added, and infiniband-diags' ibnetdiscover discovers it; Ethernet:
lldpd in one namespace per device (tests/lldp_lab.py) built from cabling.csv, or from a copy with
a swap or an unplugged cable. `fabgen verify` must name exactly the changed ports (exit 1) and
pass the unchanged fabric (exit 0). Plus every evidence format, name matching and the repairs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import GOLDEN, IN_CI, INVENTORIES
from fabgen.pipeline import render_to
from fabgen.verify import evidence
from fabgen.verify.evidence import EvidenceError

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
HAVE_IBSIM = bool(shutil.which("ibsim") and shutil.which("ibnetdiscover") and os.path.exists(UMAD2SIM))
HAVE_LLDPD = os.geteuid() == 0 and bool(shutil.which("lldpd") and shutil.which("lldpctl"))
if IN_CI and not (HAVE_IBSIM and HAVE_LLDPD):
    raise RuntimeError("CI must run ibsim, ibnetdiscover and lldpd as root (`make test` installs them)")


def fabgen(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabgen", *map(str, args)], capture_output=True, text=True,
                          timeout=600)


# Evidence formats -----------------------------------------------------------------------------------

LLDPCTL_ONE = {"lldp": {"interface": {"eth0": {"chassis": {"leaf1.dc.example.com": {"id": {"type": "mac",
               "value": "00:00:00:00:00:02"}}}, "port": {"id": {"type": "ifname", "value": "Ethernet5/1"},
               "descr": "Ethernet5/1"}}}}}
LLDPCTL_JSON0 = {"lldp": [{"interface": [{"name": "eth0", "chassis": [{"id": [{"type": "mac", "value": "00:02"}],
                 "name": [{"value": "leaf1"}]}], "port": [{"id": [{"type": "ifname", "value": "Ethernet5/1"}],
                 "descr": [{"value": "x"}]}]}]}]}
EOS = {"lldpNeighbors": {"Ethernet3/1": {"lldpNeighborInfo": [{"systemName": "spine1", "neighborInterfaceInfo": {
       "interfaceIdType": "interfaceName", "interfaceId": "\"Ethernet1/1\"", "interfaceId_v2": "Ethernet1/1"}}]}}}
NVUE = {"swp1": {"lldp": {"neighbor": {"spine1": {"chassis": {"system-name": "spine1"},
        "port": {"name": "swp3", "description": ""}}}}}}
SONIC = """Capability codes: (R) Router, (B) Bridge, (O) Other
LocalPort    RemoteDevice    RemotePortID       Capability    RemotePortDescr
-----------  --------------  -----------------  ------------  -----------------
Ethernet0    spine1          Ethernet8          R             to leaf
--------------------------------------------------
Total entries displayed:  1
"""


@pytest.mark.parametrize("text,rows", [
    (json.dumps(LLDPCTL_ONE), [("eth0", "leaf1.dc.example.com", "Ethernet5/1")]),
    (json.dumps(LLDPCTL_JSON0), [("eth0", "leaf1", "Ethernet5/1")]),
    (json.dumps(EOS), [("Ethernet3/1", "spine1", "Ethernet1/1")]),
    (json.dumps(NVUE), [("swp1", "spine1", "swp3")]),
    (SONIC, [("Ethernet0", "spine1", "Ethernet8")]),
])
def test_every_evidence_format_is_read(text: str, rows: list) -> None:
    seen = evidence.parse(text, "x.json", "dev1")
    assert [(s.port, s.peer, s.peer_port) for s in seen] == rows and all(s.device == "dev1" for s in seen)


@pytest.mark.parametrize("text,words", [("{}", "JSON of no supported"), ("hello\n", "not the output of"),
                                        ("{", "not JSON"), (SONIC.replace("---", "xxx"), "header and ruler")])
def test_unknown_evidence_is_refused_naming_the_file(text: str, words: str) -> None:
    with pytest.raises(EvidenceError) as exc:
        evidence.parse(text, "ev/dev1.json", "dev1")
    assert words in str(exc.value) and "ev/dev1.json" in str(exc.value)


# The verdict on evidence written by hand -----------------------------------------------------------

@pytest.fixture(scope="module")
def small_eth(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("v") / "out"
    render_to(INVENTORIES / "roce-3tier.yaml", out)
    return out


def _lldp_dir(out: Path, fabric: str, tmp: Path, change=None, silent: set[str] = frozenset(),
              host_mac: bool = True) -> Path:
    """The evidence the planned cabling would give, each end's view in lldpctl JSON (a switch
    names its ports, a node its netdevs and sends its MAC), `change` applied to the rows first."""
    sys.path.insert(0, str(Path(__file__).parent))
    from lldp_lab import cables, netdevs

    rows = cables(out, fabric)
    names = netdevs(out, fabric)
    if change:
        rows = change(rows)
    views: dict[str, list] = {}
    for r in rows:
        for dev, port, far, far_port in ((r["a_device"], r["a_port"], r["z_device"], r["z_port"]),
                                         (r["z_device"], r["z_port"], r["a_device"], r["a_port"])):
            local = names.get((dev, port), port)
            far_name = names.get((far, far_port))
            pid = {"type": "mac", "value": "02:00:00:00:00:01"} if far_name and host_mac else \
                {"type": "ifname", "value": far_name or far_port}
            views.setdefault(dev, []).append({local: {"chassis": {far: {}}, "port": {"id": pid,
                                                                                      "descr": far_name or far_port}}})
    ev = tmp / "evidence"
    ev.mkdir()
    for dev, items in views.items():
        if dev not in silent:
            (ev / f"{dev}.json").write_text(json.dumps({"lldp": {"interface": items}}))
    return ev


def _swap_far(i: int, j: int):
    def change(rows: list) -> list:
        a, b = rows[i], rows[j]
        a["z_device"], a["z_port"], b["z_device"], b["z_port"] = b["z_device"], b["z_port"], a["z_device"], a["z_port"]
        return rows
    return change


def test_the_plan_itself_passes(small_eth: Path, tmp_path: Path) -> None:
    res = fabgen("verify", small_eth, "--lldp", _lldp_dir(small_eth, "eth", tmp_path), "--format", "json")
    assert res.returncode == 0, res.stdout[-2000:]
    doc = json.loads(res.stdout)
    assert doc["ok"] and doc["checked"] == doc["cabled"] > 700 and not doc["findings"]


def test_a_swap_within_a_leaf_is_one_move(small_eth: Path, tmp_path: Path) -> None:
    res = fabgen("verify", small_eth, "--lldp", _lldp_dir(small_eth, "eth", tmp_path, _swap_far(0, 8)),
                 "--format", "json")
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    kinds = {(f["device"], f["port"], f["kind"]) for f in doc["findings"]}
    assert len([k for k in kinds if k[2] == "miswired"]) == 4, kinds  # both ends of both cables
    assert len(doc["repairs"]) == 1 and doc["repairs"][0].startswith("swap the plugs at")


def test_a_missing_cable_a_partial_build_and_an_unplanned_one(tmp_path: Path) -> None:
    """One leaf, two nodes: a cable of gpu01 missing (both ends answer: not cabled), one of gpu02
    missing while gpu02 sends no LLDP (unverified, apart), a loop cable between two unused leaf ports
    (unplanned); the rest as planned."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-2node.yaml", out)

    def change(rows: list) -> list:
        gone = [r for r in rows if (r["a_device"], r["a_port"]) in (("gpu01", "mlx5_3"), ("gpu02", "mlx5_0"))]
        loop = dict(rows[0], a_device="roce-leaf01", a_port="Ethernet40/1", z_device="roce-leaf01",
                    z_port="Ethernet41/1")
        return [r for r in rows if r not in gone] + [loop]
    (tmp_path / "ev").mkdir()
    ev = _lldp_dir(out, "roce", tmp_path / "ev", change, silent={"gpu02"})
    res = fabgen("verify", out, "--lldp", ev, "--format", "json")
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    by_kind = {}
    for f in doc["findings"]:
        by_kind.setdefault(f["kind"], set()).add((f["device"], f["port"]))
    assert by_kind.pop("not-cabled") == {("gpu01", "mlx5_3")}
    assert by_kind.pop("unverified") == {("gpu02", "mlx5_0")}
    assert by_kind.pop("unplanned") == {("roce-leaf01", "Ethernet40/1")}
    assert not by_kind, by_kind
    assert doc["checked"] == 16 and doc["cabled"] == 14


def test_names_as_operators_have_them(small_eth: Path, tmp_path: Path) -> None:
    """FQDNs and vendor decoration around the names, a host port id given as its netdev."""
    ev = _lldp_dir(small_eth, "eth", tmp_path, host_mac=False)
    for f in ev.iterdir():
        f.write_text(f.read_text().replace('"eth-pod01-spine01"', '"eth-pod01-spine01.dc.example.com"')
                     .replace('"eth-core0001"', '"Arista-7060X5 eth-core0001 (EOS 4.33)"'))
    res = fabgen("verify", small_eth, "--lldp", ev)
    assert res.returncode == 0, res.stdout[-2000:]


def test_formats_of_the_verdict(small_eth: Path, tmp_path: Path) -> None:
    ev = _lldp_dir(small_eth, "eth", tmp_path, _swap_far(0, 8))
    md = fabgen("verify", small_eth, "--lldp", ev, "--format", "markdown").stdout
    assert md.startswith("## fabgen verify: ") and "- [ ] swap the plugs" in md and "| miswired |" in md
    text = fabgen("verify", small_eth, "--lldp", ev).stdout
    assert "miswired (4):" in text and "repairs (1):" in text


def test_bad_input_is_exit_2(small_eth: Path, tmp_path: Path) -> None:
    (tmp_path / "nosuch-device.json").write_text(json.dumps(LLDPCTL_ONE))
    for args, words in ((["--lldp", tmp_path / "nosuch-device.json"], "no device of the plan"),
                        ([], "give evidence"), (["--lldp", tmp_path / "missing"], "no such file"),
                        (["--fabric", "x", "--lldp", tmp_path], "no such fabric")):
        res = fabgen("verify", small_eth, *args)
        assert res.returncode == 2 and words in res.stderr, (args, res.stderr)
    res = fabgen("verify", tmp_path, "--lldp", tmp_path)
    assert res.returncode == 2


# InfiniBand on ibsim ---------------------------------------------------------------------------------

def _ibnetdiscover(topology: Path, work: Path) -> Path:
    """ibsim on `topology`, ibnetdiscover from its first adapter: the evidence file."""
    text = topology.read_text()
    nodes = text.count("\nSwitch\t") + text.count("\nCa\t")
    first = next(line.split('"')[1] for line in text.splitlines() if line.startswith("Ca\t"))
    env = {**os.environ, "IBSIM_SOCKNAME": f"fabgen-verify-{os.getpid()}-{work.name}"}
    log = open(work / "ibsim.log", "w")
    sim = subprocess.Popen(["ibsim", "-s", "-n", "-N", str(nodes + 16), "-S", str(nodes + 16), "-P",
                            str(nodes * 130), str(topology)], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        time.sleep(1.0 + nodes / 4000)
        assert sim.poll() is None, (work / "ibsim.log").read_text()[-2000:]
        out = work / "ibnetdiscover.txt"
        with open(out, "w") as fh:
            subprocess.run(["ibnetdiscover"], env={**env, "SIM_HOST": first, "LD_PRELOAD": UMAD2SIM}, stdout=fh,
                           stderr=subprocess.DEVNULL, timeout=300, check=True)
        return out
    finally:
        sim.kill()
        sim.wait()
        log.close()


IB_UNSEEN = """version: 1
cluster: v
node_groups:
  - {name: gpu, model: dgx-h100, count: 12, hostname: "g{n:02d}"}
fabrics:
  - {name: ib, kind: infiniband, platform: opensm, topology: rail-optimized, switch_model: qm9700,
     node_groups: [gpu], scalable_unit: 8, tiers: 2}
"""


@pytest.mark.integration
@pytest.mark.skipif(not HAVE_IBSIM, reason="ibsim/ibnetdiscover not installed (`make test` installs them)")
def test_ibsim_fabrics_built_otherwise_than_planned(tmp_path: Path) -> None:
    """An unseen rail-optimized fabric, as planned and with: two nodes crossed on one leaf, two crossed
    across leaves (another rail), a cable removed and one added between unused ports."""
    sys.path.insert(0, str(Path(__file__).parent))
    import ibsim_topology as T

    (tmp_path / "inv.yaml").write_text(IB_UNSEEN)
    out = tmp_path / "out"
    render_to(tmp_path / "inv.yaml", out)
    topo = out / "ib" / "infiniband" / "topology.net"
    planned = _ibnetdiscover(topo, tmp_path / "a" if (tmp_path / "a").mkdir() is None else tmp_path)
    res = fabgen("verify", out, "--ibnetdiscover", planned, "--format", "json")
    assert res.returncode == 0, res.stdout[-3000:]
    assert json.loads(res.stdout)["checked"] > 96

    t = T.read(topo.read_text())
    leaf1, leaf2 = t.by_desc("ib-su01-leaf1"), t.by_desc("ib-su01-leaf2")
    p1, p2 = t.port_of("ib-su01-leaf1", "g01 mlx5_0"), t.port_of("ib-su01-leaf1", "g02 mlx5_0")
    t.swap((leaf1, p1), (leaf1, p2))  # within a leaf: g01 and g02 crossed
    q1, q2 = t.port_of("ib-su01-leaf1", "g03 mlx5_0"), t.port_of("ib-su01-leaf2", "g04 mlx5_3")
    t.swap((leaf1, q1), (leaf2, q2))  # across leaves: g03's rail-0 cable and g04's rail-1 cable crossed
    gone = t.port_of("ib-su01-leaf2", "g05 mlx5_3")
    t.unplug((leaf2, gone))  # g05 mlx5_3 not cabled
    spare1 = min(p for p in range(1, 65) if (leaf1, p) not in t.links)
    spare2 = min(p for p in range(1, 65) if (leaf2, p) not in t.links and p != gone)
    t.plug((leaf1, spare1), (leaf2, spare2))  # an unplanned cable between two unused leaf ports
    built = tmp_path / "built.net"
    built.write_text(T.write(t))
    (tmp_path / "b").mkdir()
    found = _ibnetdiscover(built, tmp_path / "b")
    res = fabgen("verify", out, "--ibnetdiscover", found, "--format", "json")
    assert res.returncode == 1, res.stdout[-3000:]
    doc = json.loads(res.stdout)
    miswired = {(f["device"], f["port"]) for f in doc["findings"] if f["kind"] == "miswired"}
    assert {("g01", "mlx5_0"), ("g02", "mlx5_0"), ("g03", "mlx5_0"), ("g04", "mlx5_3")} <= miswired
    assert {d for d, _ in miswired} == {"g01", "g02", "g03", "g04", "ib-su01-leaf1", "ib-su01-leaf2"}, miswired
    assert {(f["device"], f["port"]) for f in doc["findings"] if f["kind"] == "not-cabled"} == {("g05", "mlx5_3")}
    unplanned = [f for f in doc["findings"] if f["kind"] == "unplanned"]
    assert len(unplanned) == 1 and {unplanned[0]["device"], unplanned[0]["found"].split()[0]} == \
        {"ib-su01-leaf1", "ib-su01-leaf2"}
    assert len([r for r in doc["repairs"] if r.startswith("swap")]) == 2, doc["repairs"]


# Ethernet with lldpd in namespaces ---------------------------------------------------------------------

ETH_UNSEEN = """version: 1
cluster: v
node_groups:
  - {name: gpu, model: dgx-h100, count: 4, hostname: "e{n:02d}"}
fabrics:
  - {name: eth, kind: spectrum-x, platform: nvue, topology: rail-optimized, switch_model: sn5600,
     node_groups: [gpu], tiers: 2}
"""


@pytest.mark.integration
@pytest.mark.skipif(not HAVE_LLDPD, reason="needs root and lldpd (`make test` installs it)")
def test_lldpd_in_namespaces_finds_a_swap_and_an_unplugged_cable(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from lldp_lab import cables, collect, netdevs

    from fabgen.emulate.lab import lab

    (tmp_path / "inv.yaml").write_text(ETH_UNSEEN)
    out = tmp_path / "out"
    render_to(tmp_path / "inv.yaml", out)
    rows = cables(out, "eth")
    names = netdevs(out, "eth")
    before = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    with lab() as la:
        collect(la, rows, names, tmp_path / "planned")
    res = fabgen("verify", out, "--lldp", tmp_path / "planned", "--format", "json")
    assert res.returncode == 0, res.stdout[-3000:]

    built = [dict(r) for r in rows]
    up = [k for k, r in enumerate(built) if r["tier"] == "leaf-spine"]
    a, b = built[up[0]], built[up[-1]]  # two uplinks of two leaves crossed at the spines
    a["z_device"], a["z_port"], b["z_device"], b["z_port"] = b["z_device"], b["z_port"], a["z_device"], a["z_port"]
    unplugged = built.pop(0)
    with lab() as la:
        collect(la, built, names, tmp_path / "built", silent={"e04"})
    res = fabgen("verify", out, "--lldp", tmp_path / "built", "--format", "json")
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    miswired = {(f["device"], f["port"]) for f in doc["findings"] if f["kind"] == "miswired"}
    assert {(a["a_device"], a["a_port"]), (b["a_device"], b["a_port"])} <= miswired
    assert {(f["device"], f["port"]) for f in doc["findings"] if f["kind"] == "not-cabled"} == \
        {(unplugged["a_device"], unplugged["a_port"])}
    assert all(f["device"] == "e04" for f in doc["findings"] if f["kind"] == "unverified")  # e04 sends no LLDP
    assert len(doc["repairs"]) == 1 and doc["repairs"][0].startswith("swap")
    assert subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout == before
    assert "lldpd -d -u" not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def test_every_fabric_of_the_plan_is_named(tmp_path: Path) -> None:
    """Evidence for one fabric of several: the others are named, each "no evidence given" with
    its planned cables, never left out of the counts without a word; --fabric names the rest
    "not asked"."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "superpod-cluster.yaml", out)
    (tmp_path / "ev").mkdir()
    ev = _lldp_dir(out, "storagenet", tmp_path / "ev")
    res = fabgen("verify", out, "--lldp", ev, "--format", "json")
    doc = json.loads(res.stdout)
    report = json.loads((out / "report.json").read_text())["fabrics"]
    assert set(doc["fabrics"]) == set(report) and doc["fabrics"]["storagenet"] == "held"
    silent = sorted(f for f in report if f != "storagenet")
    assert silent and all(doc["fabrics"][f] == "no evidence given" for f in silent)
    for f in silent:
        planned = sum(1 for _ in (out / f / "cabling.csv").open()) - 1
        assert any(n.startswith(f"fabric {f} (") and f"its {planned} planned cables" in n for n in doc["notes"]), f
    text = fabgen("verify", out, "--lldp", ev).stdout
    assert all(f"fabric {f} (" in text and "no evidence given" in text for f in silent)
    only = json.loads(fabgen("verify", out, "--lldp", ev, "--fabric", "storagenet", "--format", "json").stdout)
    assert {f: s for f, s in only["fabrics"].items() if f != "storagenet"} == {f: "not asked" for f in silent}


def test_an_unplanned_hca_keeps_its_rdma_name() -> None:
    """ibnetdiscover names a host's adapter "<host> <rdma>": an adapter the plan does not cable
    (mlx5_9) is reported by that name, not as port 1 of the host."""
    from fabgen.rendered import read as rendered
    from fabgen.verify.cabling import _resolve
    from fabgen.verify.plan import read

    p = read(rendered.read_render(GOLDEN / "ib-3tier"))
    assert _resolve(p, "h100-001 mlx5_0", "1") == ("h100-001", "mlx5_0")  # planned
    assert _resolve(p, "h100-001 mlx5_9", "1") == ("h100-001", "mlx5_9")  # unplanned, named
    assert _resolve(p, "h100-001 HCA-1", "1") == ("h100-001", "HCA-1")


def test_evidence_for_one_fabric_of_three_names_the_other_two(tmp_path: Path) -> None:
    """A plan of three fabrics (InfiniBand compute, north-south, out-of-band) and ibnetdiscover's
    view of the compute fabric alone: text, Markdown and JSON each name all three, the two without
    evidence with the cables nothing held; a fabric left out of the section fails the count."""
    render = GOLDEN / "gb300-northsouth"
    ib = render / "compute" / "infiniband" / "topology.net"
    fabrics = json.loads((render / "report.json").read_text())["fabrics"]
    assert len(fabrics) == 3
    doc = json.loads(fabgen("verify", render, "--ibnetdiscover", ib, "--format", "json").stdout)
    assert doc["fabrics"] == {f: "held" if f == "compute" else "no evidence given" for f in fabrics}
    planned = {f: sum(1 for _ in (render / f / "cabling.csv").open()) - 1 for f in fabrics}
    assert doc["checked"] == planned["compute"]
    for fmt in ("text", "markdown"):
        out = fabgen("verify", render, "--ibnetdiscover", ib, "--format", fmt).stdout
        named = [line for line in out.splitlines() if "fabric " in line and "planned cables" in line]
        assert len(named) == 3, out
        for f in fabrics:
            line = next(n for n in named if f"fabric {f} " in n)
            assert str(planned[f]) in line and ("): held," in line) == (f == "compute"), line


def test_an_unplanned_hca_is_reported_by_its_rdma_name(tmp_path: Path) -> None:
    """ibnetdiscover's view where gb001's cable to its first leaf ends in an adapter the plan does
    not have (mlx5_9): the leaf's port is miswired to `gb001 mlx5_9`, never to `gb001 1`, and the
    repair names the adapter to move the cable from."""
    render = GOLDEN / "gb300-northsouth"
    text = (render / "compute" / "infiniband" / "topology.net").read_text()
    assert text.count('"gb001 mlx5_0"') == 2  # the leaf's port line and the adapter's own block
    built = tmp_path / "ibnetdiscover.txt"
    built.write_text(text.replace('"gb001 mlx5_0"', '"gb001 mlx5_9"'))
    res = fabgen("verify", render, "--ibnetdiscover", built, "--format", "json")
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    wrong = [f for f in doc["findings"] if f["kind"] == "miswired"]
    assert [(f["device"], f["expected"], f["found"]) for f in wrong] == \
        [("compute-su01-leaf1", "gb001 mlx5_0", "gb001 mlx5_9")]
    assert not any("gb001 1" in f["found"] or (f["device"], f["port"]) == ("gb001", "1") for f in doc["findings"])
    assert any("gb001 mlx5_9" in r for r in doc["repairs"]), doc["repairs"]
    text_out = fabgen("verify", render, "--ibnetdiscover", built).stdout
    assert "found gb001 mlx5_9" in text_out
