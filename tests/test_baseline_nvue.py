"""The switch baseline on Cumulus Linux NVUE (targets/nvue.py), the Spectrum-X switches and the
out-of-band SN2201 alike, in every release fabgen writes (5.13 to 5.18): every startup.yaml and
the tree its script's `nv set` commands build, as bash runs them, checked against NVIDIA's
object model of that release; the control-plane ACL evaluated rule by rule; secrets only as
references; the per-role override; the script equal to the YAML."""

from __future__ import annotations

import copy
import functools
import ipaddress
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import nvue_model
import pytest
import yaml

from conftest import IN_CI
from fabgen.pipeline import render_to
from fabgen.targets import nvue

RELEASES = ("5.13", "5.14", "5.15", "5.16", "5.17", "5.18")
MGMT = "172.20.0.0/24"
INVENTORY = """version: 1
cluster: bl
node_groups:
  - {{name: gpu, model: dgx-b200, count: 16}}
fabrics:
  - name: sx
    kind: spectrum-x
    platform: nvue
    platform_version: "{version}"
    topology: rail-optimized
    switch_model: sn5600
    node_groups: [gpu]
    scalable_unit: 8
    planned_nodes: 16
    management:
      prefix: 172.20.0.0/24
      gateway: 172.20.0.1
      ntp: [172.20.1.1]
      users:
        - {{name: netops, password_hash: {{env: FABGEN_NETOPS_HASH}}}}
  - name: oob
    role: oob
    kind: ethernet
    platform: nvue
    platform_version: "{version}"
    switch_model: sn2201
    node_groups: [gpu]
    scalable_unit: 8
    management: {{prefix: 192.168.0.0/23, gateway: 192.168.0.1}}
baseline:
  timezone: Etc/UTC
  banner:
    login: "Authorized use only.\\nAll activity is logged."
    motd: Welcome
  aaa: {{protocol: tacacs+, servers: [172.20.1.10, 172.20.1.11], secret: {{vault: tacacs_key}}}}
  control_plane: {{allow: [172.20.0.0/16, 192.168.0.0/23]}}
  snmp:
    users: [{{name: nms, auth: {{env: SNMP_AUTH}}, priv: {{vault: snmp_priv}}}}]
    location: DC1 hall 2
    contact: noc desk
  telemetry: {{sflow: {{collectors: [172.20.1.20]}}, gnmi: true, histograms: true}}
  users:
    - {{name: ops, password_hash: {{env: OOB_OPS_HASH}}}}
  roles:
    spine: {{timezone: Europe/Berlin}}
"""
# what the deploy would hold in its environment and vault: values the render must never carry
VALUES = {"FABGEN_NETOPS_HASH": "$6$salt$hash-of-netops", "OOB_OPS_HASH": "$6$salt$hash-of-ops",
          "tacacs_key": "tacacs secret value", "SNMP_AUTH": "snmp-auth-value", "snmp_priv": "snmp-priv-value"}
REFS = {"{{ lookup('ansible.builtin.env', 'FABGEN_NETOPS_HASH') }}": "FABGEN_NETOPS_HASH",
        "{{ lookup('ansible.builtin.env', 'OOB_OPS_HASH') }}": "OOB_OPS_HASH",
        "{{ tacacs_key }}": "tacacs_key", "{{ lookup('ansible.builtin.env', 'SNMP_AUTH') }}": "SNMP_AUTH",
        "{{ snmp_priv }}": "snmp_priv"}


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One render per release, the same inventory."""
    out = {}
    for version in RELEASES:
        base = tmp_path_factory.mktemp(f"bl{version}")
        inv = base / "inv.yaml"
        inv.write_text(INVENTORY.format(version=version))
        render_to(inv, base / "out")
        out[version] = base / "out"
    return out


@functools.cache
def _read(path: Path) -> tuple[dict, dict]:
    doc = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    assert [list(d) for d in doc] == [["header"], ["set"]], path
    return doc[0]["header"], doc[1]["set"]


def read_nvue(path: Path) -> tuple[dict, dict]:
    """(header, set tree) of a startup.yaml, each file parsed once for the module (read-only:
    a test that breaks a tree copies it)."""
    return _read(path)


def switches(out: Path) -> list[Path]:
    return sorted(out.glob("*/switches/*.nvue.yaml"))


def leaves(tree: Any, path: tuple[str, ...] = ()) -> list[list[str]]:
    """An NVUE tree's `nv set` words, as an independent flattening: a leaf `{}` is a word of the
    path, a list one comma-joined word."""
    if isinstance(tree, dict) and tree:
        return [w for k, v in tree.items() for w in leaves(v, (*path, str(k)))]
    if isinstance(tree, dict):
        return [list(path)]
    if isinstance(tree, list):
        return [[*path, ",".join(map(str, tree))]]
    return [[*path, str(tree)]]


def run_script(script: Path) -> list[list[str]]:
    """The script run by bash with `nv` a shell function that records its arguments, the
    secrets' variables set: each call's words, as NVUE's CLI would receive them."""
    log = script.with_suffix(".calls")
    log.unlink(missing_ok=True)
    env = {"PATH": os.environ["PATH"], "NV_LOG": str(log), **VALUES}
    stub = 'nv() { printf "%s\\037" "$@" >> "$NV_LOG"; printf "\\036" >> "$NV_LOG"; }; export -f nv; bash "$1"'
    run = subprocess.run(["bash", "-c", stub, "_", str(script)], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return [call.split("\x1f")[:-1] for call in log.read_text().split("\x1e")[:-1]]


def with_values(words: list[str]) -> list[str]:
    return [VALUES[REFS[w]] if w in REFS else w for w in words]


@pytest.mark.parametrize("version", RELEASES)
def test_every_switch_of_every_release_matches_the_object_model(renders: dict[str, Path], version: str) -> None:
    """Every startup.yaml (Spectrum-X and out-of-band) is accepted by the release's object
    model, header included; the script, run by bash, says the YAML word for word (the
    secrets' references become the variables' values) and builds a tree the model accepts."""
    paths = switches(renders[version])
    assert {p.parent.parent.name for p in paths} == {"sx", "oob"}
    for k, path in enumerate(paths):
        header, tree = read_nvue(path)
        assert nvue_model.release(header) == version
        assert nvue_model.header_problems(version, header) == []
        assert nvue_model.problems(version, tree) == [], path.name
        assert "wjh" in tree["system"] and "control-plane" in tree["system"], path.name
        if k % 4 == 0 or path.parent.parent.name == "oob":
            calls = run_script(path.with_name(path.name.replace(".yaml", ".sh")))
            assert calls[-1] == ["config", "apply", "--confirm", "600s", "--assume-yes"]
            assert calls[:-1] == [["set", *with_values(w)] for w in leaves(tree)], path.name
            built: dict = {}
            for call in calls[:-1]:
                nvue_model.merge(built, nvue_model.parse_nv_words(version, [VALUES.get(w, w) for w in call[1:]]))
            assert nvue_model.problems(version, built) == [], path.name


@pytest.mark.parametrize("version", ["5.14", "5.18"])
def test_the_object_model_refuses_a_broken_baseline(renders: dict[str, Path], version: str) -> None:
    """The check is real: a misspelt WJH trigger, the other dialect's timezone key, a histogram
    key that is not NVIDIA's and a control-plane binding that is neither inbound nor outbound
    are each refused by the release's model."""
    _, tree = read_nvue(renders[version] / "sx" / "switches" / "sx-su01-leaf1.nvue.yaml")
    new = version >= "5.15"
    breaks = []
    t = copy.deepcopy(tree)
    t["system"]["wjh"]["channel"]["forwarding"]["trigger"]["l4"] = {}
    breaks.append((t, "l4"))
    t = copy.deepcopy(tree)
    if new:
        t["system"]["timezone"] = t["system"].pop("date-time")["timezone"]
    else:
        t["system"]["date-time"] = {"timezone": t["system"].pop("timezone")}
    breaks.append((t, "timezone" if new else "date-time"))
    t = copy.deepcopy(tree)
    port = next(k for k, v in t["interface"].items() if "telemetry" in v)
    t["interface"][port]["telemetry"] = {"histogram": {"ingress-buffer": {"traffic-class": {"0": {}}}}}
    breaks.append((t, "traffic-class"))
    t = copy.deepcopy(tree)
    t["system"]["control-plane"]["acl"][nvue.CP_ACL] = {"in": {}}
    breaks.append((t, "in"))
    for broken, word in breaks:
        found = nvue_model.problems(version, broken)
        assert any(word in p for p in found), (word, found)


@pytest.mark.parametrize("version", ["5.13", "5.15", "5.18"])
@pytest.mark.parametrize("protocol", ["tacacs+", "radius", "ldap"])
@pytest.mark.parametrize("fallback", [True, False])
def test_every_aaa_protocol_in_both_dialects(version: str, protocol: str, fallback: bool) -> None:
    """TACACS+, RADIUS and LDAP, with and without the local fallback, as the target spells them,
    accepted by the release's model; the authentication order names the server first."""
    d = nvue.Dialect(version)
    aaa = {"protocol": protocol, "servers": ["10.0.0.1", "10.0.0.2"], "secret": "{{ aaa_key }}",
           "secret_source": {"vault": "aaa_key"}, "base_dn": "dc=example,dc=com" if protocol == "ldap" else None,
           "bind_dn": "cn=switch,dc=example,dc=com" if protocol == "ldap" else None, "fallback_local": fallback}
    tree = {"system": {"aaa": nvue._aaa(aaa, "mgmt", d)}}
    assert nvue_model.problems(version, tree) == []
    got = tree["system"]["aaa"]
    key = nvue.AAA_KEY[protocol]
    order = got["authentication"]["order"] if d.new else [
        next(iter(e)) for _, e in sorted(got["authentication-order"].items(), key=lambda kv: int(kv[0]))]
    assert order == ([key, "local"] if fallback else [key])
    # the first listed comes first, as the release's model describes `priority` ("higher comes
    # first" or "lower comes first")
    entry = getattr(nvue_model.models(version), f"NvueConfigSystemAaa{key.capitalize()}ServerEntry")
    said = entry.model_fields["priority"].description
    sense = 1 if "higher comes first" in said else -1 if "lower comes first" in said else 0
    prio = got[key]["server"]
    assert sense * (prio["10.0.0.1"]["priority"] - prio["10.0.0.2"]["priority"]) > 0, said


def _first_match(rules: dict[str, Any], source: str, proto: str, port: int | None) -> str | None:
    """The action of the first rule (by number) a packet matches, or None."""
    for _, rule in sorted(rules.items(), key=lambda kv: int(kv[0])):
        ip = rule["match"]["ip"]
        if ip["protocol"] != proto:
            continue
        if "source-ip" in ip and ipaddress.IPv4Address(source) not in ipaddress.IPv4Network(ip["source-ip"]):
            continue
        if proto in ("tcp", "udp") and str(port) not in ip[proto]["dest-port"]:
            continue
        if proto == "icmp" and "icmp-type" in ip and ip["icmp-type"] != "echo-request":
            continue
        return next(iter(rule["action"]))
    return None


@pytest.mark.parametrize("version", ["5.14", "5.17"])
def test_the_acl_admits_the_management_prefix_and_no_one_else(renders: dict[str, Path], version: str) -> None:
    """On every switch the baseline's ACL is bound inbound to the control plane beside NVIDIA's
    DoS rules; evaluated rule by rule, it admits every address of the management prefixes to
    SSH, SNMP, the NVUE API, gNMI and ping, refuses them from elsewhere, and leaves BGP alone."""
    services = [("tcp", 22), ("udp", 161), ("tcp", nvue.NVUE_API_PORT), ("tcp", nvue.GNMI_PORT), ("icmp", None)]
    for path in switches(renders[version]):
        _, tree = read_nvue(path)
        assert tree["system"]["control-plane"]["acl"] == {nvue.DOS_ACL: {"inbound": {}}, nvue.CP_ACL: {"inbound": {}}}
        acl = tree["acl"][nvue.CP_ACL]
        assert acl["type"] == "ipv4"
        for source in ("172.20.0.1", "172.20.0.254", "192.168.1.200"):  # both fabrics' management prefixes
            assert all(_first_match(acl["rule"], source, p, n) == "permit" for p, n in services), source
        for source in ("10.9.0.1", "172.21.0.1"):
            assert all(_first_match(acl["rule"], source, p, n) == "deny" for p, n in services), source
            assert _first_match(acl["rule"], source, "tcp", 179) is None  # BGP is not this ACL's


def test_secrets_are_references_only(renders: dict[str, Path]) -> None:
    """No value of a secret anywhere in any render; the YAML holds the references the deploy
    fills (an environment lookup, or the vault variable), the script checks each variable
    is set before any command, naming the vault where it comes from."""
    for out in renders.values():
        for f in out.rglob("*"):
            if f.is_file() and f.suffix != ".calls":
                text = f.read_bytes()
                assert not any(v.encode() in text for v in VALUES.values()), f
    out = renders["5.16"]
    for path in switches(out):
        _, tree = read_nvue(path)
        assert tree["system"]["aaa"]["tacacs"]["secret"] == "{{ tacacs_key }}"
        assert tree["system"]["snmp-server"]["username"] == {"nms": {"auth-sha": {
            "{{ lookup('ansible.builtin.env', 'SNMP_AUTH') }}": {"encrypt-aes": {"{{ snmp_priv }}": {}}}}}}
        script = path.with_name(path.name.replace(".yaml", ".sh")).read_text()
        head, _, body = script.partition("\nnv set ")
        assert ': "${tacacs_key:?set tacacs_key to the Ansible Vault variable tacacs_key' in head
        assert ': "${SNMP_AUTH:?set SNMP_AUTH (a secret' in head
        assert "{{" not in body and '"${tacacs_key}"' in body and '"${snmp_priv}"' in body


def test_a_missing_secret_stops_the_script_before_any_command(renders: dict[str, Path], tmp_path: Path) -> None:
    script = renders["5.13"] / "sx" / "switches" / "sx-spine01.nvue.sh"
    env = {"PATH": os.environ["PATH"], **{k: v for k, v in VALUES.items() if k != "snmp_priv"}}
    run = subprocess.run(["bash", "-c", 'nv() { echo called; }; export -f nv; bash "$1"', "_", str(script)],
                         env=env, capture_output=True, text=True)
    assert run.returncode != 0 and "called" not in run.stdout
    assert "snmp_priv to the Ansible Vault variable snmp_priv" in run.stderr


@pytest.mark.parametrize("version", ["5.13", "5.18"])
def test_the_oob_switches_carry_the_baseline_in_the_default_vrf(renders: dict[str, Path], version: str) -> None:
    """The SN2201 access switches (role access) carry the site baseline; being managed on their
    SVI, their AAA, SNMP and sFlow stay in the default VRF; the baseline's accounts are theirs
    (the out-of-band fabric names none); histograms on every used port, none on a down one."""
    new = version >= "5.15"
    paths = sorted((renders[version] / "oob" / "switches").glob("*.nvue.yaml"))
    assert paths
    for path in paths:
        _, tree = read_nvue(path)
        system = tree["system"]
        assert (system["date-time"]["timezone"] if new else system["timezone"]) == "Etc/UTC"
        assert system["aaa"]["tacacs"]["vrf"] == "default"
        assert system["aaa"]["user"]["ops"]["role"] == "system-admin"
        assert system["snmp-server"]["listening-address"] == {"all": {}}
        assert system["sflow"]["collector"] == {"172.20.1.20": {}}
        assert system["message"]["pre-login"] == "Authorized use only.\nAll activity is logged."
        ports = {k: v for k, v in tree["interface"].items() if v.get("type") == "swp"}
        used = [v for v in ports.values() if "bridge" in v]
        assert used and all(v["telemetry"]["histogram"] == nvue.HISTOGRAM for v in used)
        assert not any("telemetry" in v for v in ports.values() if "bridge" not in v)


def test_a_role_overrides_the_site(renders: dict[str, Path]) -> None:
    """roles.spine.timezone replaces the site's on the spines only; everything else is the site's."""
    for version in ("5.14", "5.15"):
        for path in sorted((renders[version] / "sx" / "switches").glob("*.nvue.yaml")):
            _, tree = read_nvue(path)
            tz = tree["system"]["date-time"]["timezone"] if version >= "5.15" else tree["system"]["timezone"]
            assert tz == ("Europe/Berlin" if "spine" in path.name else "Etc/UTC"), path.name
            assert tree["system"]["api"] == {"state": "enabled"}
            assert tree["system"]["config"] == {"auto-save": {"state": "enabled"}}


def test_histograms_are_nvidia_s_on_every_used_port(renders: dict[str, Path]) -> None:
    """NVIDIA's core-switch histograms (cl-01-config.sh: counters rx/tx-packet, egress traffic
    class 0, ingress priority groups 0 and 1) on each port that carries a link, none on a down
    port or a breakout cage; the WJH triggers are NVIDIA's three."""
    _, tree = read_nvue(renders["5.16"] / "sx" / "switches" / "sx-su01-leaf1.nvue.yaml")
    ports = {k: v for k, v in tree["interface"].items() if v.get("type") == "swp"}
    used = {k for k, v in ports.items() if "description" in v}
    assert used and {k for k, v in ports.items() if "telemetry" in v} == used
    assert tree["interface"][sorted(used)[0]]["telemetry"]["histogram"] == {
        "counter": {"counter-type": {"rx-packet": {}, "tx-packet": {}}},
        "egress-buffer": {"traffic-class": {"0": {}}}, "ingress-buffer": {"priority-group": {"0": {}, "1": {}}}}
    assert tree["system"]["wjh"] == {"channel": {"forwarding": {"trigger": {"l2": {}, "l3": {}, "tunnel": {}}}},
                                     "state": "enabled"}


def test_scripts_pass_shellcheck(renders: dict[str, Path]) -> None:
    if not shutil.which("shellcheck"):
        if IN_CI:
            raise RuntimeError("CI must have shellcheck: `make test` installs it")
        pytest.skip("shellcheck not installed")
    scripts = [renders[v] / f / "switches" / n for v in ("5.13", "5.18")
               for f, n in (("sx", "sx-spine01.nvue.sh"), ("oob", "oob-sx-access0001.nvue.sh"))]
    run = subprocess.run(["shellcheck", "-s", "bash", *map(str, scripts)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout


def test_a_role_without_histograms_takes_the_whole_telemetry_key(tmp_path: Path) -> None:
    """A role's `telemetry` replaces the site's whole: spines without histograms (and without the
    site's sFlow, which that key no longer names), leaves with both; WJH stays NVIDIA's default."""
    inv = tmp_path / "inv.yaml"
    inv.write_text(INVENTORY.format(version="5.15").replace(
        "    spine: {timezone: Europe/Berlin}", "    spine: {telemetry: {histograms: false}}"))
    render_to(inv, tmp_path / "out")
    for path in sorted((tmp_path / "out" / "sx" / "switches").glob("*.nvue.yaml")):
        _, tree = read_nvue(path)
        spine = "spine" in path.name
        ports = [v for v in tree["interface"].values() if v.get("type") == "swp" and "description" in v]
        assert ports and all(("telemetry" in v) != spine for v in ports), path.name
        assert ("sflow" in tree["system"]) != spine and tree["system"]["wjh"]["state"] == "enabled"
        assert nvue_model.problems("5.15", tree) == []


def test_an_ldap_name_with_spaces_is_one_word_of_its_nv_set_line() -> None:
    """An LDAP distinguished name may hold spaces (ou=GPU Ops): the script's `nv set` line must
    pass it as one shell word, or bash hands NVUE the name cut in two."""
    import shlex

    from fabgen.formats import yamlout

    aaa = {"protocol": "ldap", "servers": ["10.0.0.1"], "secret": "{{ aaa_key }}",
           "secret_source": {"vault": "aaa_key"}, "base_dn": "ou=GPU Ops,dc=example,dc=com",
           "bind_dn": "cn=switch,dc=example,dc=com", "fallback_local": True}
    tree = {"system": {"aaa": nvue._aaa(aaa, "mgmt", nvue.Dialect("5.16"))}}
    _, paths = yamlout.dump_paths(tree, "    ", "nv set ")
    line = next(p for p in paths if " base-dn " in p)
    assert shlex.split(line)[-1] == "ou=GPU Ops,dc=example,dc=com", line
    assert nvue_model.problems("5.16", tree) == []
