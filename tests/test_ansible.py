"""Ansible reads and runs the output: ansible-inventory lists every device in its groups, every
playbook of ansible/ passes --syntax-check, and a real local run of the staging playbook
changes files the first time and nothing the second. The deploy playbooks' guards run for real;
the NVUE, SONiC and host playbooks run whole on this machine in place of the device, with
stand-ins for the device's commands that log their calls (tests/test_ansible_lint.py: lint,
module arguments, the EOS connection's SSH library)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from readback import read_cabling

from conftest import IN_CI, INVENTORIES
from fabgen.pipeline import render_to

pytestmark = pytest.mark.integration
BIN = Path(sys.executable).parent
PLAYBOOK = shutil.which("ansible-playbook", path=str(BIN)) or shutil.which("ansible-playbook")
INVENTORY = shutil.which("ansible-inventory", path=str(BIN)) or shutil.which("ansible-inventory")
if not (PLAYBOOK and INVENTORY):
    if IN_CI:
        raise RuntimeError("CI must have ansible: `make test` installs the test extras")
    pytestmark = [pytestmark, pytest.mark.skip(reason="ansible not installed")]
ENV = {"ANSIBLE_NOCOLOR": "1", "ANSIBLE_HOST_KEY_CHECKING": "False", "ANSIBLE_RETRY_FILES_ENABLED": "False",
       "PATH": f"{BIN}:/usr/bin:/bin"}


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=600, env=ENV)


@pytest.mark.parametrize("case,fabric", [("superpod-4su", "compute"), ("fattree-2to1", "fabric"),
                                         ("spectrumx-1su", "sx"), ("roce-3tier", "eth")])
def test_inventory_lists_every_device_in_its_groups(case: str, fabric: str, tmp_path: Path) -> None:
    render_to(INVENTORIES / f"{case}.yaml", tmp_path)
    res = run(INVENTORY, "-i", "ansible/inventory.yml", "--list", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    cabling = read_cabling(tmp_path, fabric)
    switches = {r["z_device"] for r in cabling} | {r["a_device"] for r in cabling if r["tier"] != "node-leaf"}
    nodes = {r["a_device"] for r in cabling if r["tier"] == "node-leaf"} - {
        r["a_device"] for r in cabling if "-storage-leaf" in r["z_device"]}
    group = f"fabric_{fabric.replace('-', '_')}"
    assert set(data[group]["hosts"]) == switches | nodes
    assert set(data["role_node"]["hosts"]) == nodes
    roles = {r: set(data.get(f"role_{r}", {}).get("hosts", [])) for r in ("leaf", "spine", "core")}
    assert set().union(*roles.values()) == switches
    assert all(name.split("-")[-1].startswith(r) or f"-{r}" in name for r, names in roles.items() for name in names)
    hostvars = data["_meta"]["hostvars"]
    for sw in switches:
        # a routed switch's target Ansible does not read leaves this empty (InfiniBand switches have no files)
        assert hostvars[sw]["fabgen_files"] or hostvars[sw]["fabgen_platform"] in ("ufm", "opensm"), sw
        for f in hostvars[sw]["fabgen_files"]:
            assert (tmp_path / f["src"]).is_file()
        assert "fabgen_config" not in hostvars[sw]  # the inventory stays small (configs/ holds it)


def test_a_play_reads_the_structured_config_its_host_vars_name(tmp_path: Path) -> None:
    """host_vars name ansible/configs/<device>.json; a play loads it the documented way
    (lookup + from_json), and a broken file fails that play."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-2node.yaml", out)
    play = tmp_path / "read.yml"
    play.write_text("- hosts: platform_eos\n  gather_facts: false\n  connection: local\n  tasks:\n"
                    "    - debug:\n        msg: \"ASN {{ (lookup('file', fabgen_out ~ '/' ~ fabgen_config_file) "
                    "| from_json).fabgen_config.bgp.asn }}\"\n")
    res = run(PLAYBOOK, "-i", "ansible/inventory.yml", str(play), cwd=out)
    asn = json.loads((out / "ansible/configs/roce-leaf01.json").read_text())["fabgen_config"]["bgp"]["asn"]
    assert res.returncode == 0 and f'"msg": "ASN {asn}"' in res.stdout, res.stdout[-2000:]
    (out / "ansible/configs/roce-leaf01.json").write_text('{"fabgen_config": ')
    res = run(PLAYBOOK, "-i", "ansible/inventory.yml", str(play), cwd=out)
    assert res.returncode != 0


def test_every_playbook_passes_syntax_check(tmp_path: Path) -> None:
    render_to(INVENTORIES / "fattree-2to1.yaml", tmp_path)
    # the playbooks render writes beside the inventory they read (OUT/ansible), as the README runs them
    playbooks = sorted([*(tmp_path / "ansible").glob("deploy-*.yml"), tmp_path / "ansible" / "stage.yml"])
    assert len(playbooks) >= 6
    for pb in playbooks:
        res = run(PLAYBOOK, "-i", "ansible/inventory.yml", "--syntax-check", str(pb), cwd=tmp_path)
        assert res.returncode == 0, f"{pb.name}: {res.stdout[-1500:]}{res.stderr[-1500:]}"


def _changed(output: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+)\s+: ok=\d+\s+changed=(\d+)", output, re.M)}


def test_staging_run_changes_once_then_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-2node.yaml", out)
    stage = tmp_path / "stage"
    cmd = (PLAYBOOK, "-i", "ansible/inventory.yml", "ansible/stage.yml", "-e", f"stage_dir={stage}")
    first = run(*cmd, cwd=out)
    assert first.returncode == 0, first.stdout[-3000:]
    assert set(_changed(first.stdout)) == {"roce-leaf01", "gpu01", "gpu02"}
    assert all(n > 0 for n in _changed(first.stdout).values())
    assert (stage / "roce-leaf01" / "roce-leaf01.cfg").read_bytes() == \
        (out / "roce" / "switches" / "roce-leaf01.cfg").read_bytes()
    assert sorted(p.name for p in (stage / "gpu01").iterdir()) == ["hca-setup.sh", "nccl.env", "netplan.yaml"]
    second = run(*cmd, cwd=out)
    assert second.returncode == 0, second.stdout[-3000:]
    assert set(_changed(second.stdout).values()) == {0}


def test_management_addresses_become_ansible_host(tmp_path: Path) -> None:
    render_to(INVENTORIES / "roce-3tier.yaml", tmp_path)
    res = run(INVENTORY, "-i", "ansible/inventory.yml", "--list", cwd=tmp_path)
    hostvars = json.loads(res.stdout)["_meta"]["hostvars"]
    switches = sorted((h for h in hostvars if h.startswith("eth-")), key=lambda n: (
        {"leaf": 0, "spine": 1, "core": 2}[hostvars[n]["fabgen_role"]], n))
    # the gateway (192.168.1.1) is never a switch's address
    assert [hostvars[s]["ansible_host"] for s in switches[:2]] == ["192.168.1.2", "192.168.1.3"]
    assert len({hostvars[s]["ansible_host"] for s in switches}) == 24
    assert hostvars["gpu001"]["ansible_host"] == "192.168.10.1"
    assert hostvars["gpu032"]["ansible_host"] == "192.168.10.32"


SECRETS = {"FABGEN_NETOPS_HASH": "$6$salt$hash", "FABGEN_NETOPS_KEY": "ssh-ed25519 AAAAC3 netops",
           "FABGEN_MONITOR_HASH": "$6$salt$hash2"}
GUARDED = {"eos": ("roce-3tier", "deploy-eos.yml", "eth/switches/eth-su001-leaf1.cfg", "eth-su001-leaf1",
                   r"(?ms)^interface Management1$.*?^!\n"),
           "sonic": ("fattree-2to1", "deploy-sonic.yml", "fabric/switches/fabric-leaf001/config_db.json",
                     "fabric-leaf001", r'    "MGMT_INTERFACE": \{\n[^\n]*\n    \},\n'),
           "nvue": ("spectrumx-1su", "deploy-nvue.yml", "sx/switches/sx-su01-leaf1.nvue.yaml", "sx-su01-leaf1",
                    r"(?ms)^      eth0:\n.*?(?=^      swp)"),
           # an out-of-band access switch: managed on its management VLAN interface, not eth0
           "nvue-oob": ("superpod-cluster", "deploy-nvue.yml", "ipminet/switches/ipminet-compute-access0001.nvue.yaml",
                        "ipminet-compute-access0001", r"(?ms)^      vlan10:\n.*?(?=^    \S)"),
           "nvue-5.18": ("spectrumx-518-lossy", "deploy-nvue.yml", "sx2/switches/sx2-su01-leaf1.nvue.yaml",
                         "sx2-su01-leaf1", r"(?ms)^      eth0:\n.*?(?=^      swp)")}


def guard(out: Path, playbook: str, device: str, secrets: dict[str, str]) -> subprocess.CompletedProcess:
    """The real deploy playbook, limited to its guard tasks (they run on the control node)."""
    return subprocess.run([PLAYBOOK, "-i", "ansible/inventory.yml", f"ansible/{playbook}", "--tags",
                           "guard", "--limit", device], cwd=out, capture_output=True, text=True, timeout=600,
                          env={**ENV, **secrets})


def test_every_routed_platform_has_its_guard_test() -> None:
    from fabgen.spec.platforms import routed

    assert {name.split("-")[0] for name in GUARDED} == set(routed())


@pytest.mark.parametrize("platform", sorted(GUARDED))
def test_deploy_refuses_a_config_without_its_management_plane(platform: str, tmp_path: Path) -> None:
    case, playbook, path, device, block = GUARDED[platform]
    render_to(INVENTORIES / f"{case}.yaml", tmp_path)
    ok = guard(tmp_path, playbook, device, SECRETS)
    assert ok.returncode == 0, ok.stdout[-3000:]
    target = tmp_path / path
    text = target.read_text()
    stripped, n = re.subn(block, "", text, count=1)
    assert n == 1, "the test must remove the management block it means to"
    target.write_text(stripped)
    refused = guard(tmp_path, playbook, device, SECRETS)
    assert refused.returncode != 0
    assert f"{path} lacks" in refused.stdout, refused.stdout[-3000:]


def test_deploy_refuses_unset_secrets_and_devices_without_an_address(tmp_path: Path) -> None:
    render_to(INVENTORIES / "roce-3tier.yaml", tmp_path / "a")
    missing = guard(tmp_path / "a", "deploy-eos.yml", "eth-su001-leaf1",
                    {k: v for k, v in SECRETS.items() if k != "FABGEN_MONITOR_HASH"})
    assert missing.returncode != 0
    assert "FABGEN_MONITOR_HASH, which is empty here" in missing.stdout, missing.stdout[-3000:]
    inv = (INVENTORIES / "roce-2node.yaml").read_text()
    assert "management" not in inv
    render_to(INVENTORIES / "roce-2node.yaml", tmp_path / "b")
    unmanaged = guard(tmp_path / "b", "deploy-eos.yml", "roce-leaf01", SECRETS)
    assert unmanaged.returncode != 0
    assert "roce-leaf01: no management address" in unmanaged.stdout, unmanaged.stdout[-3000:]


@pytest.mark.parametrize("bad", ['hash"', "back\\slash", "line\nbreak"])
def test_deploy_refuses_a_secret_its_config_cannot_hold(bad: str, tmp_path: Path) -> None:
    """A secret is filled into a JSON or YAML string (or an EOS line) as it is: one holding a double
    quote, a backslash or a control character is refused before anything reaches the switch."""
    render_to(INVENTORIES / "roce-3tier.yaml", tmp_path)
    refused = guard(tmp_path, "deploy-eos.yml", "eth-su001-leaf1", {**SECRETS, "FABGEN_MONITOR_HASH": bad})
    assert refused.returncode != 0
    assert "FABGEN_MONITOR_HASH, which holds a double quote, a backslash or a control character" in refused.stdout, \
        refused.stdout[-3000:]


def test_subnet_manager_deploy_refuses_synthetic_guids(tmp_path: Path) -> None:
    """ib-3tier names its SM hosts; without a guid_map its GUID files are synthetic and the
    SM playbook refuses them; with every GUID given, the same guard passes."""
    out = tmp_path / "synthetic"
    render_to(INVENTORIES / "ib-3tier.yaml", out)
    res = run(INVENTORY, "-i", "ansible/inventory.yml", "--list", cwd=out)
    data = json.loads(res.stdout)
    assert data["subnet_manager"]["hosts"] == ["pod-b-sm1", "pod-b-sm2"]
    files = data["_meta"]["hostvars"]["pod-b-sm1"]["fabgen_files"]
    assert {"src": "ib/infiniband/opensm.conf", "dest": "/etc/opensm/opensm.conf", "mode": "0644"} in files
    conf = (out / "ib/infiniband/opensm.conf").read_text()
    for f in files:  # every path opensm.conf names is where the playbook installs that file
        assert (out / f["src"]).is_file()
        if f["src"].endswith("_guids.conf") or f["src"].endswith("partitions.conf"):
            assert f["dest"] in conf
    refused = guard(out, "deploy-sm.yml", "pod-b-sm1", {})
    assert refused.returncode != 0 and "holds synthetic GUIDs" in refused.stdout, refused.stdout[-3000:]

    # the same fabric with a GUID map naming every device: the guard passes
    rows = ["device,port,guid"]
    for line in (out / "ib/infiniband/node-name-map").read_text().splitlines():
        if line.startswith("0x"):
            guid, name = line.split(None, 1)
            name = name.strip('"')
            device, _, port = name.partition(" ")
            rows.append(f"{device},{port or '0'},0x0002c9{guid[-10:]}")
    (tmp_path / "guids.csv").write_text("\n".join(rows) + "\n")
    inv = (INVENTORIES / "ib-3tier.yaml").read_text().replace("      qos: true\n",
                                                              "      qos: true\n      guid_map: guids.csv\n")
    (tmp_path / "ib.yaml").write_text(inv)
    real = tmp_path / "real"
    render_to(tmp_path / "ib.yaml", real)
    assert "0xfab0" not in (real / "ib/infiniband/cn_guids.conf").read_text()
    passed = guard(real, "deploy-sm.yml", "pod-b-sm1", {})
    assert passed.returncode == 0, passed.stdout[-3000:]


def test_eos_session_commands_are_the_rendered_config(tmp_path: Path) -> None:
    """The EOS playbook types the staged file (secrets filled) into a clean-config session that
    ends with a commit timer; its stage tasks run on the control node."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-3tier.yaml", out)
    res = subprocess.run([PLAYBOOK, "-i", "ansible/inventory.yml", "ansible/deploy-eos.yml",
                          "--tags", "guard,stage", "--limit", "eth-su001-leaf1", "-v"], cwd=out,
                         capture_output=True, text=True, timeout=600, env={**ENV, **SECRETS})
    assert res.returncode == 0, res.stdout[-3000:]
    staged = (tmp_path / ".fabgen-stage" / "eth-su001-leaf1.cfg").read_text()
    assert "secret sha512 $6$salt$hash\n" in staged and "lookup(" not in staged
    assert '"configure session fabgen"' in res.stdout and '"rollback clean-config"' in res.stdout
    assert '"commit timer 00:10:00"' in res.stdout and '"interface Management1"' in res.stdout
    assert '"end"' not in res.stdout


def test_eos_banner_lines_are_sent_without_waiting_for_a_prompt(tmp_path: Path) -> None:
    """EOS gives no prompt inside a banner: its lines up to EOF go as `sendonly` commands (as
    arista.eos's own eos_config sends them), EOF waits for the prompt again, and the rest of the
    file stays plain commands."""
    inv = tmp_path / "banner.yaml"
    inv.write_text((INVENTORIES / "roce-3tier.yaml").read_text() + """
baseline:
  banner: {login: "Authorized use only\\nActivity is logged"}
""")
    out = tmp_path / "out"
    render_to(inv, out)
    res = subprocess.run([PLAYBOOK, "-i", "ansible/inventory.yml", "ansible/deploy-eos.yml",
                          "--tags", "guard,stage", "--limit", "eth-su001-leaf1", "-v"], cwd=out,
                         capture_output=True, text=True, timeout=600, env={**ENV, **SECRETS})
    assert res.returncode == 0, res.stdout[-3000:]
    line = next((x for x in res.stdout.splitlines() if '"fabgen_session_commands"' in x), None)
    assert line, res.stdout[-3000:]
    commands = json.loads(line.split(" => ", 1)[1])["ansible_facts"]["fabgen_session_commands"]
    start = commands.index({"command": "banner login", "sendonly": True})
    assert commands[start + 1:start + 4] == [{"command": "Authorized use only", "sendonly": True},
                                             {"command": "Activity is logged", "sendonly": True},
                                             {"command": "EOF", "sendonly": False}]
    assert "interface Management1" in commands and commands[-1] == "commit timer 00:10:00"


def test_the_whole_cluster_stages_each_nodes_files_from_every_network(tmp_path: Path) -> None:
    """The whole-cluster example through ansible-inventory and the staging playbook: each fabric's
    group holds its switches and the nodes on it (the out-of-band group its access switches and
    the nodes with BMCs, not the switches whose management ports it carries); a DGX stages its
    NCCL and NIC files, its storage NIC settings, its one netplan and its BGP speaker; a head node
    only its netplan; a storage server its storage files."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "superpod-cluster.yaml", out)
    res = run(INVENTORY, "-i", "ansible/inventory.yml", "--list", cwd=out)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    for fabric in ("compute", "storagenet", "internalnet", "ipminet"):
        cabling = read_cabling(out, fabric)
        switches = {r["z_device"] for r in cabling} | {r["a_device"] for r in cabling if r["tier"] != "node-leaf"}
        if fabric == "ipminet":
            switches = {s for s in switches if s.startswith("ipminet-")}
        nodes = {r["a_device"] for r in cabling if r["tier"] == "node-leaf"
                 and not r["a_device"].startswith(("compute-", "storagenet-", "internalnet-"))}
        if fabric == "compute":
            nodes = {n for n in nodes if n.startswith("dgx")}
        assert set(data[f"fabric_{fabric}"]["hosts"]) == switches | nodes, fabric
    assert set(data["role_node"]["hosts"]) == ({f"dgx{n:03d}" for n in range(1, 65)} | {"head01", "head02"}
                                               | {f"store{n:02d}" for n in range(1, 5)})
    stage = tmp_path / "stage"
    cmd = (PLAYBOOK, "-i", "ansible/inventory.yml", "ansible/stage.yml", "-e", f"stage_dir={stage}",
           "--limit", "dgx001,head01,store01,ipminet-compute-access0001")
    first = run(*cmd, cwd=out)
    assert first.returncode == 0, first.stdout[-3000:]
    staged = {h: sorted(p.name for p in (stage / h).iterdir()) for h in ("dgx001", "head01", "store01")}
    assert staged == {"dgx001": ["frr.conf", "hca-setup.sh", "nccl.env", "netplan.yaml", "storage-nic-setup.sh"],
                      "head01": ["netplan.yaml"],
                      "store01": ["frr.conf", "netplan.yaml", "storage-nic-setup.sh"]}
    assert sorted(p.name for p in (stage / "ipminet-compute-access0001").iterdir()) == [
        "ipminet-compute-access0001.nvue.sh", "ipminet-compute-access0001.nvue.yaml"]


FAKE_NV = """#!/bin/sh
# NVUE's `nv`, as far as deploy-nvue.yml uses it: each call's arguments one line in the log
echo "nv $*" >> "$FABGEN_NV_LOG"
case "$*" in "config diff") echo "+ the change";; esac
"""


def nvue_run(out: Path, tmp: Path, *extra: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """The real deploy-nvue.yml on this machine in place of the switch (connection local, no
    sudo), with a fake `nv` that logs its calls: the order of NVUE's commands, not NVUE."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "nv").write_text(FAKE_NV)
    (bin_dir / "nv").chmod(0o755)
    log = tmp / "nv.log"
    log.unlink(missing_ok=True)
    res = subprocess.run(
        [PLAYBOOK, "-i", "ansible/inventory.yml", "ansible/deploy-nvue.yml", "--limit", "sx-su01-leaf1",
         "-e", "ansible_connection=local", "-e", "ansible_become=false",
         "-e", "ansible_python_interpreter={{ ansible_playbook_python }}",
         "-e", f"fabgen_candidate={tmp}/switch/startup.yaml", "-e", "fabgen_reconnect_delay=0", *extra],
        cwd=out, capture_output=True, text=True, timeout=600,
        env={**ENV, **SECRETS, "PATH": f"{bin_dir}:{ENV['PATH']}", "FABGEN_NV_LOG": str(log)})
    return res, log.read_text().splitlines() if log.exists() else []


def test_nvue_deploy_applies_with_a_timer_and_confirms_after_reconnecting(tmp_path: Path) -> None:
    """deploy-nvue.yml needs ansible-core alone: run for real, it uploads the rendered startup.yaml
    with its secrets filled, replaces, applies with NVUE's rollback timer, reconnects and only then
    confirms; --check shows the diff and detaches the pending revision, applying nothing."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "spectrumx-1su.yaml", out)
    candidate = f"{tmp_path}/switch/startup.yaml"
    review, calls = nvue_run(out, tmp_path, "--check")
    assert review.returncode == 0, review.stdout[-3000:]
    assert calls == [f"nv config replace {candidate}", "nv config diff", "nv config detach"]
    # the review loads this render's file (a first run has none on the switch) and prints NVUE's diff
    assert "$6$salt$hash" in (tmp_path / "switch" / "startup.yaml").read_text()
    assert '"+ the change"' in review.stdout, review.stdout[-3000:]

    applied, calls = nvue_run(out, tmp_path)
    assert applied.returncode == 0, applied.stdout[-3000:]
    assert calls == [f"nv config replace {candidate}", "nv config apply --confirm 600s --assume-yes",
                     "nv config apply --confirm-yes"]
    order = [line for line in applied.stdout.splitlines() if line.startswith("TASK [")]
    assert [i for i, t in enumerate(order) if "Reconnect" in t or "Confirm" in t] == [len(order) - 2, len(order) - 1]
    staged = (tmp_path / "switch" / "startup.yaml").read_text()
    rendered = (out / "sx/switches/sx-su01-leaf1.nvue.yaml").read_text()
    assert "lookup(" in rendered and "lookup(" not in staged and "$6$salt$hash" in staged

    # the guard still runs first: a file without its management plane never reaches `nv`
    path = out / "sx/switches/sx-su01-leaf1.nvue.yaml"
    path.write_text(re.sub(r"(?ms)^      eth0:\n.*?(?=^      swp)", "", rendered, count=1))
    refused, calls = nvue_run(out, tmp_path)
    assert refused.returncode != 0 and calls == []


SONIC_TOOLS = {  # SONiC's commands as far as deploy-sonic.yml uses them, each call logged
    "sonic-cfggen": 'python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1]))[sys.argv[2]]))"'
                    ' "$2" "$4"',
    "config": "",
    "systemd-run": "",
    # systemd_service reads the unit's state with `systemctl show`, then stops it if it runs
    "systemctl": 'if [ "$1" = show ]; then printf "Id=%s\\nLoadState=loaded\\nActiveState=active\\n'
                 'SubState=waiting\\n" "$2"; fi',
}


def sonic_run(out: Path, tmp: Path, *extra: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """The real deploy-sonic.yml on this machine in place of the switch, its config_db.json in
    tmp, with stand-ins for sonic-cfggen, config, systemd-run and systemctl that log their calls."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in SONIC_TOOLS.items():
        (bin_dir / name).write_text(f'#!/bin/sh\necho "{name} $*" >> "$FABGEN_LOG"\n{body}\n')
        (bin_dir / name).chmod(0o755)
    log = tmp / "calls.log"
    log.unlink(missing_ok=True)
    res = subprocess.run(
        [PLAYBOOK, "-i", "ansible/inventory.yml", "ansible/deploy-sonic.yml", "--limit", "fabric-leaf001",
         "-e", "ansible_connection=local", "-e", "ansible_become=false",
         "-e", "ansible_python_interpreter={{ ansible_playbook_python }}", "-e", f"fabgen_live={tmp}/live.json",
         "-e", f"fabgen_candidate={tmp}/candidate.json", "-e", f"fabgen_previous={tmp}/previous.json",
         "-e", "fabgen_reconnect_delay=0", *extra],
        cwd=out, capture_output=True, text=True, timeout=600,
        env={**ENV, **SECRETS, "PATH": f"{bin_dir}:{ENV['PATH']}", "FABGEN_LOG": str(log)})
    return res, log.read_text().splitlines() if log.exists() else []


def test_sonic_deploy_arms_the_rollback_before_reloading_and_stops_it_after_reconnecting(tmp_path: Path) -> None:
    """deploy-sonic.yml run for real (ansible-core alone): --check parses the candidate and changes
    nothing; apply keeps the live file, arms the rollback timer, installs and reloads, reconnects
    and only then stops the timer (systemd_service)."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "fattree-2to1.yaml", out)
    live = tmp_path / "live.json"
    live.write_text('{"old": true}\n')
    cfggen = f"sonic-cfggen -j {tmp_path}/candidate.json --var-json MGMT_INTERFACE"
    review, calls = sonic_run(out, tmp_path, "--check")
    assert review.returncode == 0, review.stdout[-3000:]
    assert calls == [cfggen] and live.read_text() == '{"old": true}\n'
    # the review parses and compares this render's candidate (a first run has none on the switch)
    assert '"-{\\"old\\": true}"' in review.stdout, review.stdout[-3000:]

    applied, calls = sonic_run(out, tmp_path)
    assert applied.returncode == 0, applied.stdout[-3000:]
    rollback = f"/bin/sh -c cp {tmp_path}/previous.json {live} && config reload -y"
    assert calls == [cfggen, f"systemd-run --unit fabgen-rollback --on-active=600 {rollback}", "config reload -y",
                     "systemctl show fabgen-rollback.timer", "systemctl stop fabgen-rollback.timer"]
    assert (tmp_path / "previous.json").read_text() == '{"old": true}\n'
    assert live.read_text() == (out / "fabric/switches/fabric-leaf001/config_db.json").read_text()
    tasks = [line for line in applied.stdout.splitlines() if line.startswith("TASK [")]
    assert "Reconnect" in tasks[-2] and "Confirm" in tasks[-1]


def test_hosts_deploy_applies_a_changed_netplan_once_and_an_unchanged_one_never(tmp_path: Path) -> None:
    """deploy-hosts.yml run for real on this machine in place of a node, the node's netplan
    installed into a test folder (its files given as extra vars) and a stand-in `netplan` that
    logs its calls: the handler applies a netplan the play changed, once, and a second run with
    the same render changes nothing and applies nothing."""
    out = tmp_path / "out"
    render_to(INVENTORIES / "roce-2node.yaml", out)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "netplan").write_text('#!/bin/sh\necho "netplan $*" >> "$FABGEN_LOG"\n')
    (bin_dir / "netplan").chmod(0o755)
    log = tmp_path / "calls.log"
    files = [{"src": "hosts/{{ inventory_hostname }}/netplan.yaml", "dest": f"{tmp_path}/node/60-fabgen-rails.yaml",
              "mode": "0600"}]
    (tmp_path / "node").mkdir()
    cmd = [PLAYBOOK, "-i", "ansible/inventory.yml", "ansible/deploy-hosts.yml", "--limit", "gpu01",
           "-e", "ansible_connection=local", "-e", "ansible_become=false",
           "-e", "ansible_python_interpreter={{ ansible_playbook_python }}",
           "-e", json.dumps({"fabgen_files": files, "fabgen_group_files": []})]
    env = {**ENV, "PATH": f"{bin_dir}:{ENV['PATH']}", "FABGEN_LOG": str(log)}
    first = subprocess.run(cmd, cwd=out, capture_output=True, text=True, timeout=600, env=env)
    assert first.returncode == 0, first.stdout[-3000:]
    assert log.read_text().splitlines() == ["netplan apply"]
    assert "RUNNING HANDLER [Apply rail addresses and routing tables]" in first.stdout
    assert (tmp_path / "node/60-fabgen-rails.yaml").read_bytes() == (out / "hosts/gpu01/netplan.yaml").read_bytes()
    second = subprocess.run(cmd, cwd=out, capture_output=True, text=True, timeout=600, env=env)
    assert second.returncode == 0, second.stdout[-3000:]
    assert log.read_text().splitlines() == ["netplan apply"] and _changed(second.stdout) == {"gpu01": 0}


def test_deploy_refuses_an_undefined_vault_secret(tmp_path: Path) -> None:
    """A baseline secret kept in Ansible Vault is a variable reference in the rendered file: the
    guard stops before anything is sent unless the vault gives it a value."""
    inv = tmp_path / "vault.yaml"
    inv.write_text((INVENTORIES / "roce-3tier.yaml").read_text() + """
baseline:
  aaa: {protocol: tacacs+, servers: [10.0.0.10], secret: {vault: tacacs_key}}
""")
    render_to(inv, tmp_path / "out")
    config = (tmp_path / "out" / "eth" / "switches" / "eth-su001-leaf1.cfg").read_text()
    assert "{{ tacacs_key }}" in config
    missing = guard(tmp_path / "out", "deploy-eos.yml", "eth-su001-leaf1", SECRETS)
    assert missing.returncode != 0
    assert "references the Ansible variable tacacs_key" in missing.stdout, missing.stdout[-3000:]
    (tmp_path / "vault.yml").write_text("tacacs_key: s3cret\n")  # as `-e @vault.yml` gives it after decrypting
    given = subprocess.run([PLAYBOOK, "-i", "ansible/inventory.yml", "ansible/deploy-eos.yml", "--tags", "guard",
                            "--limit", "eth-su001-leaf1", "-e", f"@{tmp_path / 'vault.yml'}"], cwd=tmp_path / "out",
                           capture_output=True, text=True, timeout=600, env={**ENV, **SECRETS})
    assert given.returncode == 0, given.stdout[-3000:]
