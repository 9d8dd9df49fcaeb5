"""What a new user meets first: the version, completion, validate for CI (--strict, JSON), the
Python API, a first inventory of several fabrics on defaults, and the package as installed."""

from __future__ import annotations

import ast
import csv
import json
import re
import sys
from pathlib import Path

import pytest
import tomllib
import yaml
from typer.testing import CliRunner

import fabgen
from conftest import INVENTORIES, ROOT
from fabgen.cli import app

FIRST = """version: 1
cluster: first
node_groups:
  - {name: gpu, model: dgx-b300, count: 16}
  - {name: nas, model: nas, count: 4, role: storage}
node_models:
  nas:                      # no gpus: a model without compute NICs has none
    ports: [{rdma: mlx5_0, speed: 400, role: storage}, {rdma: mlx5_1, speed: 400, role: storage},
            {rdma: bmc, speed: 1, role: oob}]
fabrics:
  - {name: compute, kind: spectrum-x, platform: nvue, topology: rail-optimized, switch_model: sn5600,
     node_groups: [gpu], planes: 2}
  - {name: storage, role: storage, kind: spectrum-x, platform: nvue, topology: rail-optimized,
     switch_model: sn5600, node_groups: [gpu, nas]}
  - {name: inband, role: inband, kind: spectrum-x, platform: nvue, topology: rail-optimized,
     switch_model: sn5600, node_groups: [gpu]}
  - {name: oob, role: oob, kind: ethernet, platform: nvue, switch_model: sn2201, node_groups: [gpu, nas],
     management: {prefix: 192.168.0.0/23, gateway: 192.168.0.1}}
"""


def cli(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.stdout, res.stderr


def test_version_is_the_package_version() -> None:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    code, out, _ = cli("--version")
    assert (code, out) == (0, f"fabgen {version}\n") and fabgen.__version__ == version


def test_shell_completion_is_offered() -> None:
    _, out, _ = cli("--help")
    assert "--install-completion" in out and "--show-completion" in out


def test_a_first_inventory_of_four_fabrics_validates_on_defaults(tmp_path: Path) -> None:
    """Compute on two planes, storage, in-band and out-of-band, no pools, no oob topology, a storage
    model without gpus: valid, and each Ethernet fabric has pools of its own."""
    inv = tmp_path / "first.yaml"
    inv.write_text(FIRST)
    code, out, err = cli("validate", str(inv))
    assert code == 0, err
    v = fabgen.validate(inv)
    assert [f.name for f in v.fabrics] == ["compute", "storage", "inband", "oob"]
    rendered = fabgen.render(inv, tmp_path / "out")
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    addresses = {}
    for name in ("compute-plane1", "compute-plane2", "storage", "inband"):
        with open(tmp_path / "out" / name / "addresses.csv", newline="") as fh:
            addresses[name] = {r["address"].split("/")[0] for r in csv.DictReader(fh) if r["address"]}
    assert all(addresses.values())
    for a in addresses:
        for b in addresses:
            assert a == b or not addresses[a] & addresses[b], (a, b, sorted(addresses[a] & addresses[b])[:3])
    assert "report.json" in rendered.files
    assert report["fabrics"]["storage"]["nodes"] == 20


def test_default_pools_stay_when_fabrics_are_added() -> None:
    from fabgen.inventory.defaults import default_pools

    doc = yaml.safe_load(FIRST)
    before = fabgen.validate(doc)
    doc["fabrics"].append({**doc["fabrics"][2], "name": "inband2", "node_groups": ["gpu2"]})  # at the end
    doc["fabrics"].insert(1, {**doc["fabrics"][0], "name": "compute2", "planes": 1})  # a compute one, in front
    doc["node_groups"].append({"name": "gpu2", "model": "dgx-h100", "count": 4})
    doc["fabrics"][1]["node_groups"] = ["gpu2"]
    from fabgen.inventory.loader import load_text
    from fabgen.inventory.validate import validate

    v = validate(load_text(yaml.safe_dump(doc, sort_keys=False), "grown.yaml"))
    from fabgen.spec.schema import EthernetOptions

    got = {f.name: (f.ethernet or EthernetOptions()).pools.model_dump() for f in v.inventory.fabrics
           if f.kind != "ethernet"}
    assert got["storage"] == default_pools("storage", 0) and got["inband"] == default_pools("inband", 0)
    assert got["compute2"] == default_pools("compute", 1) and got["inband2"] == default_pools("inband", 1)
    assert got["compute"] == {"loopbacks": "10.255.0.0/16", "links": "10.0.0.0/13", "hosts": "10.8.0.0/13"}
    assert len(before.fabrics) == 4


def test_validate_strict_fails_on_warnings_only(tmp_path: Path) -> None:
    code, _, err = cli("validate", str(INVENTORIES / "roce-2node.yaml"), "--strict")
    assert code == 1 and "warning(s) and --strict" in err
    code, _, _ = cli("validate", str(INVENTORIES / "spectrumx-1su.yaml"), "--strict")
    assert code == 0


def test_validate_json_has_sizes_and_located_warnings() -> None:
    code, out, _ = cli("validate", str(INVENTORIES / "roce-2node.yaml"), "--format", "json")
    doc = json.loads(out)
    assert code == 0 and doc["valid"] is True
    (fab,) = doc["fabrics"]
    assert (fab["name"], fab["nodes"], fab["switches"]["leaf"]) == ("roce", 2, 1)
    located = [w for w in doc["warnings"] if w["path"]]
    assert located and all(w["line"] > 0 and w["column"] > 0 and w["fabric"] == "roce" for w in located)
    assert not any(re.match(r"fabrics\[\d+\] \(line", w["message"]) for w in doc["warnings"])


def test_validate_json_of_bad_input_lists_the_problems_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text((INVENTORIES / "roce-2node.yaml").read_text().replace("count: 2", "count: -2"))
    code, out, _ = cli("validate", str(bad), "--format", "json")
    doc = json.loads(out)
    assert code == 2 and doc["valid"] is False
    (p,) = doc["problems"]
    assert p["file"] == str(bad) and p["line"] > 0 and "count" in p["path"]


def test_the_python_api_takes_a_path_or_a_mapping(tmp_path: Path) -> None:
    path = INVENTORIES / "spectrumx-1su.yaml"
    by_path = fabgen.validate(path)
    by_map = fabgen.validate(yaml.safe_load(path.read_text()))
    assert by_path.fabrics == by_map.fabrics and by_map.inventory == "<mapping>"
    rendered = fabgen.render(yaml.safe_load(path.read_text()), tmp_path / "out")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {f["path"]: f["sha256"] for f in manifest["files"]} == \
        {k: v[0] for k, v in rendered.files.items() if k != "manifest.json"}
    assert rendered.fabrics == by_path.fabrics


def test_the_python_api_raises_one_error_type_with_located_problems() -> None:
    doc = yaml.safe_load((INVENTORIES / "spectrumx-1su.yaml").read_text())
    doc["fabrics"][0]["tiers"] = 7
    doc["fabrics"][0]["switch_model"] = "sn9999"
    with pytest.raises(fabgen.InventoryError) as err:
        fabgen.validate(doc)
    paths = {p.path for p in err.value.problems}
    assert "fabrics[0].tiers" in paths
    assert all(p.line > 0 and p.file == "<mapping>" for p in err.value.problems)


def test_every_imported_package_is_declared() -> None:
    """Every third-party module the package imports is a declared dependency (or an optional
    extra for the command that needs it)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=\[ ]", d)[0].lower() for d in declared["dependencies"]}
    names |= {re.split(r"[<>=\[ ]", d)[0].lower() for d in declared["optional-dependencies"]["chart"]}
    module_of = {"pyyaml": {"yaml"}, "pydantic": {"pydantic", "pydantic_core"}}  # pydantic pins its core
    modules = {m for n in names for m in module_of.get(n, {n})}
    imported = set()
    for path in (ROOT / "generator" / "fabgen").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    stdlib = set(sys.stdlib_module_names) | {"fabgen", "__future__"}
    assert imported - stdlib <= modules, sorted(imported - stdlib - modules)


def test_validate_and_the_report_count_a_storage_fabric_alike(tmp_path: Path) -> None:
    """A storage fabric's nodes are the compute nodes' storage ports and the storage servers:
    `fabgen validate` counts them as report.json does; the out-of-band network is an access
    layer, not a fat tree."""
    v = fabgen.validate(INVENTORIES / "b300-cluster.yaml")
    fabgen.render(INVENTORIES / "b300-cluster.yaml", tmp_path / "out")
    report = json.loads((tmp_path / "out" / "report.json").read_text())["fabrics"]
    storage = next(f for f in v.fabrics if f.name == "storage")
    assert ((storage.nodes, storage.endpoints) == (report["storage"]["nodes"], report["storage"]["endpoints"])
            == (68, 136))
    assert report["oob"]["topology"] == "access" and "fat-tree" not in (tmp_path / "out" / "report.md").read_text()
