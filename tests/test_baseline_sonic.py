"""The switch baseline on SONiC: config_db.json with the baseline's tables, checked by SONiC's
own YANG models with yanglint (the shared reference set beside the repository plus the models
kept in tests/data/sonic-yang-extra), after the deploy playbook's template step has filled the
secret references, as `config reload` reads the file. The check rejects a broken table; the
rendered file itself holds references only, never a secret's value."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml

from conftest import IN_CI, INVENTORIES, ROOT
from fabgen.pipeline import render_to
from fabgen.targets import sonic

SHARED = ROOT.parent / "shared"
YANG_CHECK = SHARED / "tools" / "sonic_yang_check.py"
SHARED_MODELS = SHARED / "reference" / "sonic-yang"
EXTRA_MODELS = ROOT / "tests" / "data" / "sonic-yang-extra"

# What the deploy would hold: environment variables and Ansible Vault variables. Set while
# rendering, so a leak of any of them into the render would show.
ENV = {"SNMP_AUTH": "auth-Phrase-1", "RADIUS_KEY": "radius-Key-1", "OPS_HASH": "$6$salt$opshash"}
VAULT = {"tacacs_key": "tacacs-Key-1", "snmp_priv": "priv-Phrase-1"}

BASELINE = """
baseline:
  timezone: Europe/Berlin
  banner:
    login: "Authorized use only.\\nAll activity is logged."
    motd: Changes by ticket only
  aaa: {protocol: tacacs+, servers: [192.168.101.10, 192.168.101.11], secret: {vault: tacacs_key}}
  control_plane: {allow: [192.168.100.0/24, 10.9.0.0/24]}
  snmp:
    users: [{name: nmsro, auth: {env: SNMP_AUTH}, priv: {vault: snmp_priv}}]
    location: DC1 hall 2
    contact: noc@example.net
  telemetry: {sflow: {collectors: [192.168.101.20], sample_rate: 20000}, gnmi: true}
  users: [{name: ops, password_hash: {env: OPS_HASH}}]
  roles:
    spine:
      timezone: Etc/UTC
      aaa: {protocol: radius, servers: [192.168.101.12], secret: {env: RADIUS_KEY}, fallback_local: false}
"""

# The tables the baseline adds; a render without a baseline has none of them.
BASELINE_TABLES = {"AAA", "TACPLUS", "TACPLUS_SERVER", "RADIUS", "RADIUS_SERVER", "ACL_TABLE", "ACL_RULE",
                   "BANNER_MESSAGE", "SNMP", "SNMP_USER", "SNMP_AGENT_ADDRESS_CONFIG", "SFLOW", "SFLOW_COLLECTOR",
                   "SFLOW_SESSION", "FEATURE", "GNMI", "TELEMETRY"}


def _inventory(directory: Path, release: str | None = None) -> Path:
    """fattree-2to1 (SONiC) with the baseline above, an NTP server by name, and a release."""
    text = (INVENTORIES / "fattree-2to1.yaml").read_text()
    text = text.replace("ntp: [192.168.101.1]", "ntp: [192.168.101.1, ntp1.example.net]")
    baseline = BASELINE
    if release:
        text = text.replace("    platform: sonic\n", f"    platform: sonic\n    platform_version: \"{release}\"\n")
        baseline = re.sub(r"  banner:\n(    .*\n)+", "", baseline)  # a release before 202405 has no banner
    inv = directory / "inv.yaml"
    inv.write_text(text + baseline)
    return inv


def _render(inv: Path, out: Path) -> Any:
    mp = pytest.MonkeyPatch()
    for k, v in ENV.items():
        mp.setenv(k, v)
    try:
        return render_to(inv, out)
    finally:
        mp.undo()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    d = tmp_path_factory.mktemp("sonic-baseline")
    out = d / "out"
    return out, _render(_inventory(d), out)


def _configs(out: Path) -> dict[str, Path]:
    return {p.parent.name: p for p in sorted((out / "fabric" / "switches").glob("*/config_db.json"))}


def _one_per_role(out: Path) -> dict[str, Path]:
    configs = _configs(out)
    return {"leaf": next(p for n, p in configs.items() if "-leaf" in n),
            "spine": next(p for n, p in configs.items() if "-spine" in n)}


def _filled(text: str) -> str:
    """The file as deploy-sonic.yml's template task writes it on the switch: Ansible's Jinja2
    with the environment lookup and the vault's variables (StrictUndefined: a reference that
    names nothing fails here as it fails the playbook)."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)

    def lookup(plugin: str, name: str) -> str:
        assert plugin == "ansible.builtin.env"
        return ENV[name]

    env.globals["lookup"] = lookup
    return env.from_string(text).render(**VAULT)


def _models(tmp: Path) -> Path:
    """The shared models and the extra ones in one directory (the checker takes one)."""
    if not YANG_CHECK.exists() or not SHARED_MODELS.is_dir() or not shutil.which("yanglint"):
        if IN_CI and YANG_CHECK.exists():
            raise RuntimeError("CI must have yanglint (libyang-tools): `make test` installs it")
        pytest.skip("SONiC YANG check skipped: it runs the SONiC YANG models and their checker kept beside the "
                    "repository (../shared/reference/sonic-yang, ../shared/tools), which a plain clone lacks")
    models = tmp / "models"
    if not models.is_dir():
        models.mkdir()
        for src in [*SHARED_MODELS.iterdir(), *EXTRA_MODELS.glob("*.yang")]:
            shutil.copy(src, models / src.name)
    return models


def yang_check(paths: list[Path], tmp: Path) -> subprocess.CompletedProcess:
    """sonic_yang_check.py over these files with both model sets; every table must have a model
    but CABLE_LENGTH (buffermgrd's, whose model neither set keeps)."""
    assert paths, "a check of nothing passes"
    run = subprocess.run([sys.executable, str(YANG_CHECK), "--yang-dir", str(_models(tmp)), *map(str, paths)],
                         capture_output=True, text=True, timeout=300)
    summary = re.search(r"unvalidated tables: ([A-Z0-9_, ]+);", run.stdout)
    unvalidated = set(summary.group(1).split(", ")) if summary else set()
    assert unvalidated <= {"CABLE_LENGTH"}, unvalidated
    return run


def _fill_to(src: Path, dest: Path) -> Path:
    dest.write_text(_filled(src.read_text()))
    return dest


def test_every_table_is_valid_for_sonic_once_the_deploy_fills_the_secrets(rendered: tuple[Path, Any],
                                                                           tmp_path: Path) -> None:
    out, _ = rendered
    files = [_fill_to(p, tmp_path / f"{role}.json") for role, p in _one_per_role(out).items()]
    run = yang_check(files, tmp_path)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    validated = set()
    for f in files:
        validated |= set(json.loads(f.read_text()))
    # the baseline's tables are among those validated (every table but CABLE_LENGTH is)
    assert BASELINE_TABLES - {"RADIUS", "RADIUS_SERVER", "TELEMETRY"} <= validated
    assert {"RADIUS", "RADIUS_SERVER"} <= validated  # the spine's


def test_the_check_rejects_broken_tables(rendered: tuple[Path, Any], tmp_path: Path) -> None:
    out, _ = rendered
    good = json.loads(_filled(_one_per_role(out)["leaf"].read_text()))
    broken = []
    db = json.loads(json.dumps(good))
    db["ACL_RULE"]["FABGEN_MGMT|ALLOW_1"]["SRC_IP"] = "192.168.100.300/24"
    broken.append(("ACL_RULE|FABGEN_MGMT|ALLOW_1 [SRC_IP]", db))
    db = json.loads(json.dumps(good))
    del db["TACPLUS"]  # AAA's must: TACACS+ authentication needs the shared key
    broken.append(("AAA|authentication", db))
    db = json.loads(json.dumps(good))
    db["SNMP_USER"]["nms"] = db["SNMP_USER"].pop("nmsro")  # SONiC's user names are 4 to 32 characters
    broken.append(("SNMP_USER|nms", db))
    for k, (where, db) in enumerate(broken):
        path = tmp_path / f"broken{k}.json"
        path.write_text(json.dumps(db))
        run = yang_check([path], tmp_path)
        assert run.returncode == 1 and f"ERROR {where}" in run.stdout, run.stdout[-2000:]
    # the file as rendered, references unfilled, is not what a switch may load: the playbook fills it
    run = yang_check([_one_per_role(out)["leaf"]], tmp_path)
    assert run.returncode == 1 and "TACPLUS|global [passkey]" in run.stdout


def test_secrets_appear_as_references_the_deploy_playbook_fills(rendered: tuple[Path, Any]) -> None:
    out, _ = rendered
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for value in [*ENV.values(), *VAULT.values()]:
                assert value.encode() not in data, (path, value)
    leaf = json.loads(_one_per_role(out)["leaf"].read_text())
    spine = json.loads(_one_per_role(out)["spine"].read_text())
    assert leaf["TACPLUS"]["global"]["passkey"] == "{{ tacacs_key }}"
    assert spine["RADIUS"]["global"]["passkey"] == "{{ lookup('ansible.builtin.env', 'RADIUS_KEY') }}"
    user = leaf["SNMP_USER"]["nmsro"]
    assert user["SNMP_USER_AUTH_PASSWORD"] == "{{ lookup('ansible.builtin.env', 'SNMP_AUTH') }}"
    assert user["SNMP_USER_ENCRYPTION_PASSWORD"] == "{{ snmp_priv }}"
    # deploy-sonic.yml writes config_db.json with the template module, which fills them
    # (the render's own copy of the playbook), and each switch's host_vars name its file there
    play = yaml.safe_load((out / "ansible" / "deploy-sonic.yml").read_text())
    tasks = [t for t in play[0]["tasks"] if "ansible.builtin.template" in t]
    assert [t["ansible.builtin.template"]["src"] for t in tasks] == ["{{ fabgen_out }}/{{ fabgen_files[0].src }}"]
    for name, path in _one_per_role(out).items():
        host = yaml.safe_load((out / "ansible" / "host_vars" / f"{path.parent.name}.yml").read_text())
        assert out / host["fabgen_files"][0]["src"] == path, name
    # local accounts stay in the Linux user database: none in the file, and a warning says so
    assert "ops" not in json.dumps(leaf.get("SNMP_USER")) and "OPS_HASH" not in json.dumps(leaf)


def test_tables_say_what_the_baseline_says(rendered: tuple[Path, Any]) -> None:
    out, result = rendered
    roles = _one_per_role(out)
    leaf, spine = (json.loads(roles[r].read_text()) for r in ("leaf", "spine"))
    # per role: the spine's timezone and AAA replace the site's
    assert leaf["DEVICE_METADATA"]["localhost"]["timezone"] == "Europe/Berlin"
    assert spine["DEVICE_METADATA"]["localhost"]["timezone"] == "Etc/UTC"
    assert leaf["AAA"]["authentication"]["login"] == "tacacs+,local"
    assert spine["AAA"]["authentication"]["login"] == "radius"  # fallback_local: false
    assert "TACPLUS" not in spine and "RADIUS" not in leaf
    assert list(leaf["TACPLUS_SERVER"]) == ["192.168.101.10", "192.168.101.11"]
    prio = {ip: int(r["priority"]) for ip, r in leaf["TACPLUS_SERVER"].items()}
    assert prio["192.168.101.10"] > prio["192.168.101.11"], "the first server is asked first"
    # the control-plane ACL as caclmgrd applies it: rules by priority, highest first; the
    # management prefix (where the deploy runs from) is accepted before anything is dropped
    for table, services in (("FABGEN_MGMT", ["SSH", "SNMP"]), ("FABGEN_GNMI", ["EXTERNAL_CLIENT"])):
        assert leaf["ACL_TABLE"][table]["type"] == "CTRLPLANE" and leaf["ACL_TABLE"][table]["services"] == services
        rules = sorted((r for k, r in leaf["ACL_RULE"].items() if k.startswith(table + "|")),
                       key=lambda r: -int(r["PRIORITY"]))
        assert [(r["SRC_IP"], r["PACKET_ACTION"]) for r in rules] == [
            ("192.168.100.0/24", "ACCEPT"), ("10.9.0.0/24", "ACCEPT"), ("0.0.0.0/0", "DROP")]
    assert {r["L4_DST_PORT"] for k, r in leaf["ACL_RULE"].items() if k.startswith("FABGEN_GNMI|")} \
        == {leaf["GNMI"]["gnmi"]["port"]}
    assert leaf["BANNER_MESSAGE"]["global"] == {"state": "enabled", "login": "Authorized use only.\nAll activity is "
                                                "logged.", "motd": "Changes by ticket only"}
    assert leaf["SNMP"] == {"LOCATION": {"Location": "DC1 hall 2"}, "CONTACT": {"Contact": "noc@example.net"}}
    mgmt = next(iter(leaf["MGMT_INTERFACE"])).split("|")[1].split("/")[0]
    assert list(leaf["SNMP_AGENT_ADDRESS_CONFIG"]) == [f"{mgmt}|161|mgmt"]
    assert [c["collector_ip"] for c in leaf["SFLOW_COLLECTOR"].values()] == ["192.168.101.20"]
    up = {p for p, r in leaf["PORT"].items() if r["admin_status"] == "up"}
    assert set(leaf["SFLOW_SESSION"]) == up and {r["sample_rate"] for r in leaf["SFLOW_SESSION"].values()} == {"20000"}
    assert "ntp1.example.net" in leaf["NTP_SERVER"]  # a name: inet:host in every release 202305..202511
    warnings = " ".join(str(w) for fab in result.fabrics.values() for w in getattr(fab, "warnings", []))
    assert "not rendered" in warnings, warnings


def test_release_202305_spells_gnmi_as_telemetry_and_has_no_banner(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _render(_inventory(tmp_path, "202305"), out)
    leaf = _one_per_role(out)["leaf"]
    db = json.loads(leaf.read_text())
    assert "TELEMETRY" in db and "GNMI" not in db and "BANNER_MESSAGE" not in db
    # the banner is written only where the release has BANNER_MESSAGE (sonic-banner.yang, 202405)
    sw = {"banner": {"login": "Authorized use only", "motd": None}, "aaa": None, "control_plane": None,
          "snmp": None, "telemetry": {"sflow": None, "gnmi": False}}
    m = {"vrf": "mgmt", "address": "192.168.100.1"}
    assert sonic.baseline_tables(sw, m, [], "202311") == {}
    assert sonic.baseline_tables(sw, m, [], "202405") == {
        "BANNER_MESSAGE": {"global": {"state": "enabled", "login": "Authorized use only"}}}
    # the models kept here are master's, whose BGP tables take admin_status up/down, where 202305's
    # frrcfgd takes true/false (sonic.py admin_up): the baseline's tables are checked without BGP's
    filled = json.loads(_filled(leaf.read_text()))
    path = tmp_path / "leaf.json"
    path.write_text(json.dumps({t: rows for t, rows in filled.items() if not t.startswith("BGP_")}))
    run = yang_check([path], tmp_path)
    assert run.returncode == 0, run.stdout[-3000:]


def test_no_baseline_no_baseline_tables(tmp_path: Path) -> None:
    render_to(INVENTORIES / "fattree-2to1.yaml", tmp_path)
    for path in _configs(tmp_path).values():
        assert not BASELINE_TABLES & set(json.loads(path.read_text())), path


def test_emulate_reads_a_baseline_config_as_the_same_router(rendered: tuple[Path, Any], tmp_path: Path) -> None:
    """fabgen emulate's strict SONiC translator leaves the baseline's tables out by name (they
    route nothing): the router it reads is the one of the same file without them."""
    from fabgen.emulate import sonic as translator

    out, _ = rendered
    path = _one_per_role(out)["leaf"]
    with_baseline = translator.translate("leaf", path.read_text(), str(path))
    db = json.loads(path.read_text())
    bare = {t: rows for t, rows in db.items() if t not in BASELINE_TABLES}
    del bare["DEVICE_METADATA"]["localhost"]["timezone"]
    without = translator.translate("leaf", json.dumps(bare), "bare")
    assert "baseline" in with_baseline.ignored and "baseline" not in without.ignored
    with_baseline.ignored.discard("baseline")
    assert vars(with_baseline) == vars(without)


def test_verify_running_takes_the_filled_secrets_and_sonics_own_rows(rendered: tuple[Path, Any]) -> None:
    """fabgen verify --running: the switch's config_db (secrets filled, SONiC's own FEATURE rows
    and banner fields beside the plan's) runs as planned; a changed ACL rule is found, and no
    finding or remediation shows a secret's value."""
    from fabgen.verify import running

    out, _ = rendered
    text = _one_per_role(out)["leaf"].read_text()
    live = json.loads(_filled(text))
    live["FEATURE"]["sflow"].update({"auto_restart": "enabled", "delayed": "False"})
    live["FEATURE"]["lldp"] = {"state": "enabled", "auto_restart": "enabled"}
    live["BANNER_MESSAGE"]["global"]["logout"] = ""
    result = running.sonic(text, json.dumps(live), "leaf")
    assert result.diffs == [] and result.remedy == [], result.diffs[:5]
    live["ACL_RULE"]["FABGEN_MGMT|ALLOW_2"]["SRC_IP"] = "0.0.0.0/0"
    live["TACPLUS"]["global"]["passkey"] = "another-Key-2"
    result = running.sonic(text, json.dumps(live), "leaf")
    assert [(d.kind, d.where) for d in result.diffs] == [("config-different", "ACL_RULE|FABGEN_MGMT|ALLOW_2")]
    shown = json.dumps([vars(d) for d in result.diffs]) + "\n".join(result.remedy)
    assert not any(v in shown for v in [*ENV.values(), *VAULT.values(), "another-Key-2"])
