"""The EOS switch baseline against Arista AVD's rendering of the same policy, line by line.

The inventory is the AVD comparison's rail-optimized EOS fabric (tests/test_avd.py) with an
operator account and a site baseline whose spines override some keys (a RADIUS group without
local fallback instead of TACACS+, another time zone, other sFlow collectors) and whose leaves
turn eAPI off. fabgen renders it; benchmarks/avd.py, run by the AVD virtualenv's Python, gives
AVD every switch's baseline as eos_cli_config_gen's own keys (clock, banners, tacacs_servers or
radius_server, aaa_server_groups, aaa_authentication and aaa_authorization, ip_access_lists and
system.control_plane, snmp_server, sflow, management_api_gnmi, management_api_http, local_users),
translated from fabgen's baseline intent and not from the EOS target's spelling of it, and
compares AVD's config with fabgen's section by section (`avd.line_parity`). Then: one baseline
line broken in fabgen's config is reported; secrets appear only as the deploy's references; the
control-plane ACL admits each switch's management prefix and is bound to the management VRF only.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from conftest import ROOT
from fabgen.pipeline import render_to

sys.path.append(str(ROOT / "benchmarks"))  # last: benchmarks/ansible.py must not shadow the ansible package
import avd  # noqa: E402  (benchmarks/ is not a package; line_parity needs no pyavd)
from test_avd import AVD_PYTHON, PYAVD, _need_pyavd  # noqa: E402

from inventories import inventory  # noqa: E402

pytestmark = pytest.mark.integration

ACCOUNT = "        - {name: netops, password_hash: {env: FABGEN_NETOPS_HASH}}\n"
BASELINE = """baseline:
  timezone: Etc/UTC
  banner:
    login: "Authorized use only.\\nAll activity is logged."
    motd: Welcome
  aaa: {protocol: tacacs+, servers: [10.191.0.10, 10.191.0.11], secret: {vault: tacacs_key}}
  control_plane: {allow: [10.192.0.0/16, 10.9.0.0/24]}
  snmp:
    users: [{name: nms, auth: {env: SNMP_AUTH}, priv: {vault: snmp_priv}}]
    location: DC1 hall 2
    contact: noc
  telemetry: {sflow: {collectors: [10.191.0.20]}, gnmi: true}
  api: true
  roles:
    leaf: {api: false}
    spine:
      timezone: Europe/Berlin
      aaa: {protocol: radius, servers: [10.191.0.12], secret: {env: RADIUS_KEY}, fallback_local: false}
      telemetry: {sflow: {collectors: [10.191.0.21, 10.191.0.22], sample_rate: 4096}}
"""
# the references the render must carry instead of the secrets (the inventory above names them)
REFERENCES = ("{{ tacacs_key }}", "{{ snmp_priv }}", "{{ lookup('ansible.builtin.env', 'SNMP_AUTH') }}",
              "{{ lookup('ansible.builtin.env', 'RADIUS_KEY') }}",
              "{{ lookup('ansible.builtin.env', 'FABGEN_NETOPS_HASH') }}")


def _inventory() -> str:
    text = inventory("eos-rail", 256)
    syslog = "      syslog: [10.191.0.4]\n"
    assert text.count(syslog) == 1
    return text.replace(syslog, syslog + "      users:\n" + ACCOUNT) + BASELINE


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The inventory rendered by fabgen and by AVD, once for the module."""
    _need_pyavd()
    tmp = tmp_path_factory.mktemp("baseline-eos")
    inv = tmp / "inventory.yaml"
    inv.write_text(_inventory())
    render_to(inv, tmp / "fabgen")
    ours = tmp / "fabgen" / "f" / "switches"
    workers = str(min(2, len(os.sched_getaffinity(0))))
    res = subprocess.run([str(AVD_PYTHON), str(ROOT / "benchmarks" / "avd.py"), str(inv), str(tmp / "avd"), workers,
                          str(ours)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stderr[-3000:]
    return {"report": json.loads(res.stdout.strip().splitlines()[-1]), "out": tmp / "fabgen",
            "fabgen": {p.stem: p.read_text() for p in sorted(ours.glob("*.cfg"))},
            "avd": {p.stem: p.read_text() for p in sorted((tmp / "avd").glob("*.cfg"))}}


def _heads(text: str) -> set[str]:
    return set(avd._sections(text))


def test_avd_writes_the_same_baseline_lines(run: dict[str, Any]) -> None:
    report, ours, theirs = run["report"], run["fabgen"], run["avd"]
    assert report["version"] == PYAVD
    assert set(ours) == set(theirs) and len(ours) == report["lines_checked"] == 12
    assert report["parity_problems"] == [] and report["line_problems"] == [], report
    for name in ours:
        assert avd.line_parity(ours[name], theirs[name]) == [], name
    # what was compared: every baseline section on both sides, per role as the inventory says
    for name in ours:
        spine = "spine" in name
        protocol, group = ("radius", "FABGEN-RADIUS") if spine else ("tacacs+", "FABGEN-TACACS")
        methods = f"group {group}" if spine else f"group {group} local"
        heads = {
            "clock timezone " + ("Europe/Berlin" if spine else "Etc/UTC"),
            "banner login", "banner motd", f"aaa group server {protocol} {group}",
            f"aaa authentication login default {methods}", f"aaa authorization exec default {methods}",
            "ip access-list FABGEN-CONTROL-PLANE", "system control-plane", "snmp-server group FABGEN-V3 v3 priv",
            "snmp-server location DC1 hall 2", "snmp-server contact noc", "snmp-server vrf MGMT",
            "sflow sample " + ("4096" if spine else "16384"), "sflow run",
            "sflow vrf MGMT source-interface Management1",
        }
        # the spines' telemetry replaces the site's whole: their sFlow without gNMI
        heads |= {"sflow vrf MGMT destination 10.191.0.21", "sflow vrf MGMT destination 10.191.0.22"} if spine else {
            "sflow vrf MGMT destination 10.191.0.20", "management api gnmi"}
        for side in (ours[name], theirs[name]):
            assert heads <= _heads(side), (name, heads - _heads(side))
        # eAPI on the spines only (`api: false` for the leaves); gNMI on the leaves only
        assert ("management api http-commands" in _heads(ours[name])) == spine, name
        assert ("management api gnmi" in _heads(ours[name])) != spine, name
        assert "aaa authorization exec default local" not in ours[name].splitlines(), name


def _sub(text: str, old: str, new: str) -> str:
    assert text.count(old) >= 1, old
    return text.replace(old, new, 1)


def _move_banner_line(text: str) -> str:
    """The login banner's second line moved into the motd: every line still there."""
    line = "All activity is logged.\n"
    return _sub(_sub(text, line, ""), "banner motd\n", "banner motd\n" + line)


# (switch, what is broken, the alteration, a problem line_parity must report)
BROKEN: list[tuple[str, str, Callable[[str], str], str]] = [
    ("f-su01-leaf1", "a TACACS+ server in the default VRF",
     lambda t: _sub(t, "tacacs-server host 10.191.0.10 vrf MGMT key", "tacacs-server host 10.191.0.10 vrf default key"),
     "only fabgen: tacacs-server host 10.191.0.10 vrf default key 0 {{ tacacs_key }}"),
    ("f-su01-leaf1", "the control-plane ACL bound to the default VRF",
     lambda t: _sub(t, "   ip access-group FABGEN-CONTROL-PLANE vrf MGMT in",
                    "   ip access-group FABGEN-CONTROL-PLANE vrf default in"),
     "only fabgen: system control-plane / ip access-group FABGEN-CONTROL-PLANE vrf default in"),
    ("f-su01-leaf1", "an allowed prefix widened",
     lambda t: _sub(t, "permit ip 10.9.0.0/24 any", "permit ip 10.9.0.0/16 any"),
     "only fabgen: ip access-list FABGEN-CONTROL-PLANE / 40 permit ip 10.9.0.0/16 any"),
    ("f-su01-leaf1", "the local fallback dropped",
     lambda t: _sub(t, "aaa authentication login default group FABGEN-TACACS local\n",
                    "aaa authentication login default group FABGEN-TACACS\n"),
     "only avd: aaa authentication login default group FABGEN-TACACS local"),
    ("f-spine01", "an SNMPv3 group without privacy",
     lambda t: _sub(t, "snmp-server group FABGEN-V3 v3 priv", "snmp-server group FABGEN-V3 v3 auth"),
     "only fabgen: snmp-server group FABGEN-V3 v3 auth"),
    ("f-spine01", "the spine's sFlow rate of the site",
     lambda t: _sub(t, "sflow sample 4096\n", "sflow sample 16384\n"), "only fabgen: sflow sample 16384"),
    ("f-spine01", "the site's time zone on a spine",
     lambda t: _sub(t, "clock timezone Europe/Berlin", "clock timezone Etc/UTC"),
     "only avd: clock timezone Europe/Berlin"),
    ("f-su01-leaf1", "gNMI in the default VRF",
     lambda t: _sub(t, "   transport grpc default\n      vrf MGMT\n", "   transport grpc default\n      vrf default\n"),
     "only fabgen: management api gnmi / transport grpc default / vrf default"),
    ("f-su01-leaf1", "a banner line in the other banner", _move_banner_line,
     "only fabgen: banner motd / All activity is logged."),
]


@pytest.mark.parametrize("switch,what,alter,expected", BROKEN, ids=[b[1] for b in BROKEN])
def test_comparison_rejects_a_broken_baseline_line(run: dict[str, Any], switch: str, what: str,
                                                   alter: Callable[[str], str], expected: str) -> None:
    ours, theirs = run["fabgen"][switch], run["avd"][switch]
    broken = alter(ours)
    assert broken != ours, f"{what}: the alteration did not apply"
    problems = avd.line_parity(broken, theirs)
    assert any(expected in p for p in problems), (what, problems)


SECRET_LINE = re.compile(r"(?: key 0 | auth sha | priv aes | secret sha512 )(\S.*?)(?= priv aes |$)")


def test_secrets_are_references_only(run: dict[str, Any]) -> None:
    """Every value the deploy fills is a reference, in every file of the render, and each
    reference the inventory names is there."""
    seen = set()
    for path in sorted(p for p in run["out"].rglob("*") if p.is_file() and p.suffix == ".cfg"):
        for line in path.read_text().splitlines():
            for value in SECRET_LINE.findall(line):
                assert value in REFERENCES, (path.name, line)
                seen.add(value)
    assert seen == set(REFERENCES)


def test_control_plane_acl_admits_the_management_prefix(run: dict[str, Any]) -> None:
    """The lock-out guard in the render: each switch's ACL admits its own management subnet, and
    binds to the management VRF only (the default VRF, with BGP, keeps EOS's own ACL)."""
    for name, text in run["fabgen"].items():
        sections = avd._sections(text)
        rules = [p[-1].split()[1:] for p in sections["ip access-list FABGEN-CONTROL-PLANE"]]
        admitted = [ipaddress.IPv4Network(r[2]) for r in rules if r[:2] == ["permit", "ip"] and r[2] != "any"]
        mgmt = next(p[-1] for p in sections["interface Management1"] if p[-1].startswith("   ip address"))
        subnet = ipaddress.IPv4Interface(mgmt.split()[-1]).network
        assert any(subnet.subnet_of(a) for a in admitted), (name, subnet, admitted)
        assert sections["system control-plane"] == [("   ip access-group FABGEN-CONTROL-PLANE vrf MGMT in",)], name


def _strip_baseline(text: str) -> str:
    """The config without the baseline's sections (the accounts stay): what the fabric alone renders."""
    heads = ("sflow ", "snmp-server ", "clock ", "banner ", "management api gnmi", "tacacs-server ", "radius-server ",
             "aaa group ", "aaa authentication ", "aaa authorization ", "ip access-list ", "system control-plane")
    kept: list[str] = []
    skip = banner = False
    for line in text.splitlines():
        if banner:
            banner = line != "EOF"
            continue
        if not line.startswith(" "):
            skip, banner = line.startswith(heads), line.startswith("banner ")
        if not skip:
            kept.append(line)
    return "\n".join(kept) + "\n"


def test_the_emulation_reads_the_baseline_as_management(run: dict[str, Any]) -> None:
    """`fabgen emulate` (and verify, lab) read a baseline config: the baseline's lines are known
    and left out as management and telemetry, the routing is the same as without them, and a
    banner's text is text even where it reads like a config line; an unknown line still fails."""
    from fabgen.emulate import eos
    from fabgen.emulate.model import TranslateError

    for name, text in run["fabgen"].items():
        r = eos.translate(name, text, name)
        assert {"management", "telemetry"} <= r.ignored, name
        plain = eos.translate(name, _strip_baseline(text), name)
        assert (r.routed, r.neighbors, r.networks) == (plain.routed, plain.neighbors, plain.networks), name
    leaf = run["fabgen"]["f-su01-leaf1"]
    tricky = _sub(leaf, "All activity is logged.\n", "interface Ethernet9/9\n")
    assert "Ethernet9/9" not in eos.translate("leaf", tricky, "leaf").routed
    with pytest.raises(TranslateError, match="does not know 'monitor session 1 source Ethernet1/1'"):
        eos.translate("leaf", _sub(leaf, "sflow run\n", "sflow run\nmonitor session 1 source Ethernet1/1\n"), "leaf")


def _as_eos_shows(text: str) -> str:
    """The rendered config as `show running-config` prints it once deployed: the AAA keys given
    in clear shown encrypted (`key 7`), the SNMPv3 passphrases as localized hashes, the account's
    hash filled in."""
    text = re.sub(r"key 0 \{\{.*?\}\}", "key 7 070E33455D1D18544541", text)
    text = re.sub(r"v3 auth sha \{\{.*?\}\} priv aes \{\{.*?\}\}",
                  "v3 localized f5717f001c7280300000 auth sha 0x6f1b priv aes 0x91ac", text)
    return re.sub(r"\{\{.*?\}\}", "$6$rounds=656000$filled.by.the.deploy", text)


def test_verify_running_matches_the_deployed_baseline(run: dict[str, Any]) -> None:
    """`fabgen verify --running`: a switch running the deployed baseline matches the plan, its
    secrets unchecked however EOS shows them; a TACACS+ server moved to another VRF is found."""
    from fabgen.verify import running

    for name, text in run["fabgen"].items():
        assert running.eos(text, _as_eos_shows(text), name).diffs == [], name
    leaf = run["fabgen"]["f-su01-leaf1"]
    moved = _sub(_as_eos_shows(leaf), "10.191.0.11 vrf MGMT key 7", "10.191.0.11 vrf default key 7")
    diffs = running.eos(leaf, moved, "leaf").diffs
    assert [(d.kind, d.found) for d in diffs] == [
        ("config-different", "tacacs-server host 10.191.0.11 vrf default key 7 070E33455D1D18544541")], diffs
