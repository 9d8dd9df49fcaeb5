"""NVIDIA's choices where fabgen keeps its own defaults, each settable (issue 56, "different by choice"):
the post-login banner naming the switch (`{hostname}`), Cumulus Linux's own control-plane ACLs
(`baseline.control_plane.builtin`), the SSH server's line (`baseline.ssh_server`), the anycast MAC
(`ethernet.anycast_mac`), the loopback redistributed through LOOPBACK_BGP (`ethernet.announce`), NVUE's
AAA classes and roles re-declared (`baseline.builtin_roles`) and the north-south Ethernet segments'
MAC and local ids (`ethernet.northsouth.segment_mac`, `segment_local_id`).

NVIDIA's lines are those of its generator (NVIDIA/enterprise-ras, net-configurator/output/2-8-9-400/
default/configs/core-01-config.sh at 2f46cb2, 2-4-5-800/default/configs/gl-plane1-01-config.sh at
2b4e3e2). Each key set renders NVIDIA's line, in a file NVIDIA's object model (nvueschema) takes, in
every dialect; left out, the render is what it was; a bad value is refused where it is written.
"""

from __future__ import annotations

import filecmp
from pathlib import Path

import nvue_model
import pytest
import yaml
from typer.testing import CliRunner

from fabgen.cli import app
from fabgen.emulate import evpn
from fabgen.emulate.model import TranslateError
from fabgen.emulate.nvue import translate
from fabgen.pipeline import render_to

INVENTORY = """version: 1
cluster: nc
node_groups:
  - {{name: hgx, model: dgx-b200, count: 8, hostname: "su-01-node-{{n:02d}}"}}
fabrics:
  - name: gpu
    kind: {kind}
    platform: {platform}
{version}    topology: rail-optimized
    switch_model: {model}
    node_groups: [hgx]
    scalable_unit: 8
    management: {{prefix: 192.168.41.0/24, gateway: 192.168.41.1}}
    ethernet:
{ethernet}baseline:
  banner:
    login: Authorized use only
    motd: "{motd}"
  users:
    - {{name: cumulus, password_hash: {{env: FABGEN_CUMULUS_HASH}}}}
{baseline}"""

NVIDIA = """      host_addressing: evpn
      pools: {hosts: 192.168.110.0/24}
      anycast_mac: "44:38:39:FF:00:FF"
      announce: redistribute
"""
NVIDIA_BASELINE = """  control_plane: {builtin: true}
  ssh_server: true
  builtin_roles: true
"""
# NVIDIA's re-declared AAA classes and roles (core-01-config.sh at 2f46cb2), line for line
ROLES = """nv set system aaa class nvapply action allow
nv set system aaa class nvapply command-path / permission all
nv set system aaa class nvshow action allow
nv set system aaa class nvshow command-path / permission ro
nv set system aaa class sudo action allow
nv set system aaa class sudo command-path / permission all
nv set system aaa role nvue-admin class nvapply
nv set system aaa role nvue-monitor class nvshow
nv set system aaa role system-admin class nvapply
nv set system aaa role system-admin class sudo""".splitlines()
MOTD = "You are successfully logged in to: {hostname} - site: default / arch: 2-8-9-400"
PLATFORMS = {"nvue": ("spectrum-x", "sn5600"), "eos": ("roce", "arista-7060x5"), "sonic": ("roce", "sn5600-sonic")}


def _inventory(tmp: Path, ethernet: str = "      host_addressing: evpn\n      pools: {hosts: 192.168.110.0/24}\n",
               baseline: str = "", motd: str = "Welcome", platform: str = "nvue", release: str | None = None) -> Path:
    kind, model = PLATFORMS[platform]
    version = f'    platform_version: "{release}"\n' if release else ""
    tmp.mkdir(parents=True, exist_ok=True)
    inv = tmp / "inventory.yaml"
    inv.write_text(INVENTORY.format(kind=kind, platform=platform, model=model, version=version,
                                    ethernet=ethernet, baseline=baseline, motd=motd))
    return inv


def _tree(path: Path) -> tuple[str, dict]:
    doc = yaml.safe_load(path.read_text())
    return nvue_model.release(doc[0]["header"]), doc[1]["set"]


@pytest.mark.parametrize("release", ["5.14", "5.16"])
def test_each_key_writes_nvidias_line_and_the_object_model_takes_it(release: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to(_inventory(tmp_path, ethernet=NVIDIA, baseline=NVIDIA_BASELINE, motd=MOTD, release=release), out)
    scripts = sorted((out / "gpu" / "switches").glob("*.nvue.sh"))
    assert scripts
    on = "enabled" if release >= "5.15" else "on"
    for script in scripts:
        name = script.name.removesuffix(".nvue.sh")
        lines = script.read_text().splitlines()
        text = set(lines)
        # NVIDIA's lines (core-01-config.sh at 2f46cb2; gl-plane1-01-config.sh at 2b4e3e2)
        assert "nv set system control-plane acl acl-default-dos inbound" in text
        assert "nv set system control-plane acl acl-default-whitelist inbound" in text
        assert not any("fabgen-mgmt" in line or line.startswith("nv set acl ") for line in lines)
        assert "nv set system ssh-server state enabled" in text
        assert set(ROLES) <= text
        order = "authentication order local" if release >= "5.15" else "authentication-order 10 local"
        assert f"nv set system aaa {order}" in text
        assert "nv set system global anycast-mac 44:38:39:ff:00:ff" in text
        assert "nv set router policy route-map LOOPBACK_BGP rule 10 action permit" in text
        assert "nv set router policy route-map LOOPBACK_BGP rule 10 match interface lo" in text
        assert "nv set router policy route-map LOOPBACK_BGP rule 10 match type ipv4" in text
        state = "state" if release >= "5.15" else "enable"
        assert (f"nv set vrf default router bgp address-family ipv4-unicast redistribute connected {state} {on}"
                in text)
        assert "nv set vrf default router bgp address-family ipv4-unicast redistribute connected route-map " \
               "LOOPBACK_BGP" in text
        assert not any(" ipv4-unicast network " in line for line in lines), name  # the loopback was the only one
        assert any(line.startswith("nv set system message post-login ") and f"logged in to: {name} - site" in line
                   for line in lines), name
        # the YAML and every nv set line NVIDIA's object model of the release takes
        version, tree = _tree(script.with_suffix(".yaml"))
        assert nvue_model.problems(version, tree) == [], name
        for line in lines:
            if line.startswith("nv set ") and "'" not in line:
                nvue_model.parse_nv_set(version, line)


def test_a_routed_fabric_announces_the_same_networks_either_way(tmp_path: Path) -> None:
    """On a routed fabric (host /31s by `network`), announce: redistribute moves only the loopback:
    the emulation (`fabgen emulate`'s translator) reads the same networks from both renders."""
    nets = {}
    for how in ("network", "redistribute"):
        out = tmp_path / how / "out"
        render_to(_inventory(tmp_path / how, ethernet=f"      announce: {how}\n"), out)
        for f in sorted((out / "gpu" / "switches").glob("*.nvue.yaml")):
            router = translate(f.name, f.read_text(), str(f))
            nets[how, f.name] = sorted(router.networks)
            assert router.loopbacks[0] in router.networks
            assert ("LOOPBACK_BGP" in f.read_text()) == (how == "redistribute")
    assert {k[1]: v for k, v in nets.items() if k[0] == "network"} == \
           {k[1]: v for k, v in nets.items() if k[0] == "redistribute"}


def test_the_object_model_refuses_a_broken_line(tmp_path: Path) -> None:
    """The check above can fail: a misspelt key and a bad MAC are refused by NVIDIA's object model."""
    out = tmp_path / "out"
    render_to(_inventory(tmp_path, ethernet=NVIDIA, baseline=NVIDIA_BASELINE), out)
    yaml_file = next((out / "gpu" / "switches").glob("*.nvue.yaml"))
    version, tree = _tree(yaml_file)
    tree["system"]["global"] = {"anycast-mac": "44:38:39:ff:00"}
    assert any("anycast-mac" in p for p in nvue_model.problems(version, tree))
    tree["system"]["global"] = {"anycastmac": "44:38:39:ff:00:ff"}
    assert any("unknown key" in p for p in nvue_model.problems(version, tree))


def test_left_out_or_at_their_defaults_the_render_is_unchanged(tmp_path: Path) -> None:
    """The keys at their defaults render byte for byte what the inventory without them does, and
    none of NVIDIA's lines; a banner without {hostname} is shared by every switch."""
    base, explicit = tmp_path / "base", tmp_path / "explicit"
    render_to(_inventory(base, baseline="  control_plane: {allow: [192.168.41.0/24]}\n"), base / "out")
    render_to(_inventory(explicit, ethernet="      host_addressing: evpn\n      pools: {hosts: 192.168.110.0/24}\n"
                         "      announce: network\n",
                         baseline="  control_plane: {allow: [192.168.41.0/24], builtin: false}\n"), explicit / "out")
    files = sorted(p.relative_to(base / "out") for p in (base / "out").rglob("*") if p.is_file())
    assert files
    match, mismatch, errors = filecmp.cmpfiles(base / "out", explicit / "out", [str(f) for f in files], shallow=False)
    assert mismatch == [] or mismatch == ["manifest.json"], mismatch  # the manifest names the inventory's hash
    assert errors == []
    for script in (base / "out" / "gpu" / "switches").glob("*.nvue.sh"):
        text = script.read_text()
        for nvidia in ("acl-default-whitelist", "ssh-server", "anycast-mac", "LOOPBACK_BGP", "redistribute connected "
                       "route-map", "aaa class", "aaa role", "authentication"):
            assert nvidia not in text, (script.name, nvidia)
        assert "fabgen-mgmt" in text and " ipv4-unicast network " in text


@pytest.mark.parametrize(("platform", "ethernet", "baseline", "motd", "key", "words"), [
    ("nvue", "      anycast_mac: 45:38:39:ff:00:ff\n", "", "Welcome", "fabrics[0].ethernet.anycast_mac",
     "unicast MAC"),
    ("nvue", "      anycast_mac: 44:38:39:ff:00\n", "", "Welcome", "fabrics[0].ethernet.anycast_mac", "unicast MAC"),
    ("nvue", "      anycast_mac: 44:38:39:ff:00:ff\n", "", "Welcome", "fabrics[0].ethernet.anycast_mac",
     "has no EVPN"),
    ("eos", "      host_addressing: evpn\n      pools: {hosts: 192.168.110.0/24}\n"
     "      anycast_mac: 44:38:39:ff:00:ff\n", "", "Welcome", "fabrics[0].ethernet.anycast_mac", "not on eos"),
    ("nvue", "      announce: redistributed\n", "", "Welcome", "fabrics[0].ethernet.announce", "network"),
    ("sonic", "      announce: redistribute\n", "", "Welcome", "fabrics[0].ethernet.announce", "not on sonic"),
    ("eos", "      announce: redistribute\n", "", "Welcome", "fabrics[0].ethernet.announce", "not on eos"),
    ("nvue", "", "  control_plane: {builtin: true, allow: [192.168.41.0/24]}\n", "Welcome",
     "baseline.control_plane.allow", "leave allow and deploy_from out"),
    ("nvue", "", "  control_plane: {}\n", "Welcome", "baseline.control_plane", "or builtin: true"),
    ("eos", "", "  control_plane: {builtin: true}\n", "Welcome", "baseline.control_plane.builtin", "runs eos"),
    ("sonic", "", "  control_plane: {builtin: true}\n", "Welcome", "baseline.control_plane.builtin", "runs sonic"),
    ("nvue", "", "  ssh_server: false\n", "Welcome", "baseline.ssh_server", "lock them out"),
    ("eos", "", "  ssh_server: true\n", "Welcome", "baseline.ssh_server", "NVUE setting"),
    ("eos", "", "  builtin_roles: true\n", "Welcome", "baseline.builtin_roles", "NVUE setting"),
    ("nvue", "      northsouth: {segment_mac: 44:38:39:FF:00:AA}\n", "", "Welcome",
     "fabrics[0].ethernet.northsouth.segment_mac", "role is compute"),
    ("nvue", "      northsouth: {segment_local_id: port}\n", "", "Welcome",
     "fabrics[0].ethernet.northsouth.segment_local_id", "role is compute"),
    ("nvue", "      northsouth: {segment_local_id: cage}\n", "", "Welcome",
     "fabrics[0].ethernet.northsouth.segment_local_id", "place"),
    ("nvue", "      northsouth: {segment_mac: 01:38:39:FF:00:AA}\n", "", "Welcome",
     "fabrics[0].ethernet.northsouth.segment_mac", "unicast MAC"),
    ("eos", "", "  telemetry: {histogram_settings: true}\n", "Welcome", "baseline.telemetry.histogram_settings",
     "runs eos"),
    ("nvue", "", "  telemetry: {histogram_settings: nvidia}\n", "Welcome", "baseline.telemetry.histogram_settings",
     "true or false"),
    ("nvue", "", "", "logged in to: {host}", "baseline.banner.motd", "{hostname}"),
    ("nvue", "", "", "logged in to: {hostname", "baseline.banner.motd", "banner text"),
])
def test_bad_values_are_refused_where_they_are_written(platform: str, ethernet: str, baseline: str, motd: str,
                                                      key: str, words: str, tmp_path: Path) -> None:
    inv = _inventory(tmp_path, ethernet=ethernet or "      mtu: 9100\n", baseline=baseline, motd=motd,
                     platform=platform)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith(f"{inv}:") and f": {key}: " in line]
    assert lines and words in lines[0], (key, words, result.output)
    assert lines[0].split(":")[1].isdigit() and lines[0].split(":")[2].isdigit()  # file:line:col
    assert not out.exists()


@pytest.mark.parametrize("platform", ["eos", "sonic"])
def test_the_banner_names_each_switch_on_eos_and_sonic_too(platform: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to(_inventory(tmp_path, ethernet="      mtu: 9100\n", motd=MOTD, platform=platform), out)
    files = sorted(p for p in (out / "gpu" / "switches").rglob("*") if p.is_file())
    assert files
    for f in files:  # EOS: <switch>.cfg; SONiC: <switch>/config_db.json
        name = f.parent.name if platform == "sonic" else f.name.split(".")[0]
        text = f.read_text()
        assert f"logged in to: {name} - site" in text and "{hostname}" not in text, f.name


NORTHSOUTH = """version: 1
cluster: ns
node_groups:
  - {{name: hgx, model: dgx-b200, count: 8, hostname: "su-01-node-{{n:02d}}"}}
fabrics:
  - name: ns
    role: northsouth
    kind: {kind}
    platform: {platform}
    topology: rail-optimized
    switch_model: {model}
    node_groups: [hgx]
    scalable_unit: 8
    management: {{prefix: 192.168.61.0/24, gateway: 192.168.61.1}}
    ethernet:
      pools: {{loopbacks: 10.254.0.0/24, links: 10.253.0.0/22, hosts: 10.160.0.0/16}}
{extra}"""


def _northsouth(tmp: Path, extra: str, platform: str = "nvue") -> Path:
    kind, model = PLATFORMS[platform]
    tmp.mkdir(parents=True, exist_ok=True)
    inv = tmp / "inventory.yaml"
    inv.write_text(NORTHSOUTH.format(kind=kind, platform=platform, model=model, extra=extra))
    return inv


def test_the_segments_take_nvidias_mac_and_local_ids_on_both_legs(tmp_path: Path) -> None:
    """segment_mac and segment_local_id port: every node bond's segment has NVIDIA's MAC and its leaf
    port's cage x 10 + subport as local id (core-01: bond1s0 local-id 10), the same on both leaves
    (one segment), distinct on each leaf; the object model takes the files."""
    out = tmp_path / "out"
    render_to(_northsouth(tmp_path, '      northsouth: {segment_mac: "44:38:39:ff:00:aa", segment_local_id: port}\n'
                          "      anycast_mac: 44:38:39:ff:00:ff\n"), out)
    segments: dict[str, dict[str, tuple[int, str]]] = {}
    for f in sorted((out / "ns" / "switches").glob("*leaf*.nvue.yaml")):
        version, tree = _tree(f)
        assert nvue_model.problems(version, tree) == [], f.name
        assert tree["system"]["global"] == {"anycast-mac": "44:38:39:ff:00:ff"}
        mine = segments[f.name] = {}
        for name, iface in tree["interface"].items():
            seg = iface.get("evpn", {}).get("multihoming", {}).get("segment")
            if seg:
                (member,) = iface["bond"]["member"]
                cage, _, sub = member.removeprefix("swp").partition("s")
                assert seg["local-id"] == int(cage) * 10 + int(sub or 0), (f.name, name, member)
                assert seg["mac-address"] == "44:38:39:FF:00:AA"
                mine[iface["description"]] = (seg["local-id"], seg["mac-address"])
        assert mine and len({v[0] for v in mine.values()}) == len(mine), f.name  # one id a segment on a leaf
        script = f.with_suffix(".sh").read_text()
        assert "evpn multihoming segment mac-address 44:38:39:FF:00:AA" in script
        assert "evpn multihoming segment local-id 10" in script
    legs = list(segments.values())
    assert len(legs) == 2 and legs[0] == legs[1]  # both legs of every node: one segment


def test_segment_keys_are_refused_on_striped_racks_on_several_pairs_and_on_eos(tmp_path: Path) -> None:
    inv = _northsouth(tmp_path / "eos", "      northsouth: {segment_local_id: port}\n", platform="eos")
    result = CliRunner().invoke(app, ["validate", str(inv)])
    assert result.exit_code == 2 and "ethernet.northsouth.segment_local_id: " in result.output
    assert "not on eos" in result.output and f"{inv}:" in result.output
    # an NVL72 north-south fabric sized by racks stripes its trays over its leaves (spec/sizing.py stripe)
    racks = tmp_path / "racks"
    racks.mkdir()
    inv = racks / "inventory.yaml"
    inv.write_text("""version: 1
cluster: gb
node_groups:
  - {name: gb, model: gb300-nvl72, count: 54}
fabrics:
  - name: ns
    role: northsouth
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    switch_model: sn5600
    node_groups: [gb]
    management: {prefix: 192.168.61.0/24, gateway: 192.168.61.1}
    ethernet:
      northsouth: {segment_local_id: port}
""")
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(racks / "out")])
    assert result.exit_code == 2, result.output
    assert "ethernet.northsouth.segment_local_id: " in result.output and "stripes its nodes" in result.output
    assert "Traceback" not in result.output and not (racks / "out").exists()
    # two leaf pairs (two units of four): the port ids repeat on each pair under the one segment MAC
    pairs = _northsouth(tmp_path / "pairs", "      northsouth: {segment_local_id: port}\n")
    pairs.write_text(pairs.read_text().replace("scalable_unit: 8", "scalable_unit: 4"))
    result = CliRunner().invoke(app, ["render", str(pairs), "-o", str(tmp_path / "pairs" / "out")])
    assert result.exit_code == 2, result.output
    assert "ethernet.northsouth.segment_local_id: " in result.output and "repeat on every leaf pair" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "pairs" / "out").exists()


def test_the_evpn_lab_reads_the_redistributed_loopback_as_the_network_it_was(tmp_path: Path) -> None:
    """The EVPN lab's translator (emulate/evpn.py: the north-south fabric and the GPU overlay) reads
    `redistribute connected` through LOOPBACK_BGP as the loopback announced: the same networks as
    with `network` statements, on every switch of both kinds; without the route-map it refuses."""
    for kind, inventory in (("ns", lambda t, how: _northsouth(t, f"      announce: {how}\n")),
                            ("gpu", lambda t, how: _inventory(t, ethernet=NVIDIA.replace("redistribute", how)))):
        nets: dict[str, dict[str, list[str]]] = {}
        for how in ("network", "redistribute"):
            out = tmp_path / kind / how / "out"
            render_to(inventory(tmp_path / kind / how, how), out)
            nets[how] = {f.name: sorted(evpn.translate(f.name, f.read_text(), str(f)).networks)
                         for f in sorted((out / kind / "switches").glob("*.nvue.yaml"))}
        assert nets["network"] == nets["redistribute"] and all(nets["network"].values()), kind
    f = next((tmp_path / "ns" / "redistribute" / "out" / "ns" / "switches").glob("*leaf*.nvue.yaml"))
    broken = f.read_text().replace("route-map: LOOPBACK_BGP", "route-map: OTHER")
    with pytest.raises(TranslateError, match="redistribute connected"):
        evpn.translate(f.name, broken, str(f))


COLLAPSED = """version: 1
cluster: gb
node_groups:
  - {{name: gb, model: gb300-nvl72, count: 18}}
fabrics:
  - name: ns
    role: northsouth
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    switch_model: sn5600
    node_groups: [gb]
    management: {{prefix: 192.168.61.0/24, gateway: 192.168.61.1}}
    ethernet:
      northsouth: {{border: {border}}}
"""


def test_the_border_takes_nvidias_peer_group_and_no_inbound_filter(tmp_path: Path) -> None:
    """northsouth.border peer_group and inbound_filter: false write NVIDIA's uplink sessions
    (core-01-config.sh at 2f46cb2: `peer-group underlay-esl-external`, an outbound route-map and no
    inbound one) in a file the object model and the EVPN lab take; left out, `exit` and the filter."""
    for name, border, group, inbound in (
            ("nvidia", "{router: site-router, peer_group: underlay-esl-external, inbound_filter: false}",
             "underlay-esl-external", False),
            ("default", "{router: site-router}", "exit", True)):
        out = tmp_path / name / "out"
        (tmp_path / name).mkdir()
        inv = tmp_path / name / "inventory.yaml"  # one NVL72 rack: the collapsed pair (one ASN), as csl-01/02
        inv.write_text(COLLAPSED.format(border=border))
        render_to(inv, out)
        leaves = sorted((out / "ns" / "switches").glob("*leaf*.nvue.yaml"))
        assert leaves
        for f in leaves:
            version, tree = _tree(f)
            assert nvue_model.problems(version, tree) == [], f.name
            evpn._checked_switch(evpn.translate(f.name, f.read_text(), str(f)), str(f))
            text = set(f.with_suffix(".sh").read_text().splitlines())
            base = f"nv set vrf EXIT router bgp peer-group {group} address-family ipv4-unicast policy"
            assert f"{base} outbound route-map OUTBOUND_ERA_PREFIXES" in text
            assert (f"{base} inbound route-map INBOUND_ERA_PREFIXES" in text) is inbound
            assert any(line.startswith("nv set router policy route-map INBOUND_ERA_PREFIXES ") for line in text) \
                is inbound
            assert any(line.endswith(f"peer-group {group}") and "neighbor swp" in line for line in text)


@pytest.mark.parametrize(("border", "key", "words"), [
    ("{router: site-router, inbound_filter: false}", "inbound_filter", "has spines"),
    ("{router: site-router, peer_group: 9exit}", "peer_group", "is not a BGP peer group name"),
    ("{router: site-router, peer_group: \"exit group\"}", "peer_group", "is not"),
    ("{router: site-router, inbound_filter: maybe}", "inbound_filter", "true or false"),
])
def test_bad_border_choices_are_refused_where_they_are_written(border: str, key: str, words: str,
                                                              tmp_path: Path) -> None:
    inv = _northsouth(tmp_path, f"      northsouth: {{border: {border}}}\n")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    lines = [line for line in result.output.splitlines()
             if line.startswith(f"{inv}:") and f"northsouth.border.{key}: " in line]
    assert lines and words in lines[0], result.output
    assert not out.exists()


def test_northsouth_dscp_writes_nvidias_vxlan_lines_and_the_object_model_takes_them(tmp_path: Path) -> None:
    """ethernet.northsouth.dscp: both leaves copy the DSCP out and keep it in, NVIDIA's two lines
    (2-8-9-800 csl-01-config.sh at 993eed6); left out, neither line; the object model takes the
    files and refuses a misspelt action."""
    out, plain = tmp_path / "on" / "out", tmp_path / "off" / "out"
    render_to(_northsouth(tmp_path / "on", "      northsouth: {dscp: true}\n"), out)
    render_to(_northsouth(tmp_path / "off", "      northsouth: {dscp: false}\n"), plain)
    leaves = sorted((out / "ns" / "switches").glob("*leaf*.nvue.yaml"))
    assert leaves
    for f in leaves:
        version, tree = _tree(f)
        assert nvue_model.problems(version, tree) == [], f.name
        assert tree["nve"]["vxlan"]["encapsulation"] == {"dscp": {"action": "copy"}}
        assert tree["nve"]["vxlan"]["decapsulation"] == {"dscp": {"action": "preserve"}}
        script = set(f.with_suffix(".sh").read_text().splitlines())
        assert {"nv set nve vxlan encapsulation dscp action copy",
                "nv set nve vxlan decapsulation dscp action preserve"} <= script
        off = (plain / "ns" / "switches" / f.name).read_text()
        assert "dscp" not in off and "nve" in off
        tree["nve"]["vxlan"]["encapsulation"]["dscp"]["action"] = "kopy"
        assert nvue_model.problems(version, tree) != []


@pytest.mark.parametrize(("platform", "extra", "key", "words"), [
    ("nvue", "      northsouth: {dscp: copy}\n", "fabrics[0].ethernet.northsouth.dscp", "true or false"),
    ("eos", "      northsouth: {dscp: true}\n", "fabrics[0].ethernet.northsouth.dscp", "not on eos"),
    ("nvue", "      bfd: {offload: asic}\n", "fabrics[0].ethernet.bfd.offload", "true or false"),
    ("eos", "      bfd: {offload: true}\n", "fabrics[0].ethernet.bfd.offload", "not on eos"),
])
def test_northsouth_keys_are_refused_where_they_are_written(platform: str, extra: str, key: str, words: str,
                                                           tmp_path: Path) -> None:
    inv = _northsouth(tmp_path, extra, platform=platform)
    result = CliRunner().invoke(app, ["validate", str(inv)])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    lines = [line for line in result.output.splitlines() if line.startswith(f"{inv}:") and f": {key}: " in line]
    assert lines and words in lines[0], (key, words, result.output)
    assert lines[0].split(":")[1].isdigit() and lines[0].split(":")[2].isdigit()  # file:line:col


def test_dscp_is_refused_on_a_compute_fabric(tmp_path: Path) -> None:
    inv = _inventory(tmp_path, ethernet="      northsouth: {dscp: true}\n")
    result = CliRunner().invoke(app, ["validate", str(inv)])
    assert result.exit_code == 2 and "ethernet.northsouth.dscp: " in result.output and "role is compute" in \
        result.output, result.output


def test_bfd_offload_writes_nvidias_line_where_bfd_runs(tmp_path: Path) -> None:
    """ethernet.bfd.offload: `router bfd offload enabled` beside the BFD profiles (csl-01-config.sh
    at 993eed6); left out, no offload line; the object model takes it and refuses a bad value."""
    out, plain = tmp_path / "on" / "out", tmp_path / "off" / "out"
    render_to(_northsouth(tmp_path / "on", "      bfd: {offload: true}\n"), out)
    render_to(_northsouth(tmp_path / "off", "      bfd: {offload: false}\n"), plain)
    files = sorted((out / "ns" / "switches").glob("*.nvue.yaml"))
    assert files
    for f in files:
        version, tree = _tree(f)
        assert nvue_model.problems(version, tree) == [], f.name
        assert tree["router"]["bfd"]["offload"] == "enabled" and tree["router"]["bfd"]["profile"], f.name
        assert "nv set router bfd offload enabled" in f.with_suffix(".sh").read_text().splitlines()
        off = (plain / "ns" / "switches" / f.name).read_text()
        assert "offload" not in off and "profile" in off
        tree["router"]["bfd"]["offload"] = "yes"
        assert nvue_model.problems(version, tree) != []


def test_bfd_offload_is_warned_and_not_written_before_5_15(tmp_path: Path) -> None:
    """Cumulus Linux 5.14's object model has no `router bfd` (nvueschema): a located warning, no line,
    and files the object model takes (the same inventory renders at every release)."""
    inv = _inventory(tmp_path, ethernet="      bfd: {offload: true}\n", release="5.14")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(out)])
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    assert any("fabrics[0].ethernet.bfd.offload (line 16, column " in line and "runs 5.14" in line
               for line in result.output.splitlines()), result.output
    files = sorted((out / "gpu" / "switches").glob("*.nvue.yaml"))
    assert files
    for f in files:
        version, tree = _tree(f)
        assert version == "5.14" and nvue_model.problems(version, tree) == [], f.name
        assert "offload" not in f.read_text()


# NVIDIA's global histogram settings (2-8-9-800 csl-01-config.sh at 993eed6), line for line
HISTOGRAM_SETTINGS = """nv set system telemetry histogram counter bin-min-boundary 3552
nv set system telemetry histogram counter histogram-size 55008
nv set system telemetry histogram counter sample-interval 1024
nv set system telemetry histogram egress-buffer bin-min-boundary 960
nv set system telemetry histogram egress-buffer histogram-size 9830400
nv set system telemetry histogram egress-buffer sample-interval 1024
nv set system telemetry histogram ingress-buffer bin-min-boundary 960
nv set system telemetry histogram ingress-buffer histogram-size 2457600
nv set system telemetry histogram ingress-buffer sample-interval 1024
nv set system telemetry snapshot-file count 120
nv set system telemetry snapshot-file name /var/run/cumulus/histogram_stats
nv set system telemetry snapshot-interval 10""".splitlines()


@pytest.mark.parametrize("release", ["5.14", "5.16"])
def test_histogram_settings_write_nvidias_lines(release: str, tmp_path: Path) -> None:
    """baseline.telemetry.histogram_settings: NVIDIA's twelve lines (and `state enabled` from 5.15,
    as csl-01); left out, none; the object model takes them and refuses a bad size."""
    out, plain = tmp_path / "on" / "out", tmp_path / "off" / "out"
    render_to(_inventory(tmp_path / "on", baseline="  telemetry: {histograms: true, histogram_settings: true}\n",
                         release=release), out)
    render_to(_inventory(tmp_path / "off", baseline="  telemetry: {histograms: true}\n", release=release), plain)
    scripts = sorted((out / "gpu" / "switches").glob("*.nvue.sh"))
    assert scripts
    for script in scripts:
        lines = script.read_text().splitlines()
        assert set(HISTOGRAM_SETTINGS) <= set(lines), script.name
        assert ("nv set system telemetry state enabled" in lines) == (release >= "5.15")
        assert "telemetry histogram counter counter-type rx-packet" in script.read_text()  # the ports' still
        assert "system telemetry" not in (plain / "gpu" / "switches" / script.name).read_text()
        version, tree = _tree(script.with_suffix(".yaml"))
        assert nvue_model.problems(version, tree) == [], script.name
        for line in lines:
            if line.startswith("nv set system telemetry"):
                nvue_model.parse_nv_set(version, line)
        tree["system"]["telemetry"]["histogram"]["counter"]["histogram-size"] = "big"
        assert nvue_model.problems(version, tree) != []
