"""Secrets: the inventory names an environment variable, never a value; rendered configs carry
a reference to it; fabgen never reads it, so it cannot reach files, the report, the diff or
logs; a literal in the inventory is refused without being echoed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from fabgen.intent import secret_ref

SENTINEL = "SENTINEL-not-to-be-seen-7f3a"
INV = """version: 1
cluster: c1
node_groups:
  - {{name: gpu, model: dgx-h100, count: 8}}
fabrics:
  - name: eth
    kind: {kind}
    platform: {platform}
    topology: fat-tree
    switch_model: {model}
    node_groups: [gpu]
    tiers: 2
    ethernet:
      bgp_password: {{env: FABGEN_BGP_PASSWORD}}
"""


def fabgen(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabgen", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=300)


@pytest.mark.parametrize("kind,platform,model,needle", [
    ("roce", "eos", "arista-7060x5", " password 0 " + secret_ref("FABGEN_BGP_PASSWORD")),
    ("roce", "sonic", "arista-7060x6-64pe-b", '"auth_password": "' + secret_ref("FABGEN_BGP_PASSWORD")),
    ("spectrum-x", "nvue", "sn5600", 'password: "' + secret_ref("FABGEN_BGP_PASSWORD")),
])
def test_secret_is_a_reference_and_never_a_value(kind, platform, model, needle, tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(INV.format(kind=kind, platform=platform, model=model))
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    res = fabgen("render", str(inv), "-o", str(out_a), env={"FABGEN_BGP_PASSWORD": SENTINEL})
    assert res.returncode == 0, res.stderr
    assert SENTINEL not in res.stdout + res.stderr
    files = {p: p.read_bytes() for p in out_a.rglob("*") if p.is_file()}
    assert not [p for p, b in files.items() if SENTINEL.encode() in b]
    switch_files = [b.decode() for p, b in files.items() if "/switches/" in p.as_posix()
                    and not p.name.endswith(".sh")]
    assert switch_files and all(needle in text for text in switch_files)
    if platform == "nvue":
        script = next(b.decode() for p, b in files.items() if p.name.endswith(".nvue.sh"))
        assert 'password "${FABGEN_BGP_PASSWORD}"' in script and SENTINEL not in script
    # a second render with another value is byte-identical: the value never enters the output
    res = fabgen("render", str(inv), "-o", str(out_b), env={"FABGEN_BGP_PASSWORD": "other-value"})
    assert res.returncode == 0
    diff = fabgen("diff", str(out_a), str(out_b), "--exit-code", env={"FABGEN_BGP_PASSWORD": SENTINEL})
    assert diff.returncode == 0 and SENTINEL not in diff.stdout + diff.stderr


def test_literal_secret_is_refused_without_echo() -> None:
    bad = ROOT / "tests" / "errors" / "secret-literal.yaml"
    res = fabgen("validate", str(bad), env={})
    assert res.returncode == 2
    assert "secrets are never written into the inventory" in res.stderr
    assert "hunter2" not in res.stdout + res.stderr
