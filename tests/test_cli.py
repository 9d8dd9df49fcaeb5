"""The command line: help, schema, validate, render, exit codes."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import GOLDEN, INVENTORIES, ROOT
from fabgen.cli import app
from fabgen.inventory.loader import load
from fabgen.inventory.validate import validate

runner = CliRunner()


def test_schema_is_json_schema_of_the_inventory() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["title"] == "Inventory"
    assert set(schema["required"]) == {"version", "cluster", "node_groups", "fabrics"}
    assert schema["additionalProperties"] is False
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema" and schema["$id"].endswith(".json")


def test_the_json_schema_accepts_every_example_and_refuses_a_broken_one() -> None:
    """What an editor does with it (docs/reference/editors.md): a JSON Schema validator of the
    dialect the schema names checks the examples as written, and refuses an unknown key."""
    import jsonschema
    import yaml

    schema = json.loads(runner.invoke(app, ["schema"]).stdout)
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    check = validator(schema)
    for path in sorted(INVENTORIES.glob("*.yaml")):
        errors = [e.message for e in check.iter_errors(yaml.safe_load(path.read_text()))]
        assert not errors, (path.name, errors[:3])
    broken = yaml.safe_load((INVENTORIES / "roce-2node.yaml").read_text())
    broken["fabrics"][0]["tier"] = 2
    assert any("tier" in e.message for e in check.iter_errors(broken))


def test_design_example_validates_as_written() -> None:
    """The original design's example inventory, verbatim, is inventories/superpod-4su.yaml."""
    v = validate(load(INVENTORIES / "superpod-4su.yaml"))
    assert v.plans["compute"].leaves == 32


def test_validate_prints_sizes() -> None:
    result = runner.invoke(app, ["validate", str(INVENTORIES / "ib-3tier.yaml")])
    assert result.exit_code == 0
    assert "16 leaf, 16 spine, 8 core switches" in result.stdout


def test_validate_prints_the_warnings_render_prints(tmp_path: Path) -> None:
    """The check-first command shows what needs acting on: the same warnings as render."""
    inv = str(INVENTORIES / "superpod-4su.yaml")
    checked = subprocess.run([sys.executable, "-m", "fabgen", "validate", inv], capture_output=True, text=True)
    rendered = subprocess.run([sys.executable, "-m", "fabgen", "render", inv, "-o", str(tmp_path / "out")],
                              capture_output=True, text=True)
    assert checked.returncode == 0 and rendered.returncode == 0
    warnings = [line for line in rendered.stderr.splitlines() if ": warning: " in line]
    assert warnings and any("synthetic" in w for w in warnings) and any("31 of 32 nodes" in w for w in warnings)
    assert [line for line in checked.stderr.splitlines() if ": warning: " in line] == warnings


def test_help_lists_commands() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    for cmd in ("render", "validate", "schema"):
        assert cmd in result.stdout


def test_render_as_a_subprocess_reports_and_writes(tmp_path: Path) -> None:
    out = tmp_path / "o"
    p = subprocess.run([sys.executable, "-m", "fabgen", "render", str(INVENTORIES / "superpod-4su.yaml"), "-o",
                        str(out)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "scalable unit 4 has 31 of 32 nodes" in p.stderr
    report = json.loads((out / "report.json").read_text())
    f = report["fabrics"]["compute"]
    assert (f["tiers"], f["endpoints"], f["switches"]) == (2, 1016, {"leaf": 32, "spine": 16, "core": 0})


def test_bad_input_exit_code_and_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\ncluster: x\nnode_groups: 3\nfabrics: []\n")
    out = tmp_path / "o"
    p = subprocess.run([sys.executable, "-m", "fabgen", "render", str(bad), "-o", str(out)],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert f"{bad}:3:14: node_groups: must be a list" in p.stderr
    assert not out.exists()


def test_inventory_reference_is_generated_from_the_models(update_golden: bool) -> None:
    """docs/inventory.md is `fabgen schema --format markdown`: every key the models accept, with
    its default; changing a model without regenerating it fails here."""
    from conftest import ROOT
    from fabgen.inventory.reference import markdown
    from fabgen.spec.schema import Inventory

    text = markdown()
    path = ROOT / "docs" / "inventory.md"
    if update_golden:
        path.write_text(text)
    assert path.read_text() == text, "run pytest --update-golden (or fabgen schema --format markdown) and commit"
    for key in ("`fabrics[].management.gateway`", "`fabrics[].platform_version`", "`node_groups[].nccl_version`",
                "`switch_models.<key>.sonic.hwsku`", "`fabrics[].ethernet.qos.pfc_watchdog.detection_ms`"):
        assert key in text
    assert len(Inventory.model_fields) == sum(1 for line in text.splitlines() if line.startswith("| `") and
                                             "." not in line.split("`")[1] and "[" not in line.split("`")[1])


def test_a_crafted_file_name_cannot_forge_a_line(tmp_path: Path) -> None:
    """Messages are one line per problem whatever the file name holds: a newline in the name is
    written as an escape, so the name cannot print a fake 'valid' line or a fake location."""
    bad = tmp_path / "inv\nfake.yaml:1:1: all good\x1b[2K"
    bad.write_text("version: 2\n")
    run = subprocess.run([sys.executable, "-m", "fabgen", "validate", str(bad)], capture_output=True, text=True)
    assert run.returncode == 2
    lines = run.stderr.splitlines()
    assert len(lines) == 2 and "\\nfake.yaml:1:1: all good\\x1b[2K:1:10: version:" in lines[0]
    assert "\x1b" not in run.stderr


@pytest.mark.parametrize("case", sorted(p.stem for p in INVENTORIES.glob("*.yaml")))
def test_every_example_validates_with_its_size(case: str) -> None:
    """validate prints one size line per inventory fabric (a multi-plane one summed over its planes),
    named with its role where it is not compute; the out-of-band network by its access switches."""
    result = runner.invoke(app, ["validate", str(INVENTORIES / f"{case}.yaml")])
    assert result.exit_code == 0, result.output
    v = validate(load(INVENTORIES / f"{case}.yaml"))
    oob = [f for f in v.inventory.fabrics if f.role == "oob"]
    for f in oob:
        p = v.plans[f.name]
        # the nodes' ports as the render cables them (a GB300 tray's three, a server's one)
        switches = {m.name for _, m in v.managed[f.name].switches}
        with (GOLDEN / case / f.name / "cabling.csv").open() as cabling:
            ports = sum(r["tier"] == "node-leaf" and r["a_device"] not in switches for r in csv.DictReader(cabling))
        assert (f"{f.name} (oob): {p.present_units} access switches at 1G for {ports} node ports and "
                f"{len(v.managed[f.name].switches)} switch management ports") in result.stdout
    fabrics = [f for f in v.inventory.fabrics if f.role != "oob"]
    lines = [line for line in result.stdout.splitlines() if " tier(s), " in line]
    assert [line.split(":")[0] for line in lines] == [f.name + (f" ({f.role})" if f.role != "compute" else "")
                                                      for f in fabrics]
    for line, f in zip(lines, fabrics):
        p = v.plans[f.name]
        leaves = f.planes * p.leaves if not p.planned else f.planes * (p.present_compute_leaves + p.storage_leaves)
        assert f"{leaves} leaf" in line
