"""fabgen emulate: the rendered Ethernet fabrics brought up with FRR in network namespaces.

Unit tests translate every rendered switch config of the goldens strictly, refuse a line or key
they do not know, and hand FRR's own parser (`vtysh --dryrun`) every config they write. The
integration tests (root and FRR, which `make test` installs) run the real command on the
examples and on unseen shapes, on renders broken on purpose (a leaf's ASN, a missing peer, a
loopback not announced, a port shut), and check that every namespace, process and kernel
setting of a run is gone after it, also after SIGTERM."""

from __future__ import annotations

import csv
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import evpn_vm
import labtrace
import pytest
from test_gb300_facts import inventory as gb300_inventory

from conftest import GOLDEN, IN_CI, INVENTORIES
from fabgen.emulate import eos, nvue, sonic
from fabgen.emulate.expect import Plan
from fabgen.emulate.frr import frr_conf
from fabgen.emulate.model import TranslateError
from fabgen.pipeline import render_to

VTYSH = shutil.which("vtysh")
ROOT_AND_FRR = os.geteuid() == 0 and VTYSH is not None and Path("/usr/lib/frr/bgpd").exists() \
    and shutil.which("ping") is not None
if not ROOT_AND_FRR and IN_CI:
    raise RuntimeError("CI must run the emulation: root, FRR and iputils-ping (`make test` installs them)")
needs_lab = pytest.mark.skipif(not ROOT_AND_FRR, reason="needs root, FRR and ping (`make test` installs them)")

CONFIGS = {"eos": ("*.cfg", eos.translate), "nvue": ("*.nvue.yaml", nvue.translate),
           "sonic": ("*/config_db.json", sonic.translate)}


def test_every_routed_platform_has_its_translator_tests() -> None:
    """The tests below run per platform of CONFIGS: a routed platform missing here would be untested."""
    from fabgen.spec.platforms import routed

    assert set(CONFIGS) == set(routed())
    assert all(CONFIGS[n][0].endswith(p.config_file.lstrip("/")) for n, p in routed().items())


def _role(path: Path) -> str:
    """The role of the fabric a golden switch config belongs to (its case's report.json)."""
    case, fabric = path.relative_to(GOLDEN).parts[:2]
    return _roles(case).get(fabric, "compute")


@functools.cache
def _roles(case: str) -> dict[str, str]:
    report = json.loads((GOLDEN / case / "report.json").read_text())["fabrics"]
    # a GPU overlay fabric (host_addressing evpn) is read by the overlay's own lab, not the routed translators
    return {name: "overlay" if (f.get("addressing") or {}).get("host_addressing") == "evpn"
            else f.get("role", "compute") for name, f in report.items()}


def _goldens(platform: str, role: str | None = None) -> list[Path]:
    """Golden switch configs of the routed fabrics (role northsouth and the GPU overlay: their own
    translators)."""
    pattern, _ = CONFIGS[platform]
    return sorted(p for p in GOLDEN.glob(f"*/*/switches/{pattern}") if "oob" not in p.parts[-3]
                  and not re.search(r"-(access|mgmt)\d{4}", p.name)
                  and ((_role(p) == role) if role else _role(p) not in ("northsouth", "overlay")))


@pytest.mark.parametrize("platform", sorted(CONFIGS))
def test_every_rendered_switch_config_translates(platform: str) -> None:
    files = _goldens(platform)
    assert files
    sessions = 0
    for path in files:
        r = CONFIGS[platform][1](path.stem, path.read_text(), str(path))
        assert r.asn > 0 and r.router_id and r.loopbacks and r.networks, path
        sessions += len(r.neighbors)
    assert sessions  # a one-switch fabric has none; the others do


@pytest.mark.parametrize("platform,edit,words", [
    ("eos", lambda t: t.replace("   no switchport\n", "   no switchport\n   ip pim sparse-mode\n", 1),
     "does not know 'ip pim sparse-mode' in interface"),
    ("eos", lambda t: t.replace("router bgp", "router ospf 1\n!\nrouter bgp", 1), "does not know 'router ospf 1'"),
    ("eos", lambda t: t.replace("   maximum-paths", "   bgp bestpath tie-break router-id\n   maximum-paths", 1),
     "in router bgp"),
    ("nvue", lambda t: t.replace("\n    router:\n", "\n    router:\n      ospf: {enable: on}\n", 1),
     "does not know router/ospf/enable"),
    ("sonic", lambda t: t.replace('"BGP_GLOBALS": {', '"BGP_ALLOWED_PREFIXES": {},\n    "BGP_GLOBALS": {', 1),
     "does not know table BGP_ALLOWED_PREFIXES"),
    ("sonic", lambda t: t.replace('"max_ebgp_paths": "64"', '"max_ebgp_paths": "64", "max_ibgp_paths": "8"', 1),
     "does not know max_ibgp_paths"),
])
def test_a_line_or_key_the_translator_does_not_know_is_an_error(platform: str, edit, words: str) -> None:
    path = _goldens(platform)[0]
    text = edit(path.read_text())
    assert text != path.read_text(), "the test must change the file"
    with pytest.raises(TranslateError) as exc:
        CONFIGS[platform][1](path.stem, text, str(path))
    assert words in str(exc.value) and str(path) in str(exc.value)


def test_a_port_speed_is_physical_and_another_link_key_is_not() -> None:
    """`link speed` (cabling.<tier>.speed, where a fabric's tiers run at their own speeds) is left out
    of the lab as the MTU and the breakout are (a veth has no speed); a link key fabgen never writes
    is still an error naming the file."""
    path = _goldens("nvue")[0]
    text = path.read_text()
    head = "\n        link:\n          mtu: 9100\n"
    assert head in text
    r = CONFIGS["nvue"][1](path.stem, text.replace(head, head + "          speed: 400G\n"), str(path))
    assert r.neighbors
    with pytest.raises(TranslateError) as exc:
        CONFIGS["nvue"][1](path.stem, text.replace(head, head + "          fec: rs\n", 1), str(path))
    assert "link/fec" in str(exc.value) and str(path) in str(exc.value)


@pytest.mark.skipif(VTYSH is None, reason="FRR's vtysh is not installed")
@pytest.mark.parametrize("platform", sorted(CONFIGS))
def test_frr_parses_every_config_the_emulation_writes(platform: str, tmp_path: Path) -> None:
    """`vtysh --dryrun` (FRR's own parser, no daemon) accepts the frr.conf written for a switch of
    every platform, with FRR's BFD timers and with the large lab's BFD profile, and refuses one
    with a broken line."""
    for path in _goldens(platform)[:3]:
        r = CONFIGS[platform][1](path.stem, path.read_text(), str(path))
        bfd = any(g.bfd for g in r.groups.values()) or any(n.bfd for n in r.neighbors)
        for slow in (False, True):
            conf = tmp_path / f"{path.stem}.conf"
            text = frr_conf(r, {p: f"p{k}" for k, p in enumerate(r.unnumbered, 1)}, slow_bfd=slow)
            assert ("bfd profile lab" in text) == (slow and bfd) and ("interval 2000" in text) == (slow and bfd)
            assert (" timers bgp 10 30" in text) == slow
            conf.write_text(text)
            done = subprocess.run([VTYSH, "--dryrun", "-f", str(conf)], capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, (path, done.stdout[-2000:], done.stderr[-2000:])
    conf.write_text(conf.read_text().replace(" bgp router-id", " bgp router-idd", 1))
    done = subprocess.run([VTYSH, "--dryrun", "-f", str(conf)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0


def test_the_evpn_translator_reads_every_northsouth_switch() -> None:
    """Every NVUE file of a northsouth golden: leaves with their segments (one per node, bond by
    bond), uplinks, both tenants with VNI, VRF, SVI and anycast gateway, the VRFs' layer-3 VNIs;
    spines with EVPN on their peer groups; a bond without its segment is an error naming the file."""
    from fabgen.emulate import evpn

    files = _goldens("nvue", role="northsouth")
    assert files
    segments = 0
    for path in files:
        sw = evpn.translate(path.name.split(".")[0], path.read_text(), str(path))
        assert sw.asn and sw.loopback and sw.unnumbered and any(sw.groups.values()), path
        if "leaf" in path.name:
            # NVIDIA's examples' routed out-of-band network (oob_design routed) on their pair: VRF OOB and
            # VLAN 200 on VNI 4200 read as a tenant without nodes, the sessions to the SN2201 left out
            oob = {"OOB"} if path.parts[-4].startswith("era-") else set()
            assert sw.vtep == sw.router_id and sw.uplinks and set(sw.l3vnis) - set(sw.border) == {
                "STORAGE", "INBAND", *oob}
            assert (sw.oob_sessions > 0) == bool(oob) and (not oob or sw.tenants[200].vni == 4200), path
            # NVIDIA's examples' way out (a VRF with sessions of its own) on every leaf of theirs, none elsewhere
            assert sw.border == ({"EXIT"} if path.parts[-4].startswith("era-") else set()), path
            # fabgen's default numbers, or NVIDIA's (era-2-8-9-400: 500/4500 STORAGE, 300/4300 INBAND)
            assert {t.vlan: (t.vni, t.vrf) for t in sw.tenants.values() if t.vrf not in oob} in (
                {20: (10020, "STORAGE"), 30: (10030, "INBAND")}, {500: (4500, "STORAGE"), 300: (4300, "INBAND")})
            segments += len(sw.segments)
    legs = sum(1 for fabric in {p.parents[1] for p in files}
               for row in csv.DictReader((fabric / "cabling.csv").open()) if row["tier"] == "node-leaf")
    assert segments == legs > 0  # a segment for every node's leg on every leaf
    text = files[-1].read_text()
    broken = re.sub(r"\n +segment:\n( +[a-z-]+: [^\n]+\n)+", "\n", text, count=1)
    assert broken != text
    with pytest.raises(TranslateError) as exc:
        evpn.translate("x", broken, str(files[-1]))
    assert str(files[-1]) in str(exc.value)


@pytest.mark.skipif(VTYSH is None, reason="FRR's vtysh is not installed")
def test_frr_parses_the_evpn_multihoming_config_the_emulation_writes(tmp_path: Path) -> None:
    """`vtysh --dryrun` accepts the EVPN frr.conf of a leaf (segments, uplinks, VRF VNIs, EVPN on
    the peer groups, the tenants' VRFs) and of a spine, and refuses a broken segment line."""
    from fabgen.emulate import evpn

    files = [p for p in _goldens("nvue", role="northsouth") if p.parts[-4] == "gb300-northsouth"]
    leaf = next(p for p in files if "leaf" in p.name)
    spine = next(p for p in files if "spine" in p.name)
    for path in (leaf, spine):
        text = evpn.frr_conf(evpn.translate(path.name.split(".")[0], path.read_text(), str(path)))
        conf = tmp_path / f"{path.name}.conf"
        conf.write_text(text)
        done = subprocess.run([VTYSH, "--dryrun", "-f", str(conf)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (path, done.stdout[-2000:], done.stderr[-2000:])
    leaf_text = (tmp_path / f"{leaf.name}.conf").read_text()
    assert re.search(r"^ evpn mh es-id \d+$", leaf_text, re.M) and "  advertise-all-vni\n" in leaf_text
    assert " vni 4020\n" in leaf_text and "router bgp 4200020008 vrf STORAGE\n" in leaf_text
    conf.write_text(leaf_text.replace(" evpn mh es-sys-mac", " evpn mh es-sys-mack", 1))
    done = subprocess.run([VTYSH, "--dryrun", "-f", str(conf)], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0


def test_widths_follow_bgp_path_selection() -> None:
    """Two leaves under two spines of one AS with two links each: a leaf reaches the other's
    prefixes over 4 sessions; spines of one AS never learn each other's; a third leaf behind one
    spine only is reached over that spine's 2 links, and a port down costs its own leaf one path."""
    p = Plan(asn={"l1": 1, "l2": 2, "l3": 3, "s1": 10, "s2": 10},
             sessions=[("l1", "a", "s1", "1"), ("l1", "b", "s1", "2"), ("l1", "c", "s2", "1"), ("l1", "d", "s2", "2"),
                       ("l2", "a", "s1", "3"), ("l2", "b", "s1", "4"), ("l2", "c", "s2", "3"), ("l2", "d", "s2", "4"),
                       ("l3", "a", "s1", "5"), ("l3", "b", "s1", "6")],
             origins={"l1": ["10.0.1.0/24"], "l2": ["10.0.2.0/24"], "l3": ["10.0.3.0/24"], "s1": ["10.9.0.1/32"],
                      "s2": ["10.9.0.2/32"]})
    w = p.widths()
    assert w["l1"]["l2"] == 4 and w["l1"]["l3"] == 2 and w["l3"]["l1"] == 2
    assert w["s1"]["s2"] == 0 and w["s2"]["s1"] == 0  # the spine AS in the path: refused
    assert w["s1"]["l1"] == 2 and w["l1"]["s1"] == 2
    # l1's port a down: l1 loses that path; l2 keeps 4 (s1 still reaches l1 over port b)
    assert p.widths({("l1", "a")})["l1"]["l2"] == 3 and p.widths({("l1", "a")})["l2"]["l1"] == 4


# The command, on namespaces ------------------------------------------------------------------------

def emulate(*args: object, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabgen", "emulate", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=labtrace.env())


def fabgen(*args: object, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabgen", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def _machine() -> tuple[set[str], dict[str, str], list[str], list[str]]:
    """The namespaces, neighbour-table settings, namespace mounts and run directories of this test
    run's labs (tests/labtrace.py: another run's labs on the machine are left out), to compare
    before and after. The kernel settings are the machine's: read only while no other run's lab
    is alive (an empty dict otherwise)."""
    ns, others = labtrace.namespaces()
    keys = [f"net.{v}.neigh.default.gc_thresh{k}" for v in ("ipv4", "ipv6") for k in (1, 2, 3)]
    settings = {} if others else {
        k: subprocess.run(["sysctl", "-n", k], capture_output=True, text=True).stdout.strip() for k in keys}
    return ns, settings, labtrace.mounts(), labtrace.run_dirs()


@pytest.fixture
def clean(tmp_path_factory, monkeypatch):
    """Asserts, after the test, that the run left nothing behind. A lab run in the test's own
    process keeps its run directory in this run's directory too."""
    tmp_path_factory.getbasetemp()  # pytest's own temporary tree stays where it is
    monkeypatch.setattr(tempfile, "tempdir", str(labtrace.LABS_TMP))
    before = _machine()
    yield
    after = _machine()
    assert after[0] == before[0], f"namespaces left: {after[0] - before[0]}"
    if before[1] and after[1]:
        assert after[1] == before[1], "a kernel setting was not restored"
    assert after[2] == before[2], f"namespace mounts left: {set(after[2]) - set(before[2])}"
    assert after[3] == before[3], f"run directories left: {set(after[3]) - set(before[3])}"
    assert not labtrace.daemons_left(), "an FRR daemon of the run is still running"


@pytest.fixture(scope="module")
def renders(tmp_path_factory) -> dict[str, Path]:
    out: dict[str, Path] = {}
    base = tmp_path_factory.mktemp("emulate")
    for case in ("roce-2node", "roce-3tier", "fattree-2to1", "spectrumx-1su", "superpod-cluster"):
        render_to(INVENTORIES / f"{case}.yaml", base / case)
        out[case] = base / case
    return out


@needs_lab
@pytest.mark.integration
@pytest.mark.parametrize("case,fails", [
    ("roce-3tier", ["eth-su001-leaf1:Ethernet33/1"]),  # EOS three tiers; an uplink failed: one path fewer
    ("fattree-2to1", []),  # SONiC fat-tree 2:1 (frrcfgd's prefix sets and route maps)
    ("spectrumx-1su", ["sx-spine01"]),  # Spectrum-X, BGP unnumbered; a whole spine failed
    ("superpod-cluster", []),  # EOS storage with BGP to the hosts (their frr.conf unmodified), SONiC in-band
])
def test_the_examples_converge_with_the_planned_widths(renders: dict[str, Path], case: str, fails: list[str],
                                                       tmp_path: Path, clean) -> None:
    frr_based = case in ("fattree-2to1", "spectrumx-1su")  # their FRR state is saved and verified
    state = tmp_path / "state"
    res = emulate(renders[case], *[x for f in fails for x in ("--fail", f)], "--format", "json",
                  *(["--save-state", state] if frr_based else []))
    _passed(res)
    result = json.loads(res.stdout)
    assert result["ok"] and result["routers"] > 0 and result["links"] > 0
    assert any("management plane" in n for n in result["notes"])
    if fails:
        assert any("--fail took" in n for n in result["notes"])
    if frr_based:
        _saved_state_verifies(renders[case], state, tmp_path)


def _saved_state_verifies(render: Path, state: Path, tmp_path: Path) -> None:
    """fabgen verify --frr holds the saved FRR JSON to the plan: all of it passes; a copy with a
    session down, a peer at another ASN, an ECMP path gone and a BFD peer down fails on exactly those."""
    switches = {p.name.split(".")[0] for p in state.iterdir()}
    assert {p.suffixes[-2] for p in state.iterdir()} >= {".bgp", ".routes"}
    ok = fabgen("verify", render, "--frr", state, "--format", "json")
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr
    assert json.loads(ok.stdout)["states"] == len(switches)
    broken = tmp_path / "broken-state"
    shutil.copytree(state, broken)
    leaf = sorted(s for s in switches if "leaf" in s)[0]
    spine = sorted(s for s in switches if "spine" in s)[0]
    bgp = json.loads((broken / f"{leaf}.bgp.json").read_text())
    first, second = sorted(bgp["peers"])[:2]
    bgp["peers"][first]["state"] = "Active"
    bgp["peers"][second]["remoteAs"] = 64999
    (broken / f"{leaf}.bgp.json").write_text(json.dumps(bgp))
    routes = json.loads((broken / f"{spine}.routes.json").read_text())
    wide = next(p for p, rs in sorted(routes.items()) if rs[0].get("protocol") == "bgp" and len(rs[0]["nexthops"]) > 1)
    routes[wide][0]["nexthops"] = routes[wide][0]["nexthops"][1:]
    (broken / f"{spine}.routes.json").write_text(json.dumps(routes))
    expected = {("bgp-session", leaf, first), ("bgp-asn", leaf, second), ("ecmp-width", spine, wide)}
    bfd_file = broken / f"{spine}.bfd.json"
    if bfd_file.exists():
        peers = json.loads(bfd_file.read_text())
        peers[0]["status"] = "down"
        bfd_file.write_text(json.dumps(peers))
        numbered = not peers[0]["peer"].startswith("fe80:")  # unnumbered peers are named by their port
        expected.add(("bfd", spine, peers[0]["peer"] if numbered else peers[0]["interface"]))
    bad = fabgen("verify", render, "--frr", broken, "--format", "json")
    assert bad.returncode == 1, bad.stdout[-3000:] + bad.stderr
    found = {(f["kind"], f["device"], f["port"]) for f in json.loads(bad.stdout)["findings"]}
    assert found == expected
    (broken / f"{leaf}.routes.json").write_text("{not json")
    assert fabgen("verify", render, "--frr", broken).returncode == 2


UNSEEN = """version: 1
cluster: u
node_groups:
  - {{name: gpu, model: {model}, count: {count}, hostname: "n{{n:02d}}"}}
fabrics:
  - name: f
    kind: {kind}
    platform: {platform}
    topology: {topology}
    switch_model: {switch}
    node_groups: [gpu]
    {extra}
    management: {{prefix: 192.168.7.0/24, users: [{{name: ops, password_hash: {{env: H}}}}]}}
"""


@needs_lab
@pytest.mark.integration
@pytest.mark.parametrize("shape", ["sonic-3tier", "sx-2planes", "eos-leafsubnet-2tier", "sx-nvl72-rail-groups"])
def test_unseen_shapes_converge(shape: str, tmp_path: Path, clean) -> None:
    params = {
        "sonic-3tier": dict(model="dgx-h100", count=8, kind="roce", platform="sonic", topology="rail-optimized",
                            switch="sn5600-sonic", extra="tiers: 3\n    scalable_unit: 4"),
        "sx-2planes": dict(model="dgx-b300", count=8, kind="spectrum-x", platform="nvue", topology="rail-optimized",
                           switch="sn5600", extra="planes: 2\n    tiers: 2"),
        # units of spine-leaf groups (docs/hardware.md): 2 units of 2 GB300 racks, a group of 2 leaves and
        # 2 spines per rail, 8 groups joined by 2 core groups of 3 (38 routers, 72 trays)
        "sx-nvl72-rail-groups": dict(model="gb300-nvl72", count=72, kind="spectrum-x", platform="nvue",
                                     topology="rail-optimized", switch="sn5600", extra="scalable_unit: 36"),
        "eos-leafsubnet-2tier": dict(model="dgx-h100", count=8, kind="roce", platform="eos", topology="fat-tree",
                                     switch="arista-7060x5",
                                     extra="tiers: 2\n    ethernet: {host_addressing: leaf-subnet}"),
    }[shape]
    inv = tmp_path / "inv.yaml"
    inv.write_text(UNSEEN.format(**params))
    render_to(inv, tmp_path / "out")
    res = emulate(tmp_path / "out")
    _passed(res)
    assert "PASS" in res.stdout and "FAIL" not in res.stdout


@needs_lab
@pytest.mark.integration
def test_a_large_lab_runs_bfd_at_lab_timers_and_releases_its_ports(tmp_path: Path, clean,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """What a lab beyond BFD_DEFAULT_UP_TO routers does, on a small fabric (the threshold set to 0):
    the switch ports start down and come up together once every daemon runs, BFD runs through the
    `lab` profile at 2 s, and every check still passes; each BFD peer's FRR state shows the timers."""
    from fabgen.emulate import run

    inv = tmp_path / "inv.yaml"
    inv.write_text(UNSEEN.format(model="dgx-h100", count=8, kind="roce", platform="sonic", topology="rail-optimized",
                                 switch="sn5600-sonic", extra="tiers: 3\n    scalable_unit: 4"))
    render_to(inv, tmp_path / "out")
    monkeypatch.setattr(run, "BFD_DEFAULT_UP_TO", 0)
    stages: list[str] = []
    result = run.emulate(tmp_path / "out", save_state=tmp_path / "state", progress=stages.append)
    assert result.ok, [f.as_dict() for f in result.findings][:10]
    assert any(s.startswith("bringing ") and s.endswith(" switch ports up") for s in stages), stages
    assert any("BFD at 2000 ms x 10, BGP keepalive and hold at 10 and 30 s" in n for n in result.notes), result.notes
    peers = [p for f in sorted((tmp_path / "state").glob("*.bfd.json")) for p in json.loads(f.read_text())]
    assert peers and all(p["status"] == "up" for p in peers)
    assert ({(p["receive-interval"], p["transmit-interval"], p["detect-multiplier"]) for p in peers}
            == {(2000, 2000, 10)})


# Sampling: a fabric beyond the router budget ------------------------------------------------------

# 1 core, 2 pods of 1 spine + 16 leaves
PODS = UNSEEN.format(model="dgx-h100", count=16, kind="roce", platform="sonic", topology="rail-optimized",
                     switch="sn5600-sonic", extra="tiers: 3\n    scalable_unit: 4")


def _sample_plan(out: Path):
    from fabgen.emulate.read import fabrics_of, read_fabric
    from fabgen.rendered import read as rendered

    (fab,) = [read_fabric(files, f) for files in [rendered.read_render(out)] for f in fabrics_of(files, None)]
    return fab


def test_the_sample_is_chosen_from_the_plan(tmp_path: Path) -> None:
    """The top tier, then whole pods in order, then as many leaves of the next pod as fit (with its
    spine); a two-plane fabric plane by plane. Nothing of the lab: the choice alone."""
    from fabgen.emulate import sample

    inv = tmp_path / "inv.yaml"
    inv.write_text(PODS)
    render_to(inv, tmp_path / "out")
    fab = _sample_plan(tmp_path / "out")
    roles = fab.plan.roles
    leaves = sorted(d for d, r in roles.items() if r == "leaf")
    assert sorted(r for r in roles.values() if r != "leaf") == ["core", "spine", "spine"] and len(leaves) == 32
    hosts_of: dict[str, set[str]] = {}
    for c in fab.cables:
        hosts_of.setdefault(c["z_device"], set()).add(c["a_device"])
    kept, nodes = sample.choose(fab.plan, hosts_of, 24, 512, 10**6)
    first_spine = sorted(d for d, r in roles.items() if r == "spine")[0]
    pod1 = sorted({c["a_device"] for c in fab.cables if c["z_device"] == first_spine} & set(leaves))
    assert len(pod1) == 16
    assert len(kept) == 24 and set(pod1) <= kept  # 1 core + pod 1 (1 spine, 16 leaves) + pod 2's spine + 5 leaves
    assert {d for d in kept if roles[d] != "leaf"} == {d for d, r in roles.items() if r != "leaf"}
    assert sorted(set(leaves) - set(pod1))[:5] == sorted(kept - set(pod1) - {d for d in kept if roles[d] != "leaf"})
    assert nodes == set().union(*(hosts_of[leaf] for leaf in kept & set(leaves)))  # every kept leaf's nodes
    assert sample.choose(fab.plan, hosts_of, 2, 512, 10**6) == (set(), set())  # the core and a spine, no leaf: nothing
    # the node budget bounds the nodes, not the switches: every switch, the leaves' nodes in order
    # (a unit's four nodes on each of its rail leaves, then the next unit's) until six
    switches, six = sample.choose(fab.plan, hosts_of, 400, 6, 10**6)
    assert len(hosts_of[leaves[0]]) == 4 and hosts_of[leaves[0]] == hosts_of[leaves[1]]
    following = sorted(hosts_of[next(leaf for leaf in leaves if hosts_of[leaf] != hosts_of[leaves[0]])])
    assert switches == set(roles) and six == hosts_of[leaves[0]] | set(following[:2]), sorted(six)
    # the session budget bounds the switches: no more BGP sessions among them than it allows, and the
    # next leaf in order would have passed it
    few, _ = sample.choose(fab.plan, hosts_of, 400, 512, 78)
    among = [s for s in fab.plan.sessions if s[0] in few and s[2] in few]
    nxt = sorted(set(leaves) - few)[0]
    more = [s for s in fab.plan.sessions if {s[0], s[2]} <= few | {nxt}]
    assert few & set(leaves) and len(among) <= 78 < len(more), (len(among), len(more))


def test_the_command_line_budget_is_the_measured_one() -> None:
    """`--max-routers` defaults to run.MAX_ROUTERS, the budget benchmarks/results-emulate.md measured."""
    import inspect

    from fabgen import cli
    from fabgen.emulate.run import MAX_HOSTS, MAX_ROUTERS, MAX_SESSIONS

    params = inspect.signature(cli.emulate).parameters
    assert params["max_routers"].default.default == MAX_ROUTERS
    assert params["max_nodes"].default.default == MAX_HOSTS
    assert params["max_sessions"].default.default == MAX_SESSIONS


def test_planes_are_sampled_one_by_one() -> None:
    """Two planes at a budget that holds one: the first plane whole, nothing of the second (its
    switches and cables), every node kept through its first-plane ports; the note says so."""
    from fabgen.emulate import sample
    from fabgen.emulate.read import fabrics_of, read_fabric
    from fabgen.emulate.run import _sampled
    from fabgen.rendered import read as rendered

    files = rendered.read_render(GOLDEN / "b300-spectrumx-2plane")
    fabs = [read_fabric(files, f) for f in fabrics_of(files, None)]
    assert [(f.name, sample.routers_of(f)) for f in fabs] == [("sx", 48)]
    kept, notes = _sampled(fabs, 28, 512)
    (fab,) = kept
    planes = {d.split("-")[1] for d in fab.routers}
    assert planes == {"plane1"} and len(fab.routers) == 24, sorted(fab.routers)
    assert all("plane2" not in c["a_device"] + c["z_device"] for c in fab.cables)
    assert len(fab.hosts) == 64
    assert len(notes) == 1 and "fabric sx sampled: 24 of 48 switches, 64 of 64 nodes" in notes[0]
    whole, none = _sampled([read_fabric(files, f) for f in fabrics_of(files, None)], 48, 512)
    assert len(whole[0].routers) == 48 and none == []  # at 48 it fits whole, without a note


@needs_lab
@pytest.mark.integration
def test_a_fabric_beyond_the_budget_is_sampled_and_still_checked(tmp_path: Path, clean) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(PODS)
    render_to(inv, tmp_path / "out")
    res = emulate(tmp_path / "out", "--max-routers", "24", "--format", "json")
    _passed(res)
    result = json.loads(res.stdout)
    assert result["ok"] and result["routers"] == 24
    assert any("sampled: 24 of 35 switches" in n for n in result["notes"])
    # a leaf of the sample at the wrong ASN: the sampled run fails and names it
    fab = _sample_plan(tmp_path / "out")
    leaf = sorted(d for d, r in fab.plan.roles.items() if r == "leaf")[0]
    db = tmp_path / "out" / "f" / "switches" / leaf / "config_db.json"
    asn = str(fab.plan.asn[leaf])
    text = db.read_text()
    assert f'"local_asn": "{asn}"' in text
    db.write_text(text.replace(f'"local_asn": "{asn}"', '"local_asn": "4200099999"'))
    relist(tmp_path / "out", f"f/switches/{leaf}/config_db.json")
    bad = emulate(tmp_path / "out", "--max-routers", "24", "--format", "json")
    assert bad.returncode == 1, (bad.stdout[-2000:], bad.stderr[-2000:])
    assert leaf in json.loads(bad.stdout)["failed"]


def _passed(res: subprocess.CompletedProcess) -> None:
    """A run that must pass; on failure its whole verdict, untruncated, is the test's message."""
    if res.returncode != 0:
        pytest.fail(f"exit {res.returncode}\n--- stdout\n{res.stdout[-6000:]}\n--- stderr\n{res.stderr[-3000:]}",
                    pytrace=False)


@needs_lab
@pytest.mark.integration
def test_a_sample_beside_a_whole_fabric_sharing_its_nodes(renders: dict[str, Path], clean) -> None:
    """superpod-cluster's storage nodes route (BGP to the storage leaves) and sit on the in-band
    fabric too: sampling the storage fabric leaves some out, and those run no BGP speaker while
    their in-band ports stay (once a KeyError, found by CI)."""
    res = emulate(renders["superpod-cluster"], "--max-routers", "60", "--format", "json")
    _passed(res)
    result = json.loads(res.stdout)
    assert result["ok"] and result["fabrics"] == ["internalnet", "storagenet"]
    # the switches first (all ten fit), then the routing nodes (each one router more) while the 60 hold
    assert any("fabric storagenet sampled: 10 of 10 switches, 47 of 68 nodes" in n for n in result["notes"])


def _broken(renders: dict[str, Path], tmp_path: Path, case: str, path: str, edit) -> Path:
    out = tmp_path / "broken"
    shutil.copytree(renders[case], out)
    target = out / path
    text = target.read_text()
    changed = edit(text)
    assert changed != text, "the test must break the file"
    target.write_text(changed)
    relist(out, path)
    return out


def relist(out: Path, rel: str) -> None:
    """The manifest's entry for `rel` made to match the file as edited (the editor updates both):
    these tests break the routing on purpose, not the render's integrity (test_hostile_emulate)."""
    import hashlib

    doc = json.loads((out / "manifest.json").read_text())
    data = (out / rel).read_bytes()
    entry = next(e for e in doc["files"] if e["path"] == rel)
    entry.update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    (out / "manifest.json").write_text(json.dumps(doc))


@needs_lab
@pytest.mark.integration
@pytest.mark.parametrize("edit,device,why", [
    (lambda t: t.replace("router bgp 65101", "router bgp 65199"), "eth-su001-leaf1", "runs BGP as AS 65199"),
    (lambda t: re.sub(r"   neighbor 172\.16\.0\.0 peer group SPINES\n   neighbor 172\.16\.0\.0 remote-as 65010\n", "",
                      t), "eth-pod01-spine01", "sessions"),
    (lambda t: t.replace("      network 192.168.255.1/32\n", ""), "eth-su001-leaf1", "which it originates"),
    (lambda t: t.replace("interface Ethernet33/1\n", "interface Ethernet33/1\n   shutdown\n"), "eth-pod01-spine01",
     "sessions"),
])
def test_a_broken_render_fails_naming_the_device(renders: dict[str, Path], tmp_path: Path, edit, device: str,
                                                 why: str, clean) -> None:
    out = _broken(renders, tmp_path, "roce-3tier", "eth/switches/eth-su001-leaf1.cfg", edit)
    res = emulate(out, "--format", "json")
    assert res.returncode == 1, (res.stdout[-2000:], res.stderr[-2000:])
    result = json.loads(res.stdout)
    assert not result["ok"] and device in result["failed"]
    text = json.dumps(result)
    assert why in text
    if why.startswith(("runs", "which")):
        assert result["suspects"][0]["device"] == device


@needs_lab
@pytest.mark.integration
def test_bad_input_and_a_machine_that_cannot_are_exit_2(renders: dict[str, Path], tmp_path: Path, clean) -> None:
    assert emulate(tmp_path).returncode == 2  # not a render
    for args, words in ((["--fail", "nosuch:port"], "no switch or node"),
                        (["--fabric", "nosuch"], "no Ethernet fabric"),
                        (["--fail", "roce-leaf01:Ethernet99/9"], "no cabled port")):
        res = emulate(renders["roce-2node"], *args)
        assert res.returncode == 2 and words in res.stderr, res.stderr
    ib = tmp_path / "ib"
    render_to(INVENTORIES / "ib-3tier.yaml", ib)
    res = emulate(ib)
    assert res.returncode == 2 and "no RoCE or Spectrum-X fabric" in res.stderr
    broken = _broken(renders, tmp_path, "roce-2node", "roce/switches/roce-leaf01.cfg",
                     lambda t: t.replace("router bgp", "router isis x\n!\nrouter bgp", 1))
    res = emulate(broken)
    assert res.returncode == 2 and "roce-leaf01.cfg" in res.stderr and "router isis" in res.stderr



def test_a_user_who_is_not_root_is_told_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The command line as a user who is not root: exit 2, one line, nothing created."""
    from typer.testing import CliRunner

    from fabgen.cli import app

    render_to(INVENTORIES / "roce-2node.yaml", tmp_path / "out")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    result = CliRunner().invoke(app, ["emulate", str(tmp_path / "out")])
    assert result.exit_code == 2 and "run it as root" in result.output


@needs_lab
@pytest.mark.integration
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_an_interrupted_run_leaves_nothing(renders: dict[str, Path], clean, sig: signal.Signals) -> None:
    """Killed politely mid-run (a service manager's SIGTERM, Ctrl-C, a closed terminal): every
    namespace, mount, daemon, kernel setting and run directory is gone (the `clean` fixture)."""
    proc = subprocess.Popen([sys.executable, "-m", "fabgen", "emulate", str(renders["roce-3tier"])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=labtrace.env())
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not labtrace.namespaces()[0]:
            time.sleep(0.2)
        time.sleep(3)  # well inside the run: namespaces and daemons exist
        assert proc.poll() is None, "the run ended before it was interrupted: nothing was tested"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode in (130, 2), err


def test_show_commands_go_to_the_daemon_over_its_vty_socket(tmp_path: Path) -> None:
    """The state is read as vtysh reads it, without a vtysh process per question: a session in
    enable mode, the command and a NUL, the answer up to three NULs and the return code (FRR's
    vtysh.c); a failing command or a silent daemon is a LabError within the bound, never a hang."""
    import socket
    import threading

    from fabgen.emulate.lab import LabError, _daemon_of, vty_query

    assert [_daemon_of(c) for c in ("show bgp ipv4 unicast summary json", "show ip bgp summary",
                                    "show bfd peers json", "show ip route", "show ip route json")] == \
        ["bgpd", "bgpd", "bfdd", "zebra", "zebra"]
    path = tmp_path / "bgpd.vty"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    heard: list[list[str]] = []

    def serve() -> None:
        for answers in ((b"", b'{"as": 65001}\n'), (b"", b"% Unknown command\n"), None):
            conn, _ = server.accept()
            with conn:
                if answers is None:  # a daemon that never answers
                    conn.recv(100)
                    time.sleep(1.5)
                    continue
                lines, buf = [], b""
                for k, text in enumerate(answers):
                    while b"\0" not in buf:
                        buf += conn.recv(100)
                    line, _, buf = buf.partition(b"\0")
                    lines.append(line.decode())
                    code = 0 if k == 0 or b"Unknown" not in text else 2
                    for part in (text[:5], text[5:] + b"\0\0\0" + bytes([code])):  # the answer in pieces
                        conn.sendall(part)
                heard.append(lines)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    assert vty_query(path, "show bgp ipv4 unicast summary json") == '{"as": 65001}\n'
    with pytest.raises(LabError, match="failed .code 2.*Unknown command"):
        vty_query(path, "show nonsense")
    start = time.monotonic()
    with pytest.raises(LabError, match="no answer"):
        vty_query(path, "show bgp summary", timeout=0.5)
    assert time.monotonic() - start < 1.4
    t.join(timeout=5)
    server.close()
    assert heard == [["enable", "show bgp ipv4 unicast summary json"], ["enable", "show nonsense"]]


NORTHSOUTH = """\
version: 1
cluster: ns-lab
node_groups:
  - {name: gpu, model: dgx-h100, count: 4, hostname: "gpu{n}"}
  - {name: nas, model: nas, role: storage, count: 2, hostname: "nas{n}"}
node_models:
  nas:
    gpus: 0
    ports:
      - {role: storage, rdma: mlx5_0, netdev: enp1s0f0np0, speed: 400}
      - {role: storage, rdma: mlx5_1, netdev: enp1s0f1np1, speed: 400}
fabrics:
  - name: ns
    role: northsouth
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    switch_model: sn5600
    node_groups: [gpu, nas]
    scalable_unit: 2
    planned_nodes: 4
    ethernet:
      northsouth: {border: {router: site-router}}
"""


@needs_lab
@pytest.mark.integration
def test_a_northsouth_fabric_reaches_storage_over_either_leaf(tmp_path: Path, clean) -> None:
    """EVPN multihoming in FRR from the rendered NVUE files: each DGX and NAS bonded to its leaf
    pair (one LACP partner), every segment shared by the pair, every node reaching the NAS's
    storage addresses and the in-band gateway, and again with one leaf of every pair down; the way
    out (northsouth.border) run against a stand-in site router: its sessions, the tenants' subnets
    sent out, the site in the border and tenant VRFs, every node reaching the site. A leaf whose
    bond carries another segment id than its pair's is caught, and one whose inbound route-map takes
    the fabric's own prefix back from the site. The GPU overlay's lab has a test of its own
    (test_the_gpu_overlay_runs_in_frr)."""
    inv = tmp_path / "ns.yaml"
    inv.write_text(NORTHSOUTH)
    assert fabgen("render", inv, "-o", tmp_path / "out").returncode == 0
    res = emulate(tmp_path / "out", "--format", "json")
    missing = _kernel_missing()
    if missing:  # this machine's (and CI's) kernel: refused, saying why; then the lab runs in a VM
        assert res.returncode == 2, (res.stdout[-2000:], res.stderr[-2000:])
        assert all(option in res.stderr for option in missing), res.stderr
        lacking = evpn_vm.missing()
        if lacking:
            if IN_CI:
                raise RuntimeError(f"CI must have {', '.join(lacking)}: `make test` installs them")
            pytest.skip(f"the EVPN lab needs {', '.join(missing)} (refused as it should be) and the VM that "
                        f"would run it {', '.join(lacking)} (`make test` installs them)")

    shutil.copytree(tmp_path / "out", tmp_path / "broken")
    leaf = tmp_path / "broken" / "ns" / "switches" / "ns-su01-leaf2.nvue.yaml"
    text = leaf.read_text()
    assert "local-id: 1\n" in text
    leaf.write_text(text.replace("local-id: 1\n", "local-id: 77\n", 1))
    deny = '          INBOUND_ERA_PREFIXES:\n            rule:\n              "10":\n                action:\n' \
           '                  deny: {}\n'
    assert deny in leaf.read_text()
    leaf.write_text(leaf.read_text().replace(deny, deny.replace("deny: {}", "permit: {}")))
    relist(tmp_path / "broken", "ns/switches/ns-su01-leaf2.nvue.yaml")
    # and NVIDIA's collapsed pair (one GB300 rack sized by racks): two leaves, iBGP over 20 peer links,
    # with NVIDIA's BGP details and its way out (the border VRF, its uplinks to a stand-in site router)
    pair_inv = tmp_path / "pair.yaml"
    pair_inv.write_text(gb300_inventory(1) + "      multipath_aspath_ignore: true\n"
                        "      northsouth: {vrf_loopbacks: true, border: {router: site-router}}\n")
    assert fabgen("render", pair_inv, "-o", tmp_path / "pair").returncode == 0
    renders: list[Path | tuple[Path, list[str]]] = [tmp_path / "out", tmp_path / "broken", tmp_path / "pair"]
    if missing:  # all in one VM boot: here or in the VM, fabgen emulate reads each render as it would on a host
        verdicts, console = evpn_vm.emulate(renders, tmp_path / "vm")
        said = console[-3000:]
    else:
        runs = [res, *(emulate(*((r,) if isinstance(r, Path) else (r[0], *r[1])), "--format", "json")
                       for r in renders[1:])]
        verdicts, said = [(r.returncode, r.stdout) for r in runs], "".join(r.stderr[-2000:] for r in runs)
    (code, stdout), (broken_code, broken_stdout), (pair_code, pair_stdout) = verdicts[:3]
    assert pair_code == 0, _verdict(pair_stdout, said)
    pair = json.loads(pair_stdout)
    assert pair["ok"] and pair["routers"] == 2 and any("down (every port)" in n for n in pair["notes"]), pair
    assert any("way out emulated: 10 uplinks of VRF EXIT to site-router" in n for n in pair["notes"]), pair["notes"]
    assert code == 0, _verdict(stdout, said)
    result = json.loads(stdout)
    assert result["ok"] and result["fabrics"] == ["ns"] and result["hosts"] == 6
    assert any("down (every port)" in n for n in result["notes"]), result["notes"]
    assert any("way out emulated" in n for n in result["notes"]), result["notes"]
    assert broken_code == 1, _verdict(broken_stdout, said)
    found = json.loads(broken_stdout)
    assert "ns-su01-leaf2" in found["failed"] and any(f["check"] == "segment" for f in found["findings"])
    taken = [f for f in found["findings"] if f["check"] == "border"]
    assert any(f["device"] == "ns-su01-leaf2" and "took" in f["message"] for f in taken), found["findings"]


@needs_lab
@pytest.mark.integration
def test_the_gpu_overlay_runs_in_frr(tmp_path: Path, clean) -> None:
    """The GPU EVPN overlay's plane (emulate/overlay.py) from its rendered NVUE files: every session,
    VNI, type-2 and type-5 route, NVIDIA's VRF loopbacks reached across the overlay, pings across
    rails, then with a leaf down; a leaf whose VLAN maps to another VNI is caught; the same fabric
    with a VLAN a rail (`overlay.vlans: rail`, NVIDIA's later output) passes too. Alone in its VM
    boot where this kernel cannot run the lab (`pytest -k gpu_overlay_runs`)."""
    overlay, overlay_broken = _overlay_renders(tmp_path)
    rail = _rail_render(tmp_path)
    plane1 = ["--fabric", "gpu-plane1"]
    res = emulate(overlay, *plane1, "--format", "json")
    missing = [m for m in _kernel_missing() if m != "CONFIG_BONDING"]  # the overlay's lab has no bonds
    if missing:  # refused, saying why; then the lab runs in a VM
        assert res.returncode == 2 and all(option in res.stderr for option in missing), res.stderr
        lacking = evpn_vm.missing()
        if lacking:
            if IN_CI:
                raise RuntimeError(f"CI must have {', '.join(lacking)}: `make test` installs them")
            pytest.skip(f"the overlay's lab needs {', '.join(missing)} and the VM {', '.join(lacking)}")
        verdicts, console = evpn_vm.emulate([(overlay, plane1), (overlay_broken, plane1), (rail, plane1)],
                                            tmp_path / "vm")
        said = console[-3000:]
    else:
        runs = [res, *(emulate(r, *plane1, "--format", "json") for r in (overlay_broken, rail))]
        verdicts, said = [(r.returncode, r.stdout) for r in runs], "".join(r.stderr[-2000:] for r in runs)
    _overlay_verdicts(verdicts[:2], said)
    code, stdout = verdicts[2]
    assert code == 0, _verdict(stdout, said)
    result = json.loads(stdout)
    assert result["ok"] and result["overlay"] == ["gpu-plane1"] and result["routers"] == 6 and result["hosts"] == 2
    assert any("gpu-plane1-su01-leaf1 down (every port)" in n for n in result["notes"]), result["notes"]
    vlans = {line.split()[0] for line in (rail / "gpu-plane1" / "switches" / "gpu-plane1-su01-leaf1.nvue.yaml")
             .read_text().splitlines() if re.fullmatch(r"vlan9\d\d:", line.strip())}
    assert len(vlans) == 4, vlans  # a VLAN (and SVI) a rail on the leaf: the lab ran the rail design


def _rail_render(tmp_path: Path) -> Path:
    """_overlay_renders' fabric with a VLAN a rail (tests/test_gpu_overlay_rails.py's overlay line)."""
    from test_gpu_overlay import INVENTORY
    from test_gpu_overlay_rails import RAIL

    inv = tmp_path / "rail.yaml"
    inv.write_text(INVENTORY.format(count=18, kind="spectrum-x", platform="nvue", model="sn5600", version="",
                                    extra=RAIL))
    assert fabgen("render", inv, "-o", tmp_path / "rail").returncode == 0
    return tmp_path / "rail"


def _overlay_renders(tmp_path: Path) -> tuple[Path, Path]:
    """tests/test_gpu_overlay.py's fabric (18 GB300 trays, two planes of four leaves and two spines)
    rendered, and a copy whose plane-1 leaf 2 maps the overlay's VLAN to another VNI (relisted)."""
    from test_gpu_overlay import INVENTORY

    inv = tmp_path / "overlay.yaml"
    inv.write_text(INVENTORY.format(count=18, kind="spectrum-x", platform="nvue", model="sn5600", version="",
                                    extra=""))
    assert fabgen("render", inv, "-o", tmp_path / "overlay").returncode == 0
    shutil.copytree(tmp_path / "overlay", tmp_path / "overlay-broken")
    rel = "gpu-plane1/switches/gpu-plane1-su01-leaf2.nvue.yaml"
    leaf = tmp_path / "overlay-broken" / rel
    text = leaf.read_text()
    assert '"245900": {}' in text
    leaf.write_text(text.replace('"245900": {}', '"245901": {}'))
    relist(tmp_path / "overlay-broken", rel)
    return tmp_path / "overlay", tmp_path / "overlay-broken"


def _overlay_verdicts(verdicts: list[tuple[int, str]], said: str) -> None:
    """The overlay's plane passes every check, then with its first leaf down; the broken copy fails:
    leaf 2's ports' type-2 routes missing on the other leaves (leaf 2 the first suspect), pings to and
    from its ports lost, and no leaf taken down."""
    (code, stdout), (broken_code, broken_stdout) = verdicts
    assert code == 0, _verdict(stdout, said)
    result = json.loads(stdout)
    assert result["ok"] and result["overlay"] == ["gpu-plane1"] and result["routers"] == 6 and result["hosts"] == 2
    assert any("gpu-plane1-su01-leaf1 down (every port)" in n for n in result["notes"]), result["notes"]
    assert any("4 VRF loopbacks" in n for n in result["notes"]), result["notes"]
    assert broken_code == 1, _verdict(broken_stdout, said)
    found = json.loads(broken_stdout)
    checks = {(f["device"], f["check"]) for f in found["findings"]}
    assert {("gpu-plane1-su01-leaf1", "type2"), ("gpu-plane1-su01-leaf3", "type2")} <= checks, found["findings"]
    assert any(c == "reach" for _, c in checks) and found["suspects"][0]["device"] == "gpu-plane1-su01-leaf2"
    assert not any("down (every port)" in n for n in found["notes"])


@needs_lab
@pytest.mark.integration
def test_the_lab_catches_a_node_whose_gateway_is_one_leafs_own_mac(clean) -> None:
    """The EVPN lab's gateway check reads each node's neighbour entry for its gateway: the anycast
    gateway's MAC passes; a leaf's own MAC (what a leaf's SVI answered for the anycast address
    before the lab set Cumulus's arp_ignore) or no entry is a finding naming both MACs. Run in a
    namespace of the test's own, on a veth (any kernel)."""
    from fabgen.emulate.evpn import LEAF_SYSCTLS, gateway_problems

    assert "net.ipv4.conf.all.arp_ignore=1" in LEAF_SYSCTLS
    ns = f"fabgen-gw-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True, timeout=30)
    try:
        for cmd in (["link", "add", "bond0.30", "type", "veth", "peer", "name", "p1"],
                    ["link", "set", "bond0.30", "up"],
                    ["addr", "add", "10.140.0.2/14", "dev", "bond0.30"]):
            subprocess.run(["ip", "-n", ns, *cmd], check=True, timeout=30)
        targets = [("bond0.30", "gateway:10.140.0.1"), ("bond0.30", "nas1:10.140.0.3")]
        macs = {"10.140.0.1": "00:00:5e:00:01:01"}
        assert gateway_problems(ns, targets, macs) == [
            "bond0.30 resolves gateway 10.140.0.1 to nothing, not the anycast gateway's 00:00:5e:00:01:01"]
        for mac, found in (("12:41:34:70:07:f8", True), ("00:00:5e:00:01:01", False)):
            subprocess.run(["ip", "-n", ns, "neigh", "replace", "10.140.0.1", "lladdr", mac, "dev", "bond0.30",
                            "nud", "reachable"], check=True, timeout=30)
            problems = gateway_problems(ns, targets, macs)
            assert bool(problems) == found and all("12:41:34:70:07:f8" in p for p in problems), problems
    finally:
        subprocess.run(["ip", "netns", "del", ns], timeout=30)


@needs_lab
@pytest.mark.integration
def test_the_labs_pings_name_exactly_the_unreachable_targets(tmp_path: Path, clean) -> None:
    """A node's pings run at once in one process in its namespace: the address it holds answers,
    an address on no link does not, and a name holding shell text is an argument (nothing run)."""
    from fabgen.emulate.evpn import unreachable

    ns, far = f"fabgen-ping-{os.getpid()}", f"fabgen-pong-{os.getpid()}"
    mark = tmp_path / "ran"
    for name in (ns, far):
        subprocess.run(["ip", "netns", "add", name], check=True, timeout=30)
    try:
        for where, cmd in ((ns, ["link", "add", "v0", "type", "veth", "peer", "name", "v1", "netns", far]),
                           (ns, ["link", "set", "v0", "up"]), (far, ["link", "set", "v1", "up"]),
                           (ns, ["addr", "add", "10.140.0.2/24", "dev", "v0"]),
                           (far, ["addr", "add", "10.140.0.3/24", "dev", "v1"])):
            subprocess.run(["ip", "-n", where, *cmd], check=True, timeout=30)
        hostile = f"v0;touch {mark}"
        pairs = [("v0", "10.140.0.3"), ("v0", "10.140.0.9"), (hostile, "10.140.0.3"), ("v0", f"$(touch {mark})"),
                 ("v0", "10.140.0.3")]
        assert unreachable(ns, pairs) == {("v0", "10.140.0.9"), (hostile, "10.140.0.3"), ("v0", f"$(touch {mark})")}
        assert unreachable(ns, []) == set() and not mark.exists()
        subprocess.run(["ip", "-n", far, "link", "set", "v1", "down"], check=True, timeout=30)
        assert ("v0", "10.140.0.3") in unreachable(ns, pairs)
    finally:
        for name in (ns, far):
            subprocess.run(["ip", "netns", "del", name], timeout=30)


def _verdict(stdout: str, said: str) -> str:
    """What a failed lab run found, one finding a line (pytest cuts a long assertion message short)."""
    try:
        found = json.loads(stdout)
    except ValueError:
        return f"no verdict:\n{stdout[-2000:]}\n{said[-2000:]}"
    return "\n".join([f"{f['device']} {f['check']}: {f['message']}" for f in found.get("findings", [])]
                     + found.get("notes", []))


def _kernel_missing() -> list[str]:
    """The kernel options of evpn.KERNEL_NEEDS this machine lacks, tried in a namespace of the test's own."""
    from fabgen.emulate.evpn import missing_in

    ns = f"fabgen-probe-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True, timeout=30)
    try:
        return missing_in(ns)
    finally:
        subprocess.run(["ip", "netns", "del", ns], timeout=30)

def test_a_plane_asked_for_is_emulated_alone() -> None:
    """`--fabric sx-plane1` emulates that plane only (its switches, its cables, its hosts' ports);
    `--fabric sx` every plane of the fabric."""
    from fabgen.emulate import read
    from fabgen.rendered import read as rendered

    files = rendered.read_render(GOLDEN / "b300-spectrumx-2plane")
    (one,) = read.fabrics_of(files, "sx-plane1")
    (both,) = read.fabrics_of(files, "sx")
    assert one.planes == ["sx-plane1"] and both.planes == ["sx-plane1", "sx-plane2"]
    assert one.name == "sx-plane1" and both.name == "sx"  # the report names what was emulated
    one, both = read.read_fabric(files, one), read.read_fabric(files, both)
    assert {c["fabric"] for c in one.cables} == {"sx-plane1"}
    assert set(one.routers) < set(both.routers) and len(one.routers) * 2 == len(both.routers)
    ports = {p for h in one.hosts.values() for p in h.ports}
    assert ports and len(ports) * 2 == len({p for h in both.hosts.values() for p in h.ports})


@needs_lab
@pytest.mark.integration
def test_trust_edited_emulates_the_edit_and_names_it(renders: dict[str, Path], tmp_path: Path, clean) -> None:
    """--trust-edited: a file edited by hand (its digest no longer the manifest's) is emulated, and
    the verdict names it first; without the option the same folder is refused."""
    out = tmp_path / "edited"
    shutil.copytree(renders["roce-2node"], out)
    cfg = out / "roce" / "switches" / "roce-leaf01.cfg"
    text = cfg.read_text()
    assert "description HOST_gpu01_mlx5_0\n" in text
    cfg.write_text(text.replace("description HOST_gpu01_mlx5_0\n", "description HOST_gpu01_mlx5_0_rewired\n"))
    refused = emulate(out)
    assert refused.returncode == 2 and "--trust-edited" in refused.stderr
    res = emulate(out, "--trust-edited", "--format", "json")
    assert res.returncode == 0, (res.stdout[-2000:], res.stderr[-2000:])
    notes = json.loads(res.stdout)["notes"]
    assert notes[0].startswith("--trust-edited:") and "roce/switches/roce-leaf01.cfg" in notes[0], notes


# Planes, widths per device, the unbound client ------------------------------------------------------

PLANES_STORAGE = Path(__file__).parent / "data" / "emulate-planes-storage.yaml"


@pytest.fixture(scope="module")
def planes_storage(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("planes-storage") / "out"
    render_to(PLANES_STORAGE, out)
    return out


def _read(render: Path, name: str):
    from fabgen.emulate import read
    from fabgen.rendered import read as rendered

    files = rendered.read_render(render)
    (fab,) = read.fabrics_of(files, name)
    return read.read_fabric(files, fab)


def test_every_node_of_a_storage_fabric_pings_a_server_unbound(planes_storage: Path) -> None:
    """The storage servers are the storage fabric's nodes no compute fabric cables; every pair pinged
    from a port's address is pinged unbound too, and every other node pings a server unbound,
    through its main table, which must send it out of its own ports on the fabric."""
    from fabgen.emulate import checks

    fab = _read(planes_storage, "storage")
    compute = {c["a_device"] for p in ("compute-plane1", "compute-plane2") for c in _read(planes_storage, p).cables}
    assert fab.servers and set(fab.servers) == set(fab.hosts) - compute
    pairs = checks.pairs(fab.hosts, fab.servers)
    bound = {(p.host, p.far, p.dst) for p in pairs if p.src}
    unbound = {(p.host, p.far, p.dst) for p in pairs if p.src is None}
    assert bound and bound <= unbound
    for host in set(fab.hosts) - set(fab.servers):
        assert any(far in fab.servers for h, far, _ in unbound if h == host), host
    assert all(p.ports == tuple(sorted(fab.hosts[p.host].ports)) for p in pairs)


def test_an_unbound_ping_must_leave_by_a_port_of_the_destinations_plane() -> None:
    """Two nodes of a two-plane fabric, a port on each plane: every pair's ports are the node's
    ports of the destination's plane alone, and the check refuses an answered unbound ping whose
    main table sent it out of the other plane's port (a bound ping is judged by its answer)."""
    from fabgen.emulate import checks
    from fabgen.emulate.model import Host, HostPort

    def node(name: str, n: int) -> Host:
        return Host(name, {f"p{k}": HostPort(f"p{k}", [f"10.{8 + 4 * k}.0.{2 * n + 1}/31"],
                                             rules=[{"from": f"10.{8 + 4 * k}.0.{2 * n + 1}", "table": 100 + k}],
                                             plane=f"sx-plane{k + 1}") for k in (0, 1)})

    hosts = {"a": node("a", 0), "b": node("b", 1)}
    pairs = checks.pairs(hosts)
    assert len(pairs) == 8  # each node's port of each plane to the other's, bound and unbound
    for p in pairs:
        plane = next(port.plane for port in hosts[p.far].ports.values() if p.dst + "/31" in port.addresses)
        assert p.ports == tuple(n for n, port in hosts[p.host].ports.items() if port.plane == plane), p
    to_plane2 = next(p for p in pairs if p.src is None and p.dst.startswith("10.12."))
    assert checks.passed(to_plane2, True, "p1") and not checks.passed(to_plane2, True, "p0")
    assert not checks.passed(to_plane2, False, "p1")
    bound = next(p for p in pairs if p.src is not None)
    assert checks.passed(bound, True, "") and not checks.passed(bound, False, "")


def test_a_two_plane_fabrics_unbound_pairs_stay_on_their_plane(planes_storage: Path) -> None:
    """Read from a render: every unbound pair of a two-plane compute fabric holds the node's ports
    of the destination's plane (addresses.csv of that plane), none of the other plane's."""
    from fabgen.emulate import checks

    fab = _read(planes_storage, "compute")
    assert len(fab.planes) == 2
    plane_of = {(r["device"], r["address"].split("/")[0]): r["fabric"] for r in fab.addresses if r["role"] == "node"}
    ports_of = {(r["device"], r["fabric"]): r["interface"] for r in fab.addresses if r["role"] == "node"}
    unbound = [p for p in checks.pairs(fab.hosts) if p.src is None]
    assert unbound
    for p in unbound:
        plane = plane_of[p.far, p.dst]
        assert p.ports and all(plane_of.get((p.host, a.split("/")[0])) == plane
                               for n in p.ports for a in fab.hosts[p.host].ports[n].addresses), p
        assert all(ports_of.get((p.host, other)) not in p.ports for other in fab.planes if other != plane), p


def test_a_netplan_route_is_installed_as_written() -> None:
    """The lab adds nothing to a node's routes: a main-table route stays in the main table, on the
    interface it is written under, with its metric; a rule keeps its priority."""
    from fabgen.emulate.run import _route_line

    assert _route_line({"to": "10.8.0.0/14", "via": "10.8.0.0", "metric": 100}, "eth0") == \
        "route add 10.8.0.0/14 via 10.8.0.0 dev eth0 metric 100"
    assert _route_line({"to": "10.8.0.0/13", "via": "10.8.0.0", "table": 100}, "eth0") == \
        "route add 10.8.0.0/13 via 10.8.0.0 dev eth0 table 100"
    assert _route_line({"to": "10.8.0.0/31", "scope": "link", "table": 100}, "eth0") == \
        "route add 10.8.0.0/31 dev eth0 scope link table 100"
    assert _route_line({"to": "10.8.0.0/13", "type": "unreachable", "table": 101}, "eth0") == \
        "route add unreachable 10.8.0.0/13 table 101"


def _uplink(fab) -> tuple[str, str]:
    """A leaf's first uplink, from the plan."""
    leaf = sorted(d for d, r in fab.plan.roles.items() if r == "leaf")[0]
    return leaf, sorted(ap for a, ap, z, _ in fab.plan.sessions if a == leaf and fab.plan.roles.get(z) == "spine")[0]


@needs_lab
@pytest.mark.integration
def test_one_plane_is_emulated_alone_and_the_failed_leafs_widths_are_reported(planes_storage: Path, clean) -> None:
    """--fabric <fabric>-plane1: that plane only, named so; with --fail on a leaf's uplink the JSON
    gives, for that leaf and every prefix, the paths the plan expects, FRR's RIB and the kernel's
    FIB held before and after, each equal to the plan computed here from the render."""
    fab = _read(planes_storage, "compute-plane1")
    leaf, port = _uplink(fab)
    res = emulate(planes_storage, "--fabric", "compute-plane1", "--fail", f"{leaf}:{port}", "--format", "json")
    _passed(res)
    r = json.loads(res.stdout)
    assert r["fabrics"] == ["compute-plane1"] and set(r["checked"]) == set(fab.routers) | set(fab.hosts)
    before, after = fab.plan.widths(), fab.plan.widths({(leaf, port)})
    origin = fab.plan.prefixes()
    widths = r["checked"][leaf]["widths"]
    assert set(widths) == {p for p, o in origin.items() if o != leaf}
    for prefix, w in widths.items():
        want, then = before[leaf][origin[prefix]], after[leaf][origin[prefix]]
        assert w == {"before": {"planned": want, "rib": want, "fib": want},
                     "after": {"planned": then, "rib": then, "fib": then}}, prefix
    assert any(w["after"]["planned"] < w["before"]["planned"] for w in widths.values())  # the failure shows
    sessions = r["checked"][leaf]["sessions"]
    assert sessions["after"]["established"] == sessions["before"]["established"] - 1
    for host in fab.hosts:
        reach = r["checked"][host]["reach"]
        assert any(x["from"] is None for x in reach) and all(x["before"]["ok"] for x in reach)


def _without_main_table_routes(render: Path, out: Path) -> None:
    """The render with every node's main-table routes but a default dropped from its netplan: each
    port keeps its address, its own table and rule (what fabgen wrote before issue #55)."""
    import yaml

    shutil.copytree(render, out)
    dropped = 0
    for path in sorted(out.glob("hosts/*/netplan.yaml")):
        doc = yaml.safe_load(path.read_text())
        for eth in doc["network"]["ethernets"].values():
            kept = [x for x in eth.get("routes", []) if "table" in x or x["to"] == "default"]
            dropped += len(eth.get("routes", [])) - len(kept)
            eth["routes"] = kept
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert dropped, "the render's netplans have no main-table route to drop (issue #55: host routing)"


@needs_lab
@pytest.mark.integration
def test_an_unbound_client_reaches_the_storage_server_through_the_main_table(planes_storage: Path, tmp_path: Path,
                                                                               clean) -> None:
    """Every node pings a storage server (and the next node of its rail) without a source address,
    as an NFS mount connects: with only source-bound tables (the main-table routes dropped) every
    such ping fails, naming the node and the server, while every ping from a port's address passes;
    the render as fabgen writes it passes, each unbound ping out of a port of the storage fabric."""
    fab = _read(planes_storage, "storage")
    _without_main_table_routes(planes_storage, tmp_path / "bound-only")
    bad = emulate(tmp_path / "bound-only", "--fabric", "storage", "--trust-edited", "--format", "json")
    assert bad.returncode == 1, (bad.stdout[-3000:], bad.stderr[-2000:])
    r = json.loads(bad.stdout)
    assert {f["check"] for f in r["findings"]} == {"reach"}
    assert all(f["message"].startswith("unbound") for f in r["findings"])
    for host in set(fab.hosts) - set(fab.servers):
        assert any(f["device"] == host and set(fab.servers) & set(f["about"]) for f in r["findings"]), host
        reach = r["checked"][host]["reach"]
        assert all(x["before"]["ok"] == (x["from"] is not None) for x in reach)
    good = emulate(planes_storage, "--fabric", "storage", "--format", "json")
    _passed(good)
    r = json.loads(good.stdout)
    for host in fab.hosts:
        unbound = [x for x in r["checked"][host]["reach"] if x["from"] is None]
        assert unbound and all(x["before"]["ok"] and x["before"]["port"] in fab.hosts[host].ports for x in unbound)
        if host not in fab.servers:
            assert any(x["to"] in fab.servers for x in unbound)


def test_the_text_report_names_each_devices_checks_and_the_widths_a_failure_changed() -> None:
    """One line per device: sessions established of planned, prefixes at the planned width, pings
    passed (bound and unbound), and after --fail each prefix whose width changed with the plan's."""
    from fabgen.emulate.checks import Checked, Pair
    from fabgen.emulate.report import text
    from fabgen.emulate.run import Result

    c = Checked()
    prefixes = {"10.0.0.1/32": "s1", "10.0.0.2/32": "l2"}
    for phase, width in (("before", 2), ("after", 1)):
        c.sessions(phase, "l1", width, width)
        c.widths(phase, {"l1": {"s1": width, "l2": 2}}, prefixes, {"l1": {"10.0.0.1/32": width, "10.0.0.2/32": 2}},
                 {"l1": {"10.0.0.1/32": width, "10.0.0.2/32": 2}})
        c.reach(phase, {Pair("n1", "10.1.0.1", "n2", "10.1.0.3"): (True, ""),
                        Pair("n1", None, "st1", "10.2.0.9", ("eth1",), "storage"): (phase == "before", "eth1")})
    r = Result(["f"], 1, 2, 3, 1.0, [], [], [], checked=c.as_dict())
    lines = {line.split(":")[0].strip(): line for line in text(r).splitlines() if line.startswith("  ")}
    assert "2 of 2 sessions, 2 of 2 prefixes at the planned width; after --fail: 1 of 1 sessions" in lines["l1"]
    assert "widths: 10.0.0.1/32 2 -> 1 (plan 1)" in lines["l1"] and "10.0.0.2/32" not in lines["l1"]
    assert "2 of 2 pings (1 from a port's address, 1 unbound); after --fail: 1 of 2 pings" in lines["n1"]
    doc = r.as_dict()["checked"]
    assert doc["n1"]["reach"][1] == {"from": None, "to": "st1", "address": "10.2.0.9", "why": "storage",
                                     "before": {"ok": True, "port": "eth1"}, "after": {"ok": False, "port": "eth1"}}


def test_the_text_report_summarises_and_the_json_holds_every_prefix() -> None:
    """A failure that changes more widths than the text names (report.SHOWN): the text names the
    first ones and how many more, pointing to the JSON, which holds every prefix, changed or not."""
    from fabgen.emulate.checks import Checked
    from fabgen.emulate.report import SHOWN, text
    from fabgen.emulate.run import Result

    c = Checked()
    n = SHOWN + 3
    prefixes = {f"10.0.0.{k}/32": f"s{k}" for k in range(n)} | {"10.0.1.0/32": "l2"}
    for phase, width in (("before", 2), ("after", 1)):
        plan = {f"s{k}": width for k in range(n)} | {"l2": 2}
        held = {f"10.0.0.{k}/32": width for k in range(n)} | {"10.0.1.0/32": 2}
        c.widths(phase, {"l1": plan}, prefixes, {"l1": held}, {"l1": held})
    r = Result(["f"], 1, 2, 3, 1.0, [], [], [], checked=c.as_dict())
    (line,) = [x for x in text(r).splitlines() if x.startswith("  l1:")]
    assert line.count(" -> 1 (plan 1)") == SHOWN and "and 3 more (--format json lists every prefix)" in line
    widths = r.as_dict()["checked"]["l1"]["widths"]
    assert set(widths) == set(prefixes) and all(set(w) == {"before", "after"} for w in widths.values())


# The GPU EVPN overlay (host_addressing evpn, emulate/overlay.py) ---------------------------------

OVERLAY_LEAF = "gpu-plane1/switches/gpu-plane1-su01-leaf1.nvue.yaml"
OVERLAY_SPINE = "gpu-plane1/switches/gpu-plane1-spine01.nvue.yaml"


@pytest.fixture(scope="module")
def overlay_render(tmp_path_factory) -> Path:
    """tests/test_gpu_overlay.py's fabric: 18 GB300 trays on two planes of four leaves and two spines."""
    from test_gpu_overlay import INVENTORY

    base = tmp_path_factory.mktemp("overlay")
    inv = base / "overlay.yaml"
    inv.write_text(INVENTORY.format(count=18, kind="spectrum-x", platform="nvue", model="sn5600", version="",
                                    extra=""))
    render_to(inv, base / "out")
    return base / "out"


def test_the_overlay_is_read_from_its_render() -> None:
    """The overlay's plan from the rendered files alone: every switch of both planes (leaves as
    VTEPs with their access ports, spines relaying EVPN), two nodes kept with their GPU ports as
    their netplans write them (address, per-port table and rule), the overlay's sessions as the
    design gives them, at most two cables a leaf-spine pair; one plane when asked for."""
    from fabgen.emulate import overlay, read, run
    from fabgen.rendered import read as rendered

    files = rendered.read_render(GOLDEN / "era-2-4-5-800")
    assert not read.fabrics_of(files, "gpu", overlay=True)  # the overlay is not a routed fabric's lab
    assert read.overlay_of(files, None) == [("gpu", ["gpu-plane1", "gpu-plane2"])]
    (plan,) = run._overlay_plans(files, read.overlay_of(files, None))
    leaves = [s for n, s in plan.switches.items() if "leaf" in n]
    spines = [s for n, s in plan.switches.items() if "spine" in n]
    assert len(leaves) == 8 and len(spines) == 4 and all(not s.vtep and not s.access for s in spines)
    leaf = plan.switches["gpu-plane1-su01-leaf1"]
    assert leaf.vtep == "10.255.0.1" and set(leaf.access.values()) == {900} and leaf.l3vnis == {"GPU": 245003}
    assert leaf.tenants[900].vni == 245900 and leaf.tenants[900].mac == "00:00:5e:00:01:01"
    assert leaf.multihop == {"OVERLAY": 2} and leaf.source == {"OVERLAY": "lo"} and leaf.no_ipv4 == {"OVERLAY"}
    assert plan.overlay["gpu-plane1-su01-leaf1"] == {"gpu-plane1-spine01", "gpu-plane1-spine02"}
    assert len(plan.hosts) == 2 and plan.left_out == 16 and len(plan.nics) == 16
    port = next(iter(plan.hosts["su-01-node-01"].ports.values()))
    assert port.addresses and port.rules and any(r.get("scope") == "link" for r in port.routes)
    pairs = {frozenset((a, z)) for a, _, z, _ in plan.cables if a in plan.switches and z in plan.switches}
    assert len(pairs) == 16 and plan.thinned > 0
    conf = overlay.evpn.frr_conf(leaf)
    for line in (" neighbor OVERLAY ebgp-multihop 2", " neighbor OVERLAY update-source lo",
                 " neighbor 10.255.0.5 peer-group OVERLAY", "  no neighbor OVERLAY activate", "  advertise-all-vni"):
        assert line + "\n" in conf, line
    (one,) = run._overlay_plans(files, read.overlay_of(files, "gpu-plane2"))
    assert one.fabric == "gpu-plane2" and len(one.switches) == 6 and {n.plane for n in one.nics} == {"gpu-plane2"}


def test_frr_parses_the_overlays_config(tmp_path: Path) -> None:
    """FRR's own parser (vtysh --dryrun) takes a leaf's and a spine's config of the overlay lab, and
    refuses it with a misspelt multihop line."""
    if VTYSH is None:
        pytest.skip("needs FRR's vtysh")
    from fabgen.emulate import evpn

    for path in (OVERLAY_LEAF, OVERLAY_SPINE):
        text = evpn.frr_conf(evpn.translate("x", (GOLDEN / "era-2-4-5-800" / path).read_text(), path))
        conf = tmp_path / "frr.conf"
        conf.write_text(text)
        assert subprocess.run([VTYSH, "--dryrun", "-f", str(conf)], capture_output=True).returncode == 0, text
    conf.write_text(text.replace("ebgp-multihop", "ebgp-multihopp"))
    assert subprocess.run([VTYSH, "--dryrun", "-f", str(conf)], capture_output=True).returncode != 0


@pytest.mark.parametrize("path,edit,words", [
    (OVERLAY_LEAF, lambda t: t.replace('"10.255.0.5":', '"10.255.0.5\\nexit":', 1), "BGP neighbor"),
    (OVERLAY_LEAF, lambda t: t.replace('"10.255.0.5":', '"10.9.9.9":', 1), "no other switch's loopback"),
    (OVERLAY_LEAF, lambda t: t.replace("multihop-ttl: 2", "multihop-ttl: 200", 1), "multihop-ttl"),
    (OVERLAY_SPINE, lambda t: t.replace("multihop-ttl: 2", 'multihop-ttl: "2\\n neighbor X"', 1), "multihop-ttl"),
    (OVERLAY_LEAF, lambda t: t.replace("update-source: lo", 'update-source: "lo\\nexit"', 1), "update-source"),
    (OVERLAY_LEAF, lambda t: t.replace("access: 900", 'access: "900 x"', 1), "access VLAN"),
    (OVERLAY_LEAF, lambda t: t.replace("access: 900", "access: 901", 1), "none of the switch's VNIs"),
    (OVERLAY_LEAF, lambda t: t.replace('"245900": {}', '"24590000000": {}', 1), "VNI"),
])
def test_a_hostile_overlay_render_is_refused_before_any_namespace(overlay_render: Path, tmp_path: Path, path: str,
                                                                  edit, words: str) -> None:
    """A GPU overlay render edited (and its manifest with it) where its values reach FRR, `ip` or
    `bridge` lines: refused at its file, exit 2, one line, no traceback, and no namespace or run
    directory made (the reading comes before the lab)."""
    out = tmp_path / "out"
    shutil.copytree(overlay_render, out)
    text = (out / path).read_text()
    changed = edit(text)
    assert changed != text
    (out / path).write_text(changed)
    relist(out, path)
    before = _machine()
    res = emulate(out, timeout=120)
    assert res.returncode == 2 and "Traceback" not in res.stderr, (res.returncode, res.stderr[-2000:])
    assert len(res.stderr.strip().splitlines()) == 1 and path in res.stderr and words in res.stderr, res.stderr
    assert _machine() == before


def test_the_overlays_type2_check_reads_frrs_mac_table_and_names_the_leaf_at_fault() -> None:
    """`show evpn mac vni` as zebra writes it: a kept port's MAC local on its own leaf, remote at its
    leaf's VTEP elsewhere; absent, local elsewhere or at another VTEP is a finding (and the VRF's
    subnet missing a type-5 route from a leaf's VTEP); the leaf whose
    MACs are missing on two leaves is the first suspect. Each kept port pings the next node's next
    port (another leaf) and its gateway; with a leaf down, only ports on the other leaves."""
    from fabgen.emulate import evpn, inputs, overlay
    from fabgen.emulate.checks import Finding
    from fabgen.rendered import read as rendered

    files = rendered.read_render(GOLDEN / "era-2-4-5-800")
    plan = overlay.read(files, "gpu-plane1", ["gpu-plane1"], inputs.table)
    leaf1 = plan.switches["gpu-plane1-su01-leaf1"]
    want = {"aa:00:00:00:00:01": ("n1 p0", "10.255.0.1"), "aa:00:00:00:00:02": ("n1 p1", "10.255.0.2")}
    good = {"numMacs": 2, "macs": {"aa:00:00:00:00:01": {"type": "local", "intf": "swp1s0"},
                                   "aa:00:00:00:00:02": {"type": "remote", "remoteVtep": "10.255.0.2"}}}
    assert overlay.mac_problems(good, leaf1, want) == []
    bad = {"macs": {"aa:00:00:00:00:02": {"type": "remote", "remoteVtep": "10.255.0.3"}}}
    assert overlay.mac_problems(bad, leaf1, want) == [
        "n1 p0 (aa:00:00:00:00:01) not learned on its own leaf",
        "n1 p1 (aa:00:00:00:00:02) has no EVPN type-2 route from 10.255.0.2 (remote at 10.255.0.3)"]
    assert overlay.mac_problems(None, leaf1, {}) == []
    findings = [Finding("gpu-plane1-su01-leaf1", "type2", "x", ["10.255.0.2"]),
                Finding("gpu-plane1-su01-leaf3", "type2", "x", ["10.255.0.2"]),
                Finding("gpu-plane1-su01-leaf2", "type2", "x", ["10.255.0.1"])]
    assert overlay.suspects(findings, plan.switches) == [
        ("gpu-plane1-su01-leaf2", "its ports' EVPN type-2 routes are missing on 2 leaves")]
    pairs = overlay._pairs(plan, set())
    node = next(iter(plan.hosts))
    assert len(pairs[node]) == 8 and sum(t.startswith("gateway:") for _, t in pairs[node]) == 4
    leaf_of = {(n.node, n.address): n.leaf for n in plan.nics}
    port_leaf = {(n.node, n.port): n.leaf for n in plan.nics}
    for port, target in pairs[node]:
        if not target.startswith("gateway:"):
            far, address = target.split(":")
            assert far != node and leaf_of[(far, address)] != port_leaf[(node, port)]
    down = overlay.leaves_to_fail(plan)
    assert down == {"gpu-plane1-su01-leaf1"}
    assert all(port_leaf[(node, p)] not in down for p, _ in overlay._pairs(plan, down)[node])
    assert evpn.UPDATE_SOURCE.fullmatch("lo") and not evpn.UPDATE_SOURCE.fullmatch("eth0")
    table = {"routes": {"192.168.0.0/20": [{"nexthops": [{"ip": "0.0.0.0"}]}, {"nexthops": [{"ip": "10.255.0.2"}]}]}}
    assert overlay.prefix_problems(table, "GPU", "192.168.0.0/20", {"10.255.0.2"}) == []
    assert overlay.prefix_problems(table, "GPU", "192.168.0.0/20", {"10.255.0.2", "10.255.0.3"}) == [
        "VRF GPU: 192.168.0.0/20 has no EVPN type-5 route from 10.255.0.3"]
    assert overlay.prefix_problems(None, "GPU", "192.168.0.0/20", {"10.255.0.2"})
