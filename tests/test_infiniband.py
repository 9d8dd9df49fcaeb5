"""InfiniBand target: GUID map, resolved SM intent, NCCL settings, consistency of the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import INVENTORIES
from fabgen.intent.infiniband import nccl_settings, resolved
from fabgen.pipeline import run

INV = """version: 1
cluster: c1
node_groups:
  - {name: gpu, model: dgx-h100, count: 2}
fabrics:
  - name: ib
    kind: infiniband
    platform: PLATFORM
    topology: fat-tree
    switch_model: qm9700
    node_groups: [gpu]
    tiers: 2
    infiniband:
      guid_map: guids.csv
"""


def _render(tmp_path: Path, platform: str, rows: list[str]):
    (tmp_path / "guids.csv").write_text("device,port,guid\n" + "".join(r + "\n" for r in rows))
    inv = tmp_path / "inv.yaml"
    inv.write_text(INV.replace("PLATFORM", platform))
    return run(inv)


def test_real_guids_from_the_map_reach_every_file(tmp_path: Path) -> None:
    rows = ["ib-leaf01,0,0xb8cef6030012a100", "ib-spine01,0,b8cef6030012a180"]
    nics = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
    rows += [f"gpu{h:03d},{n},0x946dae03002d{h:02x}{i:02x}" for h in (1, 2) for i, n in enumerate(nics)]
    result = _render(tmp_path, "opensm", rows)
    files = result.files
    assert files["ib/infiniband/root_guids.conf"].decode().splitlines()[-1] == "0xb8cef6030012a180 ib-spine01"
    cn = files["ib/infiniband/cn_guids.conf"].decode()
    assert "0x946dae03002d0100 gpu001 mlx5_0" in cn and "synthetic" not in cn
    topo = files["ib/infiniband/topology.net"].decode()
    assert "switchguid=0xb8cef6030012a100" in topo and "caguid=0x946dae03002d0207" in topo
    assert not any("synthetic" in w for w in result.contexts["ib"].summary.warnings)


def test_partial_map_warns_for_the_rest(tmp_path: Path) -> None:
    result = _render(tmp_path, "opensm", ["ib-leaf01,0,0xb8cef6030012a100"])
    warnings = result.contexts["ib"].summary.warnings
    assert any(w.startswith("17 of 18 InfiniBand GUIDs are synthetic") for w in warnings), warnings


def test_every_guid_file_agrees_with_topology_and_name_map() -> None:
    files = run(INVENTORIES / "ib-3tier.yaml").files
    text = {k.split("/")[-1]: v.decode() for k, v in files.items() if "/infiniband/" in k}
    names = dict(line.split(" ", 1) for line in text["node-name-map"].splitlines() if not line.startswith("#"))
    topo_guids = {line.split("=")[1].split("(")[0] for line in text["topology.net"].splitlines()
                  if line.startswith(("switchguid=", "caguid="))}
    assert set(names) == topo_guids
    for conf in ("root_guids.conf", "cn_guids.conf"):
        for line in text[conf].splitlines():
            if line.startswith("#"):
                continue
            guid, name = line.split(" ", 1)
            assert guid.startswith("0x") and len(guid) == 18
            assert names[guid] == f'"{name}"'
    roots = [line for line in text["root_guids.conf"].splitlines() if not line.startswith("#")]
    assert len(roots) == 8 and all("-core" in r for r in roots)


def test_storage_ports_go_to_io_guids_not_cn_guids() -> None:
    files = run(INVENTORIES / "ib-storage.yaml").files
    text = {k.split("/")[-1]: v.decode() for k, v in files.items() if "/infiniband/" in k}
    names = dict(line.split(" ", 1) for line in text["node-name-map"].splitlines() if not line.startswith("#"))
    rows = {conf: [line.split(" ", 1) for line in text[conf].splitlines() if not line.startswith("#")]
            for conf in ("cn_guids.conf", "io_guids.conf")}
    assert len(rows["cn_guids.conf"]) == 48 * 8 and all(n.startswith("gpu") for _, n in rows["cn_guids.conf"])
    assert len(rows["io_guids.conf"]) == 20 * 2 and all(n.startswith("store") for _, n in rows["io_guids.conf"])
    for guid, name in rows["cn_guids.conf"] + rows["io_guids.conf"]:
        assert names[guid] == f'"{name}"'
    assert "io_guid_file /etc/opensm/io_guids.conf" in text["opensm.conf"]


def test_io_guid_file_only_with_storage_nodes() -> None:
    files = run(INVENTORIES / "superpod-4su.yaml").files
    assert "compute/infiniband/io_guids.conf" not in files
    for name in ("opensm.conf", "opensm.upstream.conf"):
        assert "io_guid_file" not in files[f"compute/infiniband/{name}"].decode()


def test_resolved_intent_and_nccl_per_platform(tmp_path: Path) -> None:
    ufm = run(INVENTORIES / "superpod-4su.yaml").contexts["compute"]
    assert resolved(ufm)["engine"] == "ar_updn,updn" and resolved(ufm)["upstream_engine"] == "ftree,updn"
    assert nccl_settings(ufm) == {"NCCL_IB_SL": "0", "NCCL_IB_ADAPTIVE_ROUTING": "1", "NCCL_COLLNET_ENABLE": "1"}
    opensm = run(INVENTORIES / "ib-3tier.yaml").contexts["ib"]
    assert resolved(opensm)["engine"] == "ftree,updn"
    assert nccl_settings(opensm) == {"NCCL_IB_SL": "0", "NCCL_IB_ADAPTIVE_ROUTING": "0"}


def test_booleans_and_keys_in_opensm_conf() -> None:
    files = run(INVENTORIES / "superpod-4su.yaml").files
    ufm = files["compute/infiniband/opensm.conf"].decode()
    upstream = files["compute/infiniband/opensm.upstream.conf"].decode()
    assert "\nqos FALSE\n" in ufm and "sharp_enabled 2" in ufm
    assert "sharp_enabled" not in upstream and "routing_engine ftree,updn" in upstream
    assert "compute/infiniband/sharp_am.cfg" in files


def test_every_rate_validation_accepts_has_a_rate_code(tmp_path) -> None:
    """No link rate passes validation and then crashes the render: the two tables agree, and an
    800G (XDR) fabric with an 800G partition renders."""
    from fabgen.inventory.check_infiniband import IB_RATES
    from fabgen.pipeline import render_to
    from fabgen.targets.infiniband import RATE_CODE, SPEED_TEXT

    assert set(IB_RATES) == set(RATE_CODE) <= set(SPEED_TEXT)
    (tmp_path / "inv.yaml").write_text("""version: 1
cluster: x
node_groups:
  - {name: gpu, model: cx8, count: 8}
node_models:
  cx8:
    gpus: 8
    nics: [{rdma: mlx5_0, speed: 800}, {rdma: mlx5_1, speed: 800}]
switch_models:
  xdr144: {kinds: [infiniband], platforms: [opensm], ports: 144, speed: 800, ports_per_cage: 2}
fabrics:
  - name: ib
    kind: infiniband
    platform: opensm
    topology: rail-optimized
    switch_model: xdr144
    node_groups: [gpu]
    infiniband:
      partitions: [{name: t, pkey: 0x10, rate: 800}]
""")
    render_to(tmp_path / "inv.yaml", tmp_path / "out")
    text = (tmp_path / "out" / "ib" / "infiniband" / "partitions.conf").read_text()
    assert "rate=23" in text


def test_guid_map_with_a_bom_reads_and_synthetic_guids_are_refused(tmp_path) -> None:
    from fabgen.errors import InventoryError
    from fabgen.pipeline import render_to

    inv = tmp_path / "inv.yaml"
    inv.write_text("version: 1\ncluster: c\nnode_groups:\n  - {name: gpu, model: dgx-h100, count: 2}\nfabrics:\n"
                   "  - {name: ib, kind: infiniband, platform: opensm, topology: fat-tree, switch_model: qm9700,\n"
                   "     node_groups: [gpu], infiniband: {guid_map: map.csv}}\n")
    # a spreadsheet export: UTF-8 byte-order mark before the header
    (tmp_path / "map.csv").write_bytes("\ufeffdevice,port,guid\ngpu001,mlx5_0,0x946dae03002d1c6a\n".encode())
    result = render_to(inv, tmp_path / "out")
    assert "0x946dae03002d1c6a" in (tmp_path / "out" / "ib" / "infiniband" / "cn_guids.conf").read_text()
    assert result.validated.guid_maps["ib"]
    (tmp_path / "map.csv").write_text("device,port,guid\ngpu001,mlx5_0,0xfab0010200000001\n")
    with pytest.raises(InventoryError) as err:
        render_to(inv, tmp_path / "out2")
    assert "map.csv:2:15: GUID 0xfab0010200000001 is in fabgen's synthetic range" in str(err.value)


@pytest.mark.parametrize("case", ["superpod-4su", "ib-3tier", "ib-storage", "b300-xdr-2su"])
def test_topology_net_written_in_python_equals_its_template(case: str) -> None:
    """topology.net is written by f-strings for speed; the template says the same bytes."""
    from fabgen.formats.templating import render as render_template
    from fabgen.pipeline import prepare
    from fabgen.targets import infiniband

    for ctx in prepare(INVENTORIES / f"{case}.yaml").contexts.values():
        data = infiniband.structure(ctx)
        assert infiniband.topology_text(data) == render_template("infiniband/topology.net.j2", **data)


STORAGE_IB = """version: 1
cluster: c
node_groups:
  - {name: gpu, model: dgx-h100, count: 2}
  - {name: st, model: server, role: storage, count: 2, hostname: 'st{n:02d}'}
node_models:
  server:
    gpus: 0
    nics:
      - {rdma: mlx5_0, netdev: ibp1s0f0, speed: 400}
      - {rdma: mlx5_1, netdev: ibp1s0f1, speed: 400}
fabrics:
  - name: ib
    kind: infiniband
    platform: opensm
    topology: rail-optimized
    switch_model: qm9700
    node_groups: [gpu, st]
    scalable_unit: 4
    infiniband: {subnet_managers: [sm1, sm2]GUIDMAP}
"""


def test_storage_servers_with_real_guids_are_not_warned_about_synthetic_ones(tmp_path: Path) -> None:
    """Without planned_nodes the storage servers' synthetic GUIDs follow the compute nodes, and
    validate and the report say how many each node added moves. A guid_map's real GUIDs never move:
    only the storage ports left synthetic are counted, none when every GUID is real (what is left for
    `validate --strict` is this small fabric's growth warnings, which planned_nodes would clear)."""
    from typer.testing import CliRunner

    from fabgen.cli import app
    from fabgen.inventory.loader import load_text
    from fabgen.inventory.validate import validate
    from fabgen.pipeline import build

    def moved(text: str) -> tuple[list[str], list[str]]:
        path = tmp_path / "inv.yaml"
        path.write_text(text)
        validated = validate(load_text(text, str(path)))
        _, contexts = build(validated)
        warned = [w for w in validated.warnings.get("ib", []) if "numbered after its compute nodes" in w]
        reported = [w for c in contexts.values() for w in c.summary.warnings if "storage servers'" in w]
        return warned, reported

    bare = STORAGE_IB.replace("GUIDMAP", "")
    warned, reported = moved(bare)
    assert len(warned) == 1 and "adding a compute node moves their 4 synthetic GUIDs" in warned[0], warned
    assert len(reported) == 1 and "moves the storage servers' 4 synthetic GUIDs" in reported[0], reported
    _, contexts = build(validate(load_text(bare, "inv.yaml")))
    guids = next(iter(contexts.values())).allocation.guids  # switch or 'host/rdma' -> GUID: every one
    rows = [(name.partition("/")[0], name.partition("/")[2] or "0") for name in guids]
    mapped = STORAGE_IB.replace("GUIDMAP", ", guid_map: map.csv")

    def write_map(keep) -> None:
        lines = [f"{d},{p},0x946dae03{i:08x}" for i, (d, p) in enumerate(rows, 1) if keep(d, p)]
        (tmp_path / "map.csv").write_text("device,port,guid\n" + "\n".join(lines) + "\n")

    write_map(lambda d, p: (d, p) != ("st02", "mlx5_1"))  # one storage port left synthetic
    warned, reported = moved(mapped)
    assert len(warned) == 1 and "moves their 1 synthetic GUIDs" in warned[0], warned
    assert len(reported) == 1 and "storage servers' 1 synthetic GUIDs" in reported[0], reported
    write_map(lambda d, p: True)
    assert moved(mapped) == ([], [])
    result = CliRunner().invoke(app, ["validate", "--format", "json", str(tmp_path / "inv.yaml")])
    assert result.exit_code == 0, result.output
    said = [w["message"] for w in json.loads(result.output)["warnings"]]
    assert said and not [w for w in said if "storage servers" in w or "synthetic" in w], said  # growth's remain
    assert any(w.endswith("without re-cabling or re-addressing this fabric") for w in said), said
