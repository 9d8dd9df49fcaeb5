"""The 2026 parts from the catalog: the published DGX SuperPOD B300 table built from an inventory
that names `dgx-b300` and `q3400`, XDR InfiniBand files end to end (OpenSM routes an unseen
Quantum-X800 fabric on ibsim), and NVL72 racks kept whole by units, Slurm blocks and labels."""

from __future__ import annotations

import csv
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import ROOT
from fabgen.cli import app
from fabgen.formats.hostlist import expand
from fabgen.pipeline import prepare, render_to
from fabgen.spec.catalog import NODES, SWITCHES

FABGEN = [str(ROOT / ".venv" / "bin" / "fabgen")]


def _inventory(tmp_path: Path, model: str, count: int, switch: str, *, topology: str = "rail-optimized",
               extra: str = "", platform: str = "ufm", name: str = "inv.yaml") -> Path:
    path = tmp_path / name
    path.write_text(f"""version: 1
cluster: c
node_groups:
  - {{name: gpu, model: {model}, count: {count}}}
fabrics:
  - name: ib
    kind: infiniband
    platform: {platform}
    topology: {topology}
    switch_model: {switch}
    node_groups: [gpu]
{extra}""")
    return path


def test_catalog_figures() -> None:
    """The figures docs/hardware.md cites: 144 XDR ports on 72 twin-port cages; eight 800G NICs
    on a DGX B300; four NICs on an NVL72 tray, 18 trays to a rack (72 GPUs)."""
    q = SWITCHES["q3400"]
    assert (q.radix(800), q.cages, q.native.per_cage, q.kinds) == (144, 72, 2, ("infiniband",))
    names = q.port_names(800)
    assert (names[0], names[1], names[-1], len(set(names))) == ("1/1", "1/2", "72/2", 144)
    b300 = NODES["dgx-b300"]
    assert (b300.gpus, len(b300.nics), {n.speed for n in b300.nics}, b300.nvlink_domain) == (8, 8, {800}, 1)
    for key, speed in (("gb200-nvl72", 400), ("gb300-nvl72", 800)):
        tray = NODES[key]
        assert (tray.gpus, [n.rdma for n in tray.nics], {n.speed for n in tray.nics}) == \
            (4, ["mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5"], {speed})
        assert tray.nvlink_domain * tray.gpus == 72


# DGX SuperPOD B300, Quantum-X800 (RA-11339-001, Table 3, "Example Compute Fabric Components";
# docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300-xdr/latest/
# dgx-superpod-architecture.html): SUs, nodes, leaf, spine, node-leaf and leaf-spine cables.
B300_XDR = [(1, 72, 8, 4, 576, 576), (2, 144, 16, 8, 1152, 1152), (4, 288, 32, 18, 2304, 2304),
            (8, 576, 64, 36, 4608, 4608), (18, 1296, 144, 72, 10368, 10368)]


@pytest.mark.parametrize("units,nodes,leaf,spine,nl,ls", B300_XDR)
def test_b300_quantum_x800_table_from_the_catalog(units, nodes, leaf, spine, nl, ls, tmp_path: Path) -> None:
    """Each row, built: an inventory naming the catalog's dgx-b300 and q3400 and nothing else
    (default unit, default ratio, tiers auto) gives the table's switches and cables."""
    p = prepare(_inventory(tmp_path, "dgx-b300", nodes, "q3400"))
    f = p.fabrics["ib"]
    roles = Counter(s.role for s in f.switches)
    tiers = Counter(lk.tier for lk in f.links)
    assert (f.plan.units, f.plan.unit_nodes, f.plan.tiers) == (units, 72, 2)
    assert (roles["leaf"], roles["spine"], roles["core"]) == (leaf, spine, 0)
    assert (tiers["node-leaf"], tiers["leaf-spine"]) == (nl, ls)
    assert {lk.speed for lk in f.links} == {800}


def test_xdr_files_end_to_end(tmp_path: Path) -> None:
    """800G throughout: the XDR rate code in partitions, 4xXDR in topology.net, the Q3400's port
    numbers 1-144, SHARPv4 named in sharp_am.cfg."""
    inv = _inventory(tmp_path, "gb300-nvl72", 72, "q3400", extra="""    infiniband:
      partitions: [{name: tenant, pkey: 0x10, rate: 800}]
""")
    render_to(inv, tmp_path / "out")
    ib = tmp_path / "out" / "ib" / "infiniband"
    assert "rate=23" in (ib / "partitions.conf").read_text()
    topo = (ib / "topology.net").read_text()
    speeds = set(re.findall(r"lid 0 (\S+)$", topo, re.M))
    assert speeds == {"4xXDR"}
    ports = [int(p) for p in re.findall(r"^\[(\d+)\]", topo, re.M)]
    assert max(ports) <= 144 and 144 in ports
    assert "SHARPv4 (Quantum-X800)" in (ib / "sharp_am.cfg").read_text()


def test_opensm_routes_an_unseen_xdr_fabric(tmp_path: Path) -> None:
    """OpenSM (upstream, under ibsim) routes 96 DGX B300 on Quantum-X800 with ftree at rank 2.
    Two gaps of the packaged tools are asserted, so a newer package shows up as a failing line
    to update rather than passing silently:
    * ibsim 0.10 parses link speeds up to HDR: it warns "cannot parse speed" once per XDR link
      and runs the link at its default speed (routing does not read the speed);
    * OpenSM 3.3.23 (Debian 12) predates IBTA rate code 23 (800 Gb/s; IB_PATH_RECORD_RATE_800_GBS
      came with OpenSM's NDR/XDR additions), so it refuses the IPoIB multicast group of the 800G
      partition (ERR 1B26) and nothing else; the same file at rate 400 creates it. UFM and
      NVIDIA's OpenSM on a Quantum-X800 fabric know the code."""
    from test_opensm_ibsim import HAVE_TOOLS, _tail, run_opensm
    if not HAVE_TOOLS:
        pytest.skip("opensm/ibsim not installed; `make test` installs them")
    logs = {}
    for rate in (800, 400):
        inv = _inventory(tmp_path, "dgx-b300", 96, "q3400", platform="opensm", name=f"inv{rate}.yaml",
                         extra=f"    infiniband:\n      partitions: [{{name: tenant, pkey: 0x10, rate: {rate}}}]\n")
        render_to(inv, tmp_path / f"out{rate}")
        logs[rate] = run_opensm(tmp_path / f"out{rate}" / "ib" / "infiniband", tmp_path / f"sim{rate}")
    ib = tmp_path / "out800" / "ib" / "infiniband"
    log = logs[800]
    assert "ftree tables configured on all switches" in log, _tail(log)
    assert "FatTree rank (roots to leaf switches): 2" in log
    assert "PARSE ERROR" not in log and "Unrecognized" not in log
    errors = [line.split("-> ", 1)[1] for line in log.splitlines() if " ERR " in line]
    assert errors == ["mcmr_rcv_create_new_mgrp: ERR 1B26: Requested MGRP parameters are not realizable"], errors
    assert "Failed to create MC group (ff12:401b:8010::ffff:ffff) with pkey 0x8010" in log
    assert "rate=23" in (ib / "partitions.conf").read_text()
    assert " ERR " not in logs[400] and "ftree tables configured on all switches" in logs[400]
    sim = (tmp_path / "sim800" / "ibsim.log").read_text()
    links = (ib / "topology.net").read_text().count("4xXDR")
    assert sim.count("cannot parse speed") == links, "ibsim now parses XDR: drop the gap from the docstring"


def test_nvl72_units_blocks_and_labels_keep_racks_whole(tmp_path: Path) -> None:
    """An unseen NVL72 cluster (10 GB200 racks on Quantum-2, 2:1): every unit holds whole racks,
    every Slurm block is one rack and the larger block whole racks of one unit, every tray's
    accelerator label is its rack, and the rack is a Kueue level under the unit."""
    inv = _inventory(tmp_path, "gb200-nvl72", 180, "qm9700", extra="    oversubscription: 2\n")
    render_to(inv, tmp_path / "out")
    out = tmp_path / "out"
    rack_of = {f"gpu{n:03d}": f"gpu-rack{(n - 1) // 18 + 1:04d}" for n in range(1, 181)}
    doc = yaml.safe_load((out / "slurm" / "topology.yaml").read_text())
    units = {s["switch"]: expand(s["nodes"]) for s in doc[0]["tree"]["switches"] if "nodes" in s}
    for nodes in units.values():
        assert len(nodes) % 18 == 0 and all(nodes.count(n) == 1 for n in nodes)
        assert Counter(rack_of[n] for n in nodes) == {r: 18 for r in {rack_of[n] for n in nodes}}
    block = doc[1]["block"]
    blocks = {b["block"]: expand(b["nodes"]) for b in block["blocks"]}
    assert len(blocks) == 10 and all({rack_of[n] for n in nodes} == {name} and len(nodes) == 18
                                     for name, nodes in blocks.items())
    unit_racks = len(next(iter(units.values()))) // 18
    # Slurm's block sizes are powers of two of the base block: the unit's racks join only when a power of two
    assert block["block_sizes"] == ([18, 18 * unit_racks] if unit_racks & (unit_racks - 1) == 0 else [18])
    nodes = [d for d in yaml.safe_load_all((out / "kubernetes" / "node-labels.yaml").read_text()) if d]
    assert {n["metadata"]["name"]: n["metadata"]["labels"]["accelerator.topograph.run/domain"]
            for n in nodes} == rack_of
    kueue = [d for d in yaml.safe_load_all((out / "kubernetes" / "kueue.yaml").read_text()) if d]
    levels = [lv["nodeLabel"] for lv in kueue[0]["spec"]["levels"]]
    assert levels[-3:] == ["fabric.topograph.run/tier-0", "accelerator.topograph.run/domain",
                           "kubernetes.io/hostname"]
    report = (out / "report.md").read_text()
    assert "10 NVLink racks" in report
    import csv
    with open(out / "netbox" / "06-devices.csv", newline="") as fh:
        devices = [r for r in csv.DictReader(fh) if r["role"] == "gpu-node"]
    trays = {r["name"]: r["description"] for r in devices}
    assert {n: c.rsplit("NVLink rack ", 1)[-1] for n, c in trays.items()} == rack_of
    assert {r["name"]: r["rack"] for r in devices} == rack_of  # each tray in its NetBox rack


def test_nvl72_fat_tree_racks_are_labelled_but_no_kueue_level(tmp_path: Path) -> None:
    """A fat-tree of 64-port leaves takes 8 trays a leaf, so a rack's trays span three leaves: the
    rack is still the Slurm block and the label, but it nests in no tier-0 group, so Kueue gets no
    rack level. (On a 144-port leaf a rack is exactly one leaf, and it is a level.)"""
    render_to(_inventory(tmp_path, "gb200-nvl72", 36, "qm9700", topology="fat-tree"), tmp_path / "out")
    kueue = [d for d in yaml.safe_load_all((tmp_path / "out" / "kubernetes" / "kueue.yaml").read_text()) if d]
    assert "accelerator.topograph.run/domain" not in [lv["nodeLabel"] for lv in kueue[0]["spec"]["levels"]]
    doc = yaml.safe_load((tmp_path / "out" / "slurm" / "topology.yaml").read_text())
    assert [b["block"] for b in doc[1]["block"]["blocks"]] == ["gpu-rack0001", "gpu-rack0002"]
    render_to(_inventory(tmp_path, "gb300-nvl72", 36, "q3400", topology="fat-tree", name="x.yaml"), tmp_path / "x")
    kueue = [d for d in yaml.safe_load_all((tmp_path / "x" / "kubernetes" / "kueue.yaml").read_text()) if d]
    assert "accelerator.topograph.run/domain" in [lv["nodeLabel"] for lv in kueue[0]["spec"]["levels"]]


@pytest.mark.parametrize("count,extra,where,says", [
    (20, "", r"inv\.yaml:4:\d+: node_groups\[0\]\.count", "racks of 18: 20 is 1 rack and 2 more; use 18 or 36"),
    (36, "    scalable_unit: 20\n", r"inv\.yaml:\d+:\d+: fabrics\[0\]\.scalable_unit",
     "whole NVLink domains (racks) of 18"),
    (36, "    oversubscription: 32\n", r"inv\.yaml:\d+:\d+: fabrics\[0\]\.switch_model",
     "a leaf needs 18 node ports per rail"),
])
def test_racks_are_never_split(count: int, extra: str, where: str, says: str, tmp_path: Path) -> None:
    """A partial rack, a unit that splits racks, a leaf too small for a rack: located errors, exit 2,
    nothing written."""
    inv = _inventory(tmp_path, "gb200-nvl72", count, "qm9700", extra=extra)
    out = tmp_path / "out"
    run = subprocess.run([*FABGEN, "render", str(inv), "--out", str(out)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120)
    assert run.returncode == 2, run.stderr
    assert re.search(where, run.stderr) and says in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and not out.exists()


def test_mixed_domain_sizes_are_refused_on_rails(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text("""version: 1
cluster: c
node_groups:
  - {name: a, model: gb200-nvl72, count: 18}
  - {name: b, model: nvl8, count: 8}
node_models:
  nvl8:
    gpus: 4
    nvlink_domain: 8
    nics: [{rdma: mlx5_0, speed: 400}, {rdma: mlx5_1, speed: 400}, {rdma: mlx5_4, speed: 400},
           {rdma: mlx5_5, speed: 400}]
fabrics:
  - {name: ib, kind: infiniband, platform: opensm, topology: rail-optimized, switch_model: qm9700,
     node_groups: [a, b]}
""")
    run = subprocess.run([*FABGEN, "validate", str(inv)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "mix NVLink domain sizes (8, 18 nodes)" in run.stderr, run.stderr


@pytest.mark.parametrize("planes,ok", [(2, True), (4, False)])
def test_gb300_trays_split_into_two_planes_only(planes: int, ok: bool, tmp_path: Path) -> None:
    """NVIDIA's Network Operator: GB300 "Dual-plane", four planes on B300 only. Two planes render
    with the tray's split ports; four are a located error at `planes`, nothing written."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(f"""version: 1
cluster: c
node_groups:
  - {{name: gb, model: gb300-nvl72, count: 18, hostname: "gb{{n:02d}}"}}
fabrics:
  - name: sx
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    switch_model: sn5600
    node_groups: [gb]
    planes: {planes}
""")
    res = CliRunner().invoke(app, ["render", str(inv), "-o", str(tmp_path / "out")])
    if ok:
        assert res.exit_code == 0, res.output
        cabled = {r["a_port"] for p in ("sx-plane1", "sx-plane2")
                  for r in csv.DictReader((tmp_path / "out" / p / "cabling.csv").open()) if r["a_device"] == "gb01"}
        assert cabled == {f"mlx5_{i}" for i in (0, 1, 2, 3, 6, 7, 8, 9)}
    else:
        assert res.exit_code == 2 and not (tmp_path / "out").exists()
        assert re.search(r"inv\.yaml:12:13: fabrics\[0\]\.planes: gb300-nvl72's NICs split into 2 planes, not 4",
                         res.output), res.output


def test_dgx_h200_has_the_dgx_h100_networking(tmp_path: Path) -> None:
    """DGX H200 is the DGX H100 system with H200 GPUs (141 GB HBM3e): the same eight ConnectX-7
    compute NICs and two dual-port storage/in-band cards (DGX BasePOD RA, "Core Components"), so an
    inventory naming it cables, names and addresses every port as the H100's; a model the catalog
    lacks is refused with the catalog's list, dgx-h200 in it."""
    from dataclasses import fields

    from fabgen.errors import InventoryError
    from fabgen.pipeline import run

    h100, h200 = NODES["dgx-h100"], NODES["dgx-h200"]
    assert {f.name for f in fields(h100) if getattr(h100, f.name) != getattr(h200, f.name)} == \
        {"key", "part", "description"}
    assert h200.gpus == 8 and "141 GB HBM3e" in h200.description
    extra = "    infiniband: {subnet_managers: [sm1]}\n"
    renders = {m: run(_inventory(tmp_path, m, 8, "qm9700", extra=extra, name=f"{m}.yaml")).files
               for m in ("dgx-h100", "dgx-h200")}
    a, b = renders["dgx-h100"], renders["dgx-h200"]
    for path in ("ib/cabling.csv", "ib/infiniband/topology.net", "host-groups/gpu/nccl.env"):
        assert a[path] == b[path].replace(b"dgx-h200", b"dgx-h100"), path  # a header names the model
    assert b"DGX H200" in b["ib/bom.csv"] and b"DGX H200" not in a["ib/bom.csv"]
    with pytest.raises(InventoryError, match=r"unknown node model 'dgx-h300'.*dgx-h200"):
        run(_inventory(tmp_path, "dgx-h300", 8, "qm9700", name="bad.yaml"))
