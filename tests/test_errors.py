"""Error goldens: each bad inventory gives its exact located messages, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ERRORS
from fabgen.cli import app

CASES = sorted(p.stem for p in ERRORS.glob("*.yaml"))


@pytest.mark.parametrize("case", CASES)
def test_error_golden(case: str, tmp_path: Path, update_golden: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ERRORS)
    out = tmp_path / "parent" / "out"  # not even the parent may be created
    result = CliRunner().invoke(app, ["render", f"{case}.yaml", "-o", str(out)])
    stderr = result.stderr
    expected_file = ERRORS / f"{case}.expected"
    if update_golden:
        expected_file.write_text(stderr)
        return
    assert result.exit_code == 2, (result.exit_code, stderr, result.exception)
    assert "Traceback" not in stderr
    assert not out.exists(), "a bad inventory must not write anything"
    assert not list(tmp_path.iterdir()), "nothing beside OUT either: no parent, no temporary tree"
    assert expected_file.exists(), f"{expected_file.name} is missing: run pytest --update-golden and review it"
    assert stderr == expected_file.read_text()
    for line in stderr.splitlines()[:-1]:
        assert line.startswith((f"{case}.yaml:", f"{case}.csv:")), line
        parts = line.split(":")
        assert parts[1].isdigit() and parts[2].isdigit(), f"no line:column in {line!r}"


def test_every_expected_has_an_inventory() -> None:
    stale = sorted(p.name for p in ERRORS.glob("*.expected") if not p.with_suffix(".yaml").exists())
    assert not stale
