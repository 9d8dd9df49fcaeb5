"""Every generated script is shell-safe: inventory text reaches scripts only through fields that
validation restricts to a safe character set, and free text never reaches a script. Shell
metacharacters are fed through every free-text field an inventory has, and every script is run
(with stub commands) to show that nothing in the text runs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from fabgen.errors import InventoryError
from fabgen.pipeline import render_to

# every shell metacharacter; braces are refused in free text (Jinja, tests/test_hostile.py)
EVIL = "x$(touch {s})`touch {s}`;touch {s}|touch {s}&&touch {s}'\\\"%#<>"

INV = """version: 1
cluster: c
node_groups:
  - {{name: gpu, model: box, count: 4}}
node_models:
  box:
    gpus: 8
    vendor: "{evil}"
    part: "{evil}"
    nic_model: "{evil}"
    transceiver: "{evil}"
    nics: [{{rdma: mlx5_0, netdev: eth0, speed: 400, label: "{evil}", cage: "{evil}"}},
           {{rdma: mlx5_1, netdev: eth1, speed: 400, label: "{evil}", cage: "{evil}"}}]
switch_models:
  sw:
    kinds: [{kind}]
    platforms: [{platform}]
    ports: 32
    speed: 400
    port_name: "swp{{n}}"
    vendor: "{evil}"
    part: "{evil}"
    transceiver: "{evil}"
fabrics:
  - name: f
    kind: {kind}
    platform: {platform}
    topology: fat-tree
    switch_model: sw
    node_groups: [gpu]
    management:
      prefix: 10.77.0.0/24
      users: [{{name: ops, password_hash: {{env: OPS_HASH}}}}]
"""


def _stubs(bin_dir: Path, log: Path) -> None:
    bin_dir.mkdir(parents=True)
    for tool in ("nv", "mlxconfig", "mlnx_qos", "ethtool", "ip", "sysctl", "cma_roce_mode", "cma_roce_tos"):
        (bin_dir / tool).write_text(f'#!/bin/sh\nprintf "%s\\n" "{tool} $*" >> "{log}"\n')
        (bin_dir / tool).chmod(0o755)


@pytest.mark.parametrize("kind,platform", [("roce", "eos"), ("spectrum-x", "nvue")])
def test_metacharacters_never_run(kind: str, platform: str, tmp_path: Path) -> None:
    sentinel = tmp_path / "pwned"
    evil = EVIL.format(s=sentinel.name).replace("\\", "\\\\").replace('"', '\\"')  # scripts run in tmp_path
    inv = tmp_path / "inv.yaml"
    inv.write_text(INV.format(evil=evil, kind=kind, platform=platform))
    render_to(inv, tmp_path / "out")
    scripts = sorted((tmp_path / "out").rglob("*.sh"))
    assert scripts
    log = tmp_path / "log"
    _stubs(tmp_path / "bin", log)
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "OPS_HASH": "$6$x$y", "HOME": str(tmp_path)}
    for script in scripts:
        assert subprocess.run(["bash", "-n", str(script)], capture_output=True).returncode == 0, script
        for args in (["--dry-run"], []) if script.name == "hca-setup.sh" else ([],):
            subprocess.run(["bash", str(script), *args], capture_output=True, text=True, timeout=60, env=env,
                           cwd=tmp_path)
    assert not sentinel.exists(), "text from the inventory ran as a command"
    # the probe works: the same text, in a script as unquoted text, does create the sentinel
    subprocess.run(["bash", "-c", "echo " + EVIL.format(s=sentinel.name).split("'")[0]], capture_output=True,
                   cwd=tmp_path)
    assert sentinel.exists()
    # the free text is in the outputs meant for people, where it belongs, not in a script
    assert "touch" in (tmp_path / "out" / "f" / "bom.csv").read_text()
    assert not any("touch" in s.read_text() for s in scripts)


@pytest.mark.parametrize("field,value", [("hostname", "gpu{n}$(id)"), ("bootstrap_interface", "eth0;id"),
                                         ("name", "gpu;id")])
def test_fields_that_reach_scripts_refuse_metacharacters(field: str, value: str, tmp_path: Path) -> None:
    line = {"hostname": f'  - {{name: gpu, model: dgx-h100, count: 2, hostname: "{value}"}}',
            "bootstrap_interface": f'  - {{name: gpu, model: dgx-h100, count: 2, bootstrap_interface: "{value}"}}',
            "name": f'  - {{name: "{value}", model: dgx-h100, count: 2}}'}[field]
    inv = tmp_path / "inv.yaml"
    inv.write_text(f"version: 1\ncluster: c\nnode_groups:\n{line}\nfabrics:\n  - {{name: f, kind: roce, "
                   "platform: eos, topology: fat-tree, switch_model: arista-7060x5, node_groups: [gpu]}\n")
    with pytest.raises(InventoryError):
        render_to(inv, tmp_path / "out")
    assert not (tmp_path / "out").exists()
