"""Real subnet manager on a simulated fabric: ibsim loads the rendered topology.net, upstream
OpenSM runs once with the rendered opensm.conf, GUID files and partitions.conf, and its log
must show the configured routing engine (not a fallback) routing every switch, with the
fat-tree rank equal to the fabric's tier count."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import IN_CI, INVENTORIES
from fabgen.pipeline import render_to

pytestmark = pytest.mark.integration
UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
HAVE_TOOLS = bool(shutil.which("ibsim") and shutil.which("opensm") and os.path.exists(UMAD2SIM))
if not HAVE_TOOLS:
    if IN_CI:
        raise RuntimeError("CI must have opensm and ibsim-utils: `make test` installs them")
    pytestmark = [pytestmark, pytest.mark.skip(reason="opensm/ibsim not installed; `make test` installs them")]


def as_ibsim_sees_it(text: str) -> str:
    """A CA port GUID file as ibsim's fabric has it: ibsim gives a CA's port its node GUID + 1
    (ibnetdiscover on ibsim shows `Ca 1 "H-<g>"` with port `[1](<g + 1>)`), not topology.net's
    port GUID, which fabgen writes equal to the node GUID as a ConnectX reports it. Without the
    shift, each line would name the next adapter's port."""
    def shift(m: re.Match) -> str:
        return f"0x{int(m.group(1), 16) + 1:016x}"
    return re.sub(r"^0x([0-9a-f]{16})", shift, text, flags=re.M)


def run_opensm(ib_dir: Path, work: Path, conf: str = "opensm.conf", root_guids: list[str] | None = None,
               shift: bool = True) -> str:
    """Start ibsim on ib_dir/topology.net, run OpenSM once from the first adapter, return its log.
    The CA GUID files are read as ibsim numbers the ports (as_ibsim_sees_it) unless `shift` is off."""
    work.mkdir(parents=True, exist_ok=True)
    files = work / "etc"
    shutil.copytree(ib_dir, files, dirs_exist_ok=True)
    for name in ("cn_guids.conf", "io_guids.conf"):
        if shift and (files / name).exists():
            (files / name).write_text(as_ibsim_sees_it((files / name).read_text()))
    if root_guids is not None:
        (files / "root_guids.conf").write_text("".join(f"{g}\n" for g in root_guids))
    text = (ib_dir / conf).read_text()
    text = re.sub(r"^(\w+_file|node_name_map_name) \S+/", lambda m: f"{m.group(1)} {files}/", text, flags=re.M)
    (work / "osm.conf").write_text(text)
    topo = (ib_dir / "topology.net").read_text()
    nodes = topo.count("\nSwitch\t") + topo.count("\nCa\t")
    first_ca = re.search(r'^Ca\t\d+ "([^"]+)"', topo, re.M).group(1)
    env = {**os.environ, "IBSIM_SOCKNAME": f"fabgen-{os.getpid()}-{work.name}"}
    sim_log = open(work / "ibsim.log", "w")  # a file, not a pipe: a full pipe would stall ibsim
    sim = subprocess.Popen(["ibsim", "-s", "-n", "-N", str(nodes + 16), "-S", str(nodes + 16), "-P",
                            str(nodes * 130), str(ib_dir / "topology.net")], env=env, stdout=sim_log,
                           stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(1.0 + nodes / 4000)
        assert sim.poll() is None, f"ibsim refused the topology: {(work / 'ibsim.log').read_text()[-2000:]}"
        env.update(SIM_HOST=first_ca, OSM_TMP_DIR=str(work), OSM_CACHE_DIR=str(work), LD_PRELOAD=UMAD2SIM)
        log = work / "osm.log"
        subprocess.run(["opensm", "-F", str(work / "osm.conf"), "-o", "-f", str(log)], env=env, timeout=300,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return log.read_text()
    finally:
        sim.kill()
        sim.wait()
        sim_log.close()


def assert_routed_by(log: str, engine: str, tiers: int) -> None:
    assert f"{engine} tables configured on all switches" in log, _tail(log)
    assert "PARSE ERROR" not in log and "configuration in error" not in log, _tail(log)
    assert "Unrecognized" not in log, "opensm.conf has a key upstream OpenSM does not know"
    assert " ERR " not in log, [line for line in log.splitlines() if " ERR " in line][:5]
    if engine == "ftree":
        assert f"FatTree rank (roots to leaf switches): {tiers}" in log


def _tail(log: str) -> str:
    return "\n".join(log.splitlines()[-15:])


def _upstream_conf(ib_dir: Path) -> str:
    return "opensm.upstream.conf" if (ib_dir / "opensm.upstream.conf").exists() else "opensm.conf"


@pytest.mark.parametrize("case,fabric,tiers", [("superpod-4su", "compute", 2), ("ib-3tier", "ib", 3),
                                               ("b300-xdr-2su", "compute", 2)])
def test_examples_routed_by_ftree(case: str, fabric: str, tiers: int, tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to(INVENTORIES / f"{case}.yaml", out)
    ib = out / fabric / "infiniband"
    assert_routed_by(run_opensm(ib, tmp_path / "sim", _upstream_conf(ib)), "ftree", tiers)


def test_a_single_switch_fabric_is_routed(tmp_path: Path) -> None:
    """compare-8node (tiers: 1): eight DGX H100 on every port of one QM9700; upstream OpenSM
    routes it with minhop (ftree needs two tiers), every one of its 64 ports in use."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "compare-8node.yaml", out)
    ib = out / "compute" / "infiniband"
    topo = (ib / "topology.net").read_text()
    assert topo.count("\nSwitch\t") == 1 and topo.count("\nCa\t") == 64
    assert_routed_by(run_opensm(ib, tmp_path / "sim", _upstream_conf(ib)), "minhop", 1)


SHAPES = {
    # two tiers, 1,024 NICs: four full scalable units
    "two-tier-1024": ("rail-optimized", "dgx-h100", 128, "qm9700", "", 2),
    # three tiers on real hardware sizes: 9 units of 32 DGX H100 (2,304 NICs), plus 40
    # dual-ported storage servers striped over 3 storage leaves
    "three-tier-2304-storage": ("rail-optimized", "dgx-h100", 288, "qm9700", "", 3),
    # oversubscribed fat-tree, 3:1
    "fat-tree-3to1": ("fat-tree", "dgx-h100", 60, "qm9790", "oversubscription: 3", 2),
    # planned for 16 units (4 pods), 2 present: the spines of three empty pods hang off the
    # cores with no leaf below them, as a planned fabric is built
    "three-tier-planned": ("rail-optimized", "dgx-h100", 64, "qm9700", "tiers: 3\n    planned_nodes: 512", 3),
    # NVL72 spine-leaf groups (docs/hardware.md): three units of four GB200 racks, each rail of a
    # unit a group of 4 leaves (a rack each) and 3 spines, the 12 groups joined by 3 core groups
    "nvl72-rail-groups": ("rail-optimized", "gb200-nvl72", 216, "qm9700", "scalable_unit: 72", 3),
}
STORAGE_GROUP = """  - {name: st, model: st2, count: 40, role: storage}
node_models:
  st2:
    gpus: 0
    nics: [{rdma: mlx5_0, speed: 400}, {rdma: mlx5_1, speed: 400}]
"""


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_other_shapes_routed_by_ftree(shape: str, tmp_path: Path) -> None:
    topology, model, count, switch, extra, tiers = SHAPES[shape]
    inv = tmp_path / "inv.yaml"
    inv.write_text(f"""version: 1
cluster: sim
node_groups:
  - {{name: n, model: {model}, count: {count}}}
{STORAGE_GROUP if "storage" in shape else ""}fabrics:
  - name: f
    kind: infiniband
    platform: opensm
    topology: {topology}
    switch_model: {switch}
    node_groups: [n{", st" if "storage" in shape else ""}]
    {extra}
""")
    out = tmp_path / "out"
    render_to(inv, out)
    log = run_opensm(out / "f" / "infiniband", tmp_path / "sim")
    assert_routed_by(log, "ftree", tiers)
    if "storage" in shape:
        assert f"{count * 8 + 80} CA ports ({count * 8} of them CNs)" in log, _tail(log)


def test_storage_nodes_are_io_nodes(tmp_path: Path) -> None:
    """ib-storage has 20 dual-ported storage servers on two storage leaves: OpenSM reads
    io_guids.conf (a bad line in it makes ftree fail), and counts exactly the compute NICs of
    cn_guids.conf as CNs; with GUID files that name other ports the count is wrong."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "ib-storage.yaml", out)
    ib = out / "ib" / "infiniband"
    log = run_opensm(ib, tmp_path / "sim")
    assert_routed_by(log, "ftree", 2)
    # 384 compute + 40 storage ports, every compute port a CN (its own port too)
    assert "424 CA ports (384 of them CNs)" in log, _tail(log)
    # the same files read against ibsim's port numbering unshifted: each line names the next
    # adapter, so one compute port falls out of the CNs (it is taken for the first storage port)
    log = run_opensm(ib, tmp_path / "sim-unshifted", shift=False)
    assert "424 CA ports (384 of them CNs)" not in log and "424 CA ports (383 of them CNs)" in log, _tail(log)
    (ib / "io_guids.conf").write_text((ib / "io_guids.conf").read_text() + "not-a-guid\n")
    log = run_opensm(ib, tmp_path / "sim-bad")
    assert "Problem parsing I/O guid file" in log
    assert "ftree tables configured on all switches" not in log


def test_wrong_root_guids_make_ftree_fall_back(tmp_path: Path) -> None:
    """The check can fail: leaf GUIDs given as roots make ftree refuse the fabric."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "ib-3tier.yaml", out)
    ib = out / "ib" / "infiniband"
    leaves = [line.split()[0] for line in (ib / "node-name-map").read_text().splitlines()
              if "-leaf" in line][:4]
    log = run_opensm(ib, tmp_path / "sim", root_guids=leaves)
    assert "ftree tables configured on all switches" not in log
    assert "updn tables configured on all switches" in log


def test_upstream_profile_keys_are_known_to_opensm(tmp_path: Path) -> None:
    """Every key we write for upstream OpenSM appears in its own `opensm -c` template."""
    from fabgen.targets.infiniband import UPSTREAM_KEYS

    dump = tmp_path / "template.conf"
    subprocess.run(["opensm", "-c", str(dump)], capture_output=True, timeout=60)
    known = {line.split()[0] for line in dump.read_text().splitlines() if line and not line.startswith("#")}
    assert set(UPSTREAM_KEYS) <= known, sorted(set(UPSTREAM_KEYS) - known)
    out = tmp_path / "out"
    render_to(INVENTORIES / "superpod-4su.yaml", out)
    for conf in ("opensm.upstream.conf",):
        keys = {line.split()[0] for line in (out / "compute" / "infiniband" / conf).read_text().splitlines()
                if line and not line.startswith("#")}
        assert keys <= known, sorted(keys - known)
