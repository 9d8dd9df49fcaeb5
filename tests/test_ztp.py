"""Zero-touch provisioning as its consumers read it: dnsmasq's own config test takes dnsmasq.conf
(and refuses a broken copy), every MAC of the map gets exactly its switch's planned address (read
from the render's Ansible inventory, not written here) and its platform's provisioning URL, a
switch missing from the map gets nothing, shellcheck passes every script, SONiC's ztp.json has
the keys of SONiC's ZTP document, provision.yml passes ansible-playbook --syntax-check; a hostile
MAC map or server address is refused with a located message, exit 2, nothing written. The DHCP
exchange itself runs in network namespaces in tests/test_ztp_lab.py."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import IN_CI
from fabgen.cli import app
from fabgen.pipeline import render_to

DATA = Path(__file__).resolve().parent / "data" / "ztp"
DNSMASQ = shutil.which("dnsmasq") or shutil.which("dnsmasq", path="/usr/sbin:/sbin")
SHELLCHECK = shutil.which("shellcheck")
BIN = Path(sys.executable).parent
PLAYBOOK = shutil.which("ansible-playbook", path=str(BIN)) or shutil.which("ansible-playbook")
EXTENSION = {"nvue": ".sh", "eos": ".eos.sh", "sonic": ".ztp.json"}  # docs/guide/bring-up.md
OPTION = {"nvue": "239", "eos": "option:bootfile-name", "sonic": "option:bootfile-name"}


def _need(tool: str | None, name: str) -> str:
    if tool is None:
        if IN_CI:
            raise RuntimeError(f"CI must have {name}: the Makefile's APT_PACKAGES installs it")
        pytest.skip(f"{name} not installed")
    return tool


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ztp") / "out"
    render_to(DATA / "inventory.yaml", path)
    return path


@pytest.fixture(scope="module")
def planned(out: Path) -> dict[str, tuple[str, str]]:
    return _planned(out)


def _planned(out: Path) -> dict[str, tuple[str, str]]:
    """switch -> (platform, management address) as the render's Ansible inventory and host_vars say."""
    inv = yaml.safe_load((out / "ansible" / "inventory.yml").read_text())
    address: dict[str, str] = {}
    for group in inv["all"]["children"].values():
        for host, hv in (group["hosts"] or {}).items():
            if hv and "ansible_host" in hv:
                address[host] = hv["ansible_host"]
    platform = {}
    for path in (out / "ansible" / "host_vars").glob("*.yml"):
        hv = yaml.safe_load(path.read_text())
        if hv.get("fabgen_role") in ("leaf", "spine", "core"):
            platform[path.stem] = hv["fabgen_platform"]
    return {name: (platform[name], address[name]) for name in platform}


def _mac_map() -> dict[str, str]:
    with (DATA / "macs.csv").open() as fh:
        rows = [r for r in csv.reader(line for line in fh if not line.startswith("#"))][1:]
    return {switch: mac.lower().replace("-", ":") for switch, mac in rows}


def _conf(out: Path) -> list[str]:
    return (out / "provisioning" / "dnsmasq.conf").read_text().splitlines()


def test_dnsmasq_accepts_the_rendered_config_and_refuses_a_broken_one(out: Path, tmp_path: Path) -> None:
    dnsmasq = _need(DNSMASQ, "dnsmasq")
    conf = out / "provisioning" / "dnsmasq.conf"
    res = subprocess.run([dnsmasq, "--test", f"--conf-file={conf}"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    broken = tmp_path / "broken.conf"
    broken.write_text(conf.read_text().replace(",static,", ",stati,", 1))
    res = subprocess.run([dnsmasq, "--test", f"--conf-file={broken}"], capture_output=True, text=True, timeout=30)
    assert res.returncode != 0


def test_every_mapped_mac_gets_its_planned_address_name_and_url(out: Path,
                                                                planned: dict[str, tuple[str, str]]) -> None:
    lines = _conf(out)
    hosts = {}
    for line in lines:
        if line.startswith("dhcp-host="):
            mac, tag, address, name = line.removeprefix("dhcp-host=").split(",")
            hosts[mac] = (tag, address, name)
    macs = _mac_map()
    assert len(hosts) == len(macs)
    server = yaml.safe_load((DATA / "inventory.yaml").read_text())["provisioning"]["server"]
    for switch, mac in macs.items():
        platform, address = planned[switch]
        assert hosts[mac] == (f"set:{switch}", address, switch)
        url = f"http://{server}/ztp/{switch}{EXTENSION[platform]}"
        assert f'dhcp-option-force=tag:{switch},{OPTION[platform]},"{url}"' in lines
        assert (out / "provisioning" / "www" / "ztp" / f"{switch}{EXTENSION[platform]}").is_file()
    assert "dhcp-ignore=tag:!known" in lines and "port=0" in lines


def _netplan_accepts(path: Path, root: Path) -> str:
    """netplan's own generator (Debian netplan.io) takes the server's netplan: its networkd unit."""
    from test_planes import NETPLAN, _netplan_generate

    _need(NETPLAN, "netplan")
    run = _netplan_generate({"60-fabgen-provisioning.yaml": path.read_text()}, root)
    assert run.returncode == 0, run.stderr
    units = list((root / "run" / "systemd" / "network").glob("*.network"))
    assert len(units) == 1, units
    return units[0].read_text()


def test_each_prefix_gives_its_gateway_and_only_addresses_as_ntp(out: Path, tmp_path: Path) -> None:
    inv = yaml.safe_load((DATA / "inventory.yaml").read_text())
    lines = _conf(out)
    for f in inv["fabrics"]:
        m = f["management"]
        assert f"dhcp-option=tag:{f['name']},option:router,{m['gateway']}" in lines
        ntp = [s for s in m.get("ntp", []) if re.fullmatch(r"[\d.]+", s)]
        assert (f"dhcp-option=tag:{f['name']},option:ntp-server,{','.join(ntp)}" in lines) == bool(ntp)
    netplan = yaml.safe_load((out / "provisioning" / "netplan.yaml").read_text())
    eth = netplan["network"]["ethernets"][inv["provisioning"]["interface"]]
    assert eth["addresses"] == [f"{inv['provisioning']['server']}/24"]
    # no out-of-band network: the other prefixes are behind the own prefix's gateway, relayed
    assert eth["routes"] == [{"to": f["management"]["prefix"], "via": inv["fabrics"][0]["management"]["gateway"]}
                             for f in inv["fabrics"][1:]]
    # either way each other prefix may also be on this link (shared-network, replies by broadcast)
    assert [line.split(",")[1] for line in lines if line.startswith("shared-network=eth0,")] == [
        f["management"]["prefix"].split("/")[0] for f in inv["fabrics"][1:]]
    assert "dhcp-broadcast" in lines
    _netplan_accepts(out / "provisioning" / "netplan.yaml", tmp_path / "root")


def test_ipv6_dns_and_ntp_servers_stay_out_of_dhcpv4(tmp_path: Path) -> None:
    """management.dns and .ntp take IPv6 addresses (the switches' configs carry them), but DHCPv4's
    DNS and NTP options hold IPv4 addresses only (RFC 2132, 3.8 and 8.3): dnsmasq refused the file
    with an IPv6 server in option:dns-server. The IPv4 ones are handed out, the IPv6 ones left out."""
    text = (DATA / "inventory.yaml").read_text()
    m = yaml.safe_load(text)["fabrics"][0]["management"]
    assert m.get("dns") and m.get("ntp"), "the first fabric gives DNS and NTP servers"
    for key in ("dns", "ntp"):
        old = f"{key}: [{', '.join(m[key])}]"
        assert old in text, old
        text = text.replace(old, f"{key}: [{', '.join(m[key])}, \"2001:db8::{key}\"]".replace("::ntp", "::123")
                            .replace("::dns", "::53"), 1)
    code, stderr, out = _case(tmp_path, GOOD, text)
    assert code == 0, stderr
    conf = out / "provisioning" / "dnsmasq.conf"
    assert "2001:db8" not in conf.read_text()
    lines = _conf(out)
    v4 = [s for s in m["dns"] if re.fullmatch(r"[\d.]+", s)]
    assert f"dhcp-option=tag:sx,option:dns-server,{','.join(v4)}" in lines
    if DNSMASQ:
        done = subprocess.run([DNSMASQ, "--test", f"--conf-file={conf}"], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_a_switch_missing_from_the_map_gets_nothing(out: Path, planned: dict[str, tuple[str, str]]) -> None:
    missing = set(planned) - set(_mac_map())
    assert missing  # the test inventory leaves one out on purpose
    text = (out / "provisioning" / "dnsmasq.conf").read_text()
    ztp = {p.name for p in (out / "provisioning" / "www" / "ztp").iterdir()}
    for switch in missing:
        assert not re.search(rf"\b{re.escape(switch)}\b", text)
        assert planned[switch][1] not in text
        assert not any(name.startswith(f"{switch}.") for name in ztp)


def test_the_missing_switches_are_one_warning() -> None:
    from fabgen.api import validate

    warnings = [w.message for w in validate(DATA / "inventory.yaml").warnings if "MAC map" in w.message]
    assert len(warnings) == 1 and "so-spine01" in warnings[0]


def test_shellcheck_passes_every_script_and_fails_a_broken_one(out: Path, tmp_path: Path) -> None:
    shellcheck = _need(SHELLCHECK, "shellcheck")
    scripts = sorted((out / "provisioning" / "www" / "ztp").glob("*.sh"))
    assert {p.name.split(".", 1)[1] for p in scripts} == {"sh", "eos.sh"}
    res = subprocess.run([shellcheck, *map(str, scripts)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout
    broken = tmp_path / "broken.sh"
    broken.write_text(scripts[0].read_text() + 'for f in $(ls /var/lib); do echo "$f"; done\n')
    assert subprocess.run([shellcheck, str(broken)], capture_output=True, timeout=60).returncode != 0


def test_the_cumulus_script_applies_under_the_rollback_guard(out: Path, planned: dict[str, tuple[str, str]]) -> None:
    for switch, (platform, address) in planned.items():
        path = out / "provisioning" / "www" / "ztp" / f"{switch}.sh"
        if platform != "nvue" or not path.exists():
            continue
        text = path.read_text()
        assert text.startswith("#!/bin/bash\n") and "\n# CUMULUS-AUTOPROVISIONING\n" in text
        assert "\nset -euo pipefail\n" in text and f'ADDRESS="{address}/' in text
        text = text.split("\nset -euo pipefail\n", 1)[1]  # the commands, not the comments above them
        steps = ["curl ", "nv config replace", "nv config apply --confirm 600s", "ping ",
                 "nv config apply --confirm-yes"]
        at = [text.index(s) for s in steps]
        assert at == sorted(at), "fetch, replace, apply with the timer, reach the server, then confirm"
        assert f"/configs/{switch}.nvue.yaml" in text


def test_sonic_ztp_json_names_its_config_db(out: Path, planned: dict[str, tuple[str, str]]) -> None:
    """SONiC's ZTP document (sonic-net/SONiC doc/ztp/ztp.md): a `ztp` object first, a configdb-json
    section whose url object has source and destination."""
    found = 0
    for path in (out / "provisioning" / "www" / "ztp").glob("*.ztp.json"):
        switch = path.name.removesuffix(".ztp.json")
        assert planned[switch][0] == "sonic"
        doc = json.loads(path.read_text())
        section = doc["ztp"]["configdb-json"]
        assert section["url"]["source"].endswith(f"/configs/{switch}.config_db.json")
        assert section["url"]["destination"] == "/etc/sonic/config_db.json"
        found += 1
    assert found == sum(1 for s, (p, _) in planned.items() if p == "sonic" and s in _mac_map())


def test_provision_playbook_installs_what_the_scripts_fetch(out: Path) -> None:
    play = yaml.safe_load((out / "ansible" / "provision.yml").read_text())[0]
    configs = {c["dest"]: c["src"] for c in play["vars"]["fabgen_switch_configs"]}
    for script in (out / "provisioning" / "www" / "ztp").iterdir():
        fetched = re.findall(r"/(configs/[^\"]+)\"", script.read_text())
        assert len(fetched) == 1 and fetched[0] in configs, script.name
        assert (out / configs[fetched[0]]).is_file()
    assert set(play["vars"]["fabgen_ztp_files"]) == {f"ztp/{p.name}" for p in
                                                       (out / "provisioning" / "www" / "ztp").iterdir()}
    assert not (out / "provisioning" / "www" / "configs").exists(), "configs hold secret references: never rendered"


def test_provision_playbook_passes_syntax_check(out: Path) -> None:
    playbook = _need(PLAYBOOK, "ansible-playbook")
    env = {"ANSIBLE_NOCOLOR": "1", "PATH": f"{BIN}:/usr/bin:/bin"}
    res = subprocess.run([playbook, "-i", "localhost,", "--syntax-check", "ansible/provision.yml"], cwd=out,
                         capture_output=True, text=True, timeout=120, env=env)
    assert res.returncode == 0, res.stdout[-1500:] + res.stderr[-1500:]


def test_provision_playbook_refuses_a_secret_that_is_not_set(tmp_path: Path) -> None:
    """provision.yml fills each switch's config with its secrets for the switch to fetch at first
    boot, as the deploy playbooks do: an unset environment variable would be filled in as an empty
    password hash (the environment lookup gives ''), an undefined vault variable would fail half
    way. Like the deploy playbooks' guard, it refuses both before anything is installed: run by
    ansible-playbook on the control node (the guard's tasks, `--tags guard`). A secret holding a
    double quote or a backslash is refused too: filled into a SONiC JSON or NVUE YAML string as it
    is, it would break the file or turn into another secret."""
    playbook = _need(PLAYBOOK, "ansible-playbook")
    baseline = ("baseline:\n  users: [{name: netops, password_hash: {env: FABGEN_ZTP_HASH}}]\n"
                "  aaa: {protocol: tacacs+, servers: [172.30.9.10], secret: {vault: tacacs_key}}\n")
    code, stderr, out = _case(tmp_path, GOOD, (DATA / "inventory.yaml").read_text() + baseline)
    assert code == 0, stderr
    base = {"ANSIBLE_NOCOLOR": "1", "PATH": f"{BIN}:/usr/bin:/bin", "HOME": str(tmp_path)}

    def run(env: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([playbook, "-i", "localhost,", "-c", "local", "--tags", "guard", *extra,
                               "ansible/provision.yml"], cwd=out, capture_output=True, text=True, timeout=180,
                              env={**base, **env})

    unset = run({}, "-e", "tacacs_key=k")
    assert unset.returncode != 0 and "FABGEN_ZTP_HASH" in unset.stdout, unset.stdout[-1500:]
    undefined = run({"FABGEN_ZTP_HASH": "$6$s$h"})
    assert undefined.returncode != 0 and "tacacs_key" in undefined.stdout, undefined.stdout[-1500:]
    both = run({"FABGEN_ZTP_HASH": "$6$s$h"}, "-e", "tacacs_key=k")
    assert both.returncode == 0, both.stdout[-1500:]
    # a value the JSON or YAML string it is filled into would end early or read as an escape
    quoted = run({"FABGEN_ZTP_HASH": "$6$s$h"}, "-e", json.dumps({"tacacs_key": 'a"b'}))
    assert quoted.returncode != 0 and "tacacs_key holds a double quote" in quoted.stdout, quoted.stdout[-1500:]
    escaped = run({"FABGEN_ZTP_HASH": "$6$s\\h"}, "-e", "tacacs_key=k")
    assert escaped.returncode != 0 and "FABGEN_ZTP_HASH holds a double quote" in escaped.stdout, escaped.stdout[-1500:]


def _case(tmp_path: Path, macs: str, inventory: str | None = None) -> tuple[int, str, Path]:
    """Render a copy of the test inventory with MACS as its map: (exit code, stderr, OUT)."""
    (tmp_path / "macs.csv").write_text(macs)
    (tmp_path / "inventory.yaml").write_text(inventory or (DATA / "inventory.yaml").read_text())
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(tmp_path / "inventory.yaml"), "-o", str(out)])
    return result.exit_code, result.stderr, out


GOOD = "switch,mac\nsx-leaf001,1c:34:da:00:00:01\n"


@pytest.mark.parametrize("macs,line,col,says", [
    (GOOD + "sx-spine01,1c:34:da:00:00:01\n", 3, 12, "also given at line 2"),
    (GOOD + "sx-leaf001,1c:34:da:00:00:09\n", 3, 1, "listed again (first at line 2)"),
    (GOOD + "sx-spine01,1c:34:da:00:00\n", 3, 12, "not a MAC address"),
    (GOOD + "sx-spine01,1c:34:da:00-00-02\n", 3, 12, "not a MAC address"),
    (GOOD + "sx-spine01,01:00:5e:00:00:01\n", 3, 12, "multicast"),
    (GOOD + "sx-spine01,00:00:00:00:00:00\n", 3, 12, "not a switch port's MAC"),
    (GOOD + "sx-spine09,1c:34:da:00:00:02\n", 3, 1, "not a switch of this inventory"),
    (GOOD + "sx-spine01,aa:bb:cc:dd:ee:ff\nrm -rf /\n", 4, 1, "expected 2 columns"),
    (GOOD + 'sx-spine01,"aa:bb:cc:dd:ee:ff\nrm -rf /"\n', 3, 1, "not a CSV row"),
    (GOOD + '"sx-spine01,set:known",aa:bb:cc:dd:ee:ff\n', 3, 1, "not a name fabgen gives"),
    (GOOD + "sx-spine01 #x,aa:bb:cc:dd:ee:ff\n", 3, 1, "expected 2 columns"),
    (GOOD + "sx-spine01,aa:bb:cc:dd:ee:ff,dhcp-ignore\n", 3, 1, "expected 2 columns"),
    (GOOD + "sx-spine01,aa:bb:cc:dd:ee:ff\x1b[2K\n", 3, 29, "a control character"),
    (GOOD + "sx-spine01,aa:bb:cc:dd:ee:ff\rdhcp-range=x\n", 3, 29, "a control character"),
])
def test_a_hostile_mac_map_is_refused_at_its_line(tmp_path: Path, macs: str, line: int, col: int, says: str) -> None:
    code, stderr, out = _case(tmp_path, macs)
    assert code == 2, stderr
    assert f"macs.csv:{line}:{col}: " in stderr and says in stderr, stderr
    assert not out.exists()


@pytest.mark.parametrize("server,says", [
    ("172.30.0.1", "is the gateway of 172.30.0.0/24"),
    ("172.30.0.3", "is the management address of sx-spine01"),
    ("172.28.0.9", "inside exactly one management prefix"),
    ("172.30.0.255", "broadcast address"),
    ("::1", "not an IPv4 address"),
])
def test_a_server_address_a_device_takes_is_refused(tmp_path: Path, server: str, says: str) -> None:
    inventory = (DATA / "inventory.yaml").read_text().replace("server: 172.30.0.250", f"server: \"{server}\"")
    code, stderr, out = _case(tmp_path, GOOD, inventory)
    assert code == 2 and says in stderr, stderr
    assert re.search(r"inventory\.yaml:\d+:\d+: provisioning\.server: ", stderr), stderr
    assert not out.exists()


def test_an_interface_name_linux_cannot_hold_is_refused(tmp_path: Path) -> None:
    inventory = (DATA / "inventory.yaml").read_text().replace("interface: eth0", "interface: enp1s0f0np0-mgmt")
    code, stderr, out = _case(tmp_path, GOOD, inventory)
    assert code == 2 and re.search(r"inventory\.yaml:\d+:\d+: provisioning\.interface: .*longer than the 15", stderr)
    assert not out.exists()


def test_a_render_into_the_folder_of_the_mac_map_is_refused(tmp_path: Path) -> None:
    """OUT is replaced whole: the folder holding the MAC map is never OUT, as for a GUID map."""
    from fabgen.errors import OutputError
    from fabgen.inventory.loader import load
    from fabgen.inventory.validate import validate
    from fabgen.pipeline import _inputs_outside

    (tmp_path / "inv").mkdir()
    (tmp_path / "maps").mkdir()
    (tmp_path / "maps" / "macs.csv").write_text(GOOD)
    text = (DATA / "inventory.yaml").read_text().replace("mac_map: macs.csv", "mac_map: ../maps/macs.csv")
    (tmp_path / "inv" / "inventory.yaml").write_text(text)
    validated = validate(load(tmp_path / "inv" / "inventory.yaml"))
    with pytest.raises(OutputError, match="macs.csv is inside"):
        _inputs_outside(tmp_path / "maps", tmp_path / "inv" / "inventory.yaml", validated)
    _inputs_outside(tmp_path / "out", tmp_path / "inv" / "inventory.yaml", validated)


def test_diff_base_reads_the_mac_map_beside_the_inventory() -> None:
    from fabgen.review.gitbase import _side_files

    text = (DATA / "inventory.yaml").read_bytes()
    assert _side_files(text, "site/inventory.yaml", "HEAD") == {
        "site/macs.csv": "site/inventory.yaml provisioning.mac_map 'macs.csv' (site/inventory.yaml's side file)"}


def test_diff_of_a_changed_map_adds_no_device(tmp_path: Path) -> None:
    """A MAC added to the map changes the provisioning files, and no switch's own files: the
    review reports no device added (the ZTP files are not a device's, rendered/paths.py)."""
    shutil.copytree(DATA, tmp_path / "after")
    with (tmp_path / "after" / "macs.csv").open("a") as fh:
        fh.write("so-spine01,b8:ce:f6:00:00:23\n")
    result = CliRunner().invoke(app, ["diff", str(DATA / "inventory.yaml"), str(tmp_path / "after" / "inventory.yaml")])
    assert result.exit_code in (0, 1), result.stderr
    assert "Devices added" not in result.stdout and "== provisioning/dnsmasq.conf" in result.stdout
    assert "+dhcp-host=b8:ce:f6:00:00:23,set:so-spine01," in result.stdout


def test_provision_playbook_passes_ansible_lint_and_its_modules_arguments(out: Path, tmp_path: Path) -> None:
    """ansible-lint's production profile, and each task's arguments against its module's own
    documentation, as for the deploy playbooks (tests/test_ansible_lint.py)."""
    import test_ansible_lint as al

    _need(str(al.LINT) if al.LINT else None, "ansible-lint")
    shutil.copytree(out / "ansible", tmp_path / "ansible")
    status, found = al.lint(tmp_path, "ansible/provision.yml")
    assert status == 0 and not found, found
    calls = al.module_calls([out / "ansible" / "provision.yml"])
    docs = al.module_docs({m for _, m, _ in calls})
    assert [e for where, m, args in calls for e in al.argument_errors(m, args, docs[m])] == []


def test_planes_share_their_fabric_s_range_and_a_server_on_the_oob_reaches_each_on_its_link(tmp_path: Path) -> None:
    """b300-cluster: a two-plane compute fabric, storage and in-band fabrics, and the out-of-band
    network the server sits on. A plane's switches are served from their fabric's one prefix (one
    range, the fabric's tag); every served prefix shares the out-of-band VLAN with the server, so
    it is on the server's link (dnsmasq's shared-network, an on-link route: a DHCP reply sent to
    a gateway would never reach the switch)."""
    from conftest import INVENTORIES

    for name in ("b300-cluster.yaml", "b300-cluster-rdma-links.txt"):
        shutil.copy(INVENTORIES / name, tmp_path / name)
    inv = tmp_path / "b300-cluster.yaml"
    inv.write_text(inv.read_text() + "\nprovisioning:\n  server: 192.168.3.200\n  mac_map: macs.csv\n")
    (tmp_path / "macs.csv").write_text("switch,mac\nsx-plane1-su01-leaf1,02:00:00:00:00:01\n"
                                       "sx-plane2-spine01,02:00:00:00:00:02\nstorage-servers-leaf1,02:00:00:00:00:03\n")
    render_to(inv, tmp_path / "out")
    out = tmp_path / "out"
    lines = _conf(out)
    doc = yaml.safe_load(inv.read_text())
    served = [f for f in doc["fabrics"] if f.get("role") != "oob"]
    ranges = [line for line in lines if line.startswith("dhcp-range=")]
    assert sorted(ranges) == sorted(f"dhcp-range=set:{f['name']},{f['management']['prefix'].split('/')[0]},static,"
                                    f"255.255.255.0,12h" for f in served)
    planned = _planned(out)
    for switch, fabric in (("sx-plane1-su01-leaf1", "sx"), ("sx-plane2-spine01", "sx"),
                           ("storage-servers-leaf1", "storage")):
        assert any(line.startswith("dhcp-host=") and line.endswith(f",{planned[switch][1]},{switch}")
                   for line in lines)
        ztp = (out / "provisioning" / "www" / "ztp" / f"{switch}.sh").read_text()
        assert f'ADDRESS="{planned[switch][1]}/24"' in ztp
        assert any(f"tag:{fabric}" in line for line in lines)
    oob = next(f for f in doc["fabrics"] if f.get("role") == "oob")["management"]
    eth = yaml.safe_load((out / "provisioning" / "netplan.yaml").read_text())["network"]["ethernets"]["eth0"]
    assert eth["addresses"] == ["192.168.3.200/22"] and oob["prefix"].endswith("/22")
    # the out-of-band network manages every fabric: their prefixes share its VLAN, reached on the link
    assert eth["routes"] == [{"to": f["management"]["prefix"], "scope": "link"} for f in served]
    assert [line.split(",")[1] for line in lines if line.startswith("shared-network=eth0,")] == [
        f["management"]["prefix"].split("/")[0] for f in served]
    unit = _netplan_accepts(out / "provisioning" / "netplan.yaml", tmp_path / "root")
    assert unit.count("Scope=link") == len(served) and "Gateway=" not in unit


def test_diff_base_compares_the_mac_map_of_a_git_revision(tmp_path: Path) -> None:
    """`fabgen diff --base REF` reads REF's MAC map beside REF's inventory: a MAC changed in the
    working tree shows as the reservation's change."""
    repo = tmp_path / "repo"
    shutil.copytree(DATA, repo / "site")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for args in (("init", "-q", "-b", "main"), ("add", "."), ("commit", "-q", "-m", "base")):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env, capture_output=True, timeout=60)
    macs = repo / "site" / "macs.csv"
    macs.write_text(macs.read_text().replace("b8:ce:f6:00:00:21", "b8:ce:f6:00:00:99"))
    res = CliRunner().invoke(app, ["diff", "--base", "main", str(repo / "site" / "inventory.yaml")])
    assert res.exit_code == 0, res.output[-2000:]
    assert "-dhcp-host=b8:ce:f6:00:00:21,set:so-leaf001," in res.output
    assert "+dhcp-host=b8:ce:f6:00:00:99,set:so-leaf001," in res.output


def test_each_script_s_guard_passes_its_own_rendered_config_and_no_other(out: Path) -> None:
    """The lock-out guard of each script (the config must set the switch's own management address)
    holds for the config the playbook installs for it, and fails for a neighbour's: run as the
    script runs it, grep -F over the rendered file."""
    play = yaml.safe_load((out / "ansible" / "provision.yml").read_text())[0]
    configs = {c["dest"]: out / c["src"] for c in play["vars"]["fabgen_switch_configs"]}
    scripts = sorted((out / "provisioning" / "www" / "ztp").glob("*.sh"))
    for script in scripts:
        text = script.read_text()
        address = re.search(r'^ADDRESS="([^"]+)"$', text, re.M)
        config = re.search(r'/(configs/[^"]+)"$', text, re.M)
        assert address and config, script.name
        needle = ("ip address " if script.name.endswith(".eos.sh") else "") + address.group(1)
        own = configs[config.group(1)]
        assert subprocess.run(["grep", "-qF", "--", needle, str(own)]).returncode == 0, script.name
        other = next(p for d, p in configs.items() if d != config.group(1) and p.suffix == own.suffix)
        assert subprocess.run(["grep", "-qF", "--", needle, str(other)]).returncode != 0, script.name


@pytest.mark.parametrize("spine_allow,refused", [("172.31.0.0/16", True), ("172.16.0.0/12", False)])
def test_a_control_plane_acl_shutting_out_the_server_is_refused(tmp_path: Path, spine_allow: str,
                                                                 refused: bool) -> None:
    """The spines' own control_plane (a baseline role entry) in force on the NVUE fabric's spines:
    one that does not admit the server would make each Cumulus ZTP roll back."""
    from fabgen.api import validate
    from fabgen.errors import InventoryError

    baseline = ("baseline:\n  control_plane: {allow: [172.16.0.0/12]}\n  roles:\n"
                f"    spine: {{control_plane: {{allow: [{spine_allow}], deploy_from: 172.31.0.0/24}}}}\n")
    (tmp_path / "macs.csv").write_text(GOOD)
    (tmp_path / "inventory.yaml").write_text((DATA / "inventory.yaml").read_text() + baseline)
    if not refused:
        validate(tmp_path / "inventory.yaml")
        return
    with pytest.raises(InventoryError) as err:
        validate(tmp_path / "inventory.yaml")
    [p] = err.value.problems
    assert p.path == "baseline.roles.spine.control_plane.allow" and "172.30.0.250" in p.message


def test_a_site_wide_warning_is_printed_under_a_fabric(tmp_path: Path) -> None:
    """Warnings of the site's blocks (baseline, provisioning) are filed under a fabric, as the
    pipeline files every warning: a baseline rendered nowhere was a KeyError ('') instead."""
    from conftest import INVENTORIES

    inv = tmp_path / "inventory.yaml"
    inv.write_text((INVENTORIES / "roce-2node.yaml").read_text() + "baseline:\n  timezone: Etc/UTC\n")
    result = CliRunner().invoke(app, ["validate", str(inv)])
    assert result.exit_code == 0, result.output
    assert "warning: fabric roce: baseline (line " in result.stderr and "rendered nowhere" in result.stderr


def test_a_spreadsheet_export_of_the_map_is_read(tmp_path: Path) -> None:
    """A byte-order mark, CRLF line ends, upper-case dashed MACs, comments and blank lines: the
    reservation is written in dnsmasq's lower-case colon form."""
    text = "\ufeffswitch,mac\r\n# rack 1\r\n\r\nsx-leaf001 , 1C-34-DA-0A-0B-0C # label\r\n"
    code, stderr, out = _case(tmp_path, text)
    assert code == 0, stderr
    assert "dhcp-host=1c:34:da:0a:0b:0c,set:sx-leaf001," in (out / "provisioning" / "dnsmasq.conf").read_text()


def test_the_header_may_follow_comments_and_must_name_the_columns_in_order(tmp_path: Path) -> None:
    """The header is the map's first row, wherever comments and blank lines put it (an export
    with a title line above it); a header with the columns swapped is refused as such, located."""
    code, stderr, out = _case(tmp_path, "# exported from the asset database\n\nswitch,mac\n"
                              "sx-leaf001,1c:34:da:0a:0b:0c\n")
    assert code == 0, stderr
    assert "dhcp-host=1c:34:da:0a:0b:0c,set:sx-leaf001," in (out / "provisioning" / "dnsmasq.conf").read_text()
    (tmp_path / "swapped").mkdir()
    code, stderr, out = _case(tmp_path / "swapped", "# title\nMAC,Switch\nsx-leaf001,1c:34:da:0a:0b:0c\n")
    assert code == 2 and "macs.csv:2:1: " in stderr and "switch,mac in that order" in stderr, stderr
    assert not out.exists()
    # a second header row further down is no header: an unknown switch, as before
    code, stderr, _ = _case(tmp_path, "switch,mac\nsx-leaf001,1c:34:da:0a:0b:0c\nswitch,mac\n")
    assert code == 2 and "macs.csv:3:1: switch is not a switch of this inventory" in stderr, stderr


def test_a_fabric_that_fails_its_own_checks_costs_one_message_not_one_per_row(tmp_path: Path) -> None:
    """A node group's hostname pattern wrong: its fabric is not planned, so its switches' names
    are unknown; the map's rows and the server's prefix are not judged against a partial plan
    (every row of that fabric 'not a switch', the server 'in no prefix'): one mistake, one
    message."""
    inventory = (DATA / "inventory.yaml").read_text().replace('hostname: "a{n:02d}"', 'hostname: "a{n:02d};x"')
    code, stderr, out = _case(tmp_path, GOOD, inventory)
    problems = [line for line in stderr.splitlines() if re.match(r"^\S+:\d+:\d+: ", line)]
    assert code == 2 and len(problems) == 1 and "node_groups[0].hostname" in problems[0], stderr
    assert not out.exists()


def test_an_empty_map_renders_a_server_that_answers_nobody(tmp_path: Path) -> None:
    """The map of a rack not yet unpacked: the ranges and no reservation; the playbook's lists are
    empty lists (a loop over nothing), and dnsmasq still takes the file."""
    code, stderr, out = _case(tmp_path, "switch,mac\n")
    assert code == 0, stderr
    lines = _conf(out)
    assert not any(line.startswith(("dhcp-host=", "dhcp-option-force=")) for line in lines)
    assert any(line.startswith("dhcp-range=") for line in lines)
    play = yaml.safe_load((out / "ansible" / "provision.yml").read_text())[0]
    assert play["vars"]["fabgen_ztp_files"] == [] and play["vars"]["fabgen_switch_configs"] == []
    if DNSMASQ:
        conf = out / "provisioning" / "dnsmasq.conf"
        assert subprocess.run([DNSMASQ, "--test", f"--conf-file={conf}"], capture_output=True).returncode == 0


def test_a_huge_or_hostile_map_is_answered_in_bounded_messages(tmp_path: Path) -> None:
    """A map of 100,000 rows naming no switch of the plan: the first hundred problems and one
    line saying the rest is not read; a map over the size bound and a directory are one problem."""
    from fabgen.inventory.macmap import MAX_BYTES, MAX_PROBLEMS, read_mac_map

    known: dict[str, str | None] = {f"sx-leaf{i:03d}": None for i in range(1, 200)}
    big = tmp_path / "big.csv"
    big.write_text("".join(f"sx-leaf-{i:03d},02:00:00:{i >> 16 & 255:02x}:{i >> 8 & 255:02x}:{i & 255:02x}\n"
                           for i in range(100_000)))
    found, problems = read_mac_map(big, "big.csv", known)
    assert not found and len(problems) == MAX_PROBLEMS + 1
    assert "not read" in problems[-1].message and "did you mean 'sx-leaf" in problems[0].message
    huge = tmp_path / "huge.csv"
    huge.write_bytes(b"#" * (MAX_BYTES + 1))
    assert [p.message for p in read_mac_map(huge, "huge.csv", known)[1]] == ["the MAC map is larger than 4 MiB"]
    assert "a directory" in read_mac_map(tmp_path, "dir", known)[1][0].message
