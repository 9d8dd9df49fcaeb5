"""The switch baseline in the inventory: where each key comes from (site, fabric, role), and the
values a full replace must never carry (an ACL that shuts out the deploy, a key a platform
cannot hold, text that would end a banner), refused where they are written.

How each platform spells the baseline is tested beside its real consumer (test_baseline_nvue,
test_baseline_eos, test_baseline_sonic); this file holds the rules every platform shares."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from fabgen.errors import InventoryError
from fabgen.intent.switches import switch_configs
from fabgen.pipeline import prepare, render_to

INV = """version: 1
cluster: b
node_groups:
  - {{name: n, model: dgx-h100, count: 16}}
fabrics:
  - name: sx
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    switch_model: sn5600
    node_groups: [n]
    management:
      prefix: 10.77.0.0/24
      gateway: 10.77.0.1
      dns: [10.0.0.2]
      ntp: [ntp.example.net]
{fabric_baseline}
  - name: st
    kind: roce
    role: storage
    platform: eos
    topology: fat-tree
    switch_model: arista-7060x5
    node_groups: [n]
    management:
      prefix: 10.78.0.0/24
      gateway: 10.78.0.1
{site}
"""

SITE = """baseline:
  timezone: Europe/Berlin
  banner: {login: "Authorized use only"}
  aaa: {protocol: tacacs+, servers: [10.0.0.10], secret: {vault: tacacs_key}}
  control_plane: {allow: [10.0.0.0/8]}
  users: [{name: ops, password_hash: {env: OPS_HASH}}]
  roles:
    spine: {timezone: Etc/UTC}
"""


def _write(tmp_path: Path, site: str = SITE, fabric_baseline: str = "") -> Path:
    inv = tmp_path / "inv.yaml"
    inv.write_text(INV.format(site=site, fabric_baseline=fabric_baseline))
    return inv


def _refused(tmp_path: Path, site: str = SITE, fabric_baseline: str = "") -> str:
    inv = _write(tmp_path, site, fabric_baseline)
    with pytest.raises(InventoryError) as err:
        render_to(inv, tmp_path / "out")
    assert not (tmp_path / "out").exists(), "nothing written"
    return str(err.value)


def _baselines(inv: Path) -> dict[str, dict]:
    p = prepare(inv)
    return {sw["name"]: sw for ctx in p.contexts.values() for sw in switch_configs(ctx)}


def test_each_key_comes_from_the_most_specific_block(tmp_path: Path) -> None:
    fabric = """    baseline:
      banner: {login: "Spectrum-X fabric", motd: "Changes by ticket only"}
      roles:
        leaf: {timezone: Asia/Tokyo}"""
    switches = _baselines(_write(tmp_path, fabric_baseline=fabric))
    sx_leaf = next(s for n, s in switches.items() if n.startswith("sx-") and s["role"] == "leaf")
    sx_spine = next(s for n, s in switches.items() if n.startswith("sx-") and s["role"] == "spine")
    st_leaf = next(s for n, s in switches.items() if n.startswith("st-"))
    # the fabric's role block beats the site's block; the site's role block beats the site's block
    assert sx_leaf["baseline"]["timezone"] == "Asia/Tokyo"
    assert sx_spine["baseline"]["timezone"] == "Etc/UTC"
    assert st_leaf["baseline"]["timezone"] == "Europe/Berlin"
    # a key is taken whole from the most specific block that gives it: the fabric's banner
    assert sx_leaf["baseline"]["banner"] == {"login": "Spectrum-X fabric", "motd": "Changes by ticket only"}
    assert st_leaf["baseline"]["banner"] == {"login": "Authorized use only", "motd": None}
    # the site's accounts reach every fabric whose management block names none
    assert [u["name"] for u in sx_leaf["management"]["users"]] == ["ops"]
    assert [u["name"] for u in st_leaf["management"]["users"]] == ["ops"]
    # NVIDIA's baseline defaults on NVUE; EOS keeps the eAPI its configs always had
    assert (sx_leaf["baseline"]["api"], sx_leaf["baseline"]["auto_save"], sx_leaf["baseline"]["telemetry"]["wjh"]) \
        == (True, True, True)
    assert (st_leaf["baseline"]["api"], st_leaf["baseline"]["auto_save"], st_leaf["baseline"]["telemetry"]["wjh"]) \
        == (True, False, False), "EOS keeps its eAPI, nothing else"
    # the deploy's prefix defaults to each fabric's own management prefix
    assert sx_leaf["baseline"]["control_plane"]["deploy_from"] == "10.77.0.0/24"
    assert st_leaf["baseline"]["control_plane"]["deploy_from"] == "10.78.0.0/24"


def test_secrets_are_references_only(tmp_path: Path) -> None:
    site = SITE.replace("control_plane: {allow: [10.0.0.0/8]}", """control_plane: {allow: [10.0.0.0/8]}
  snmp: {users: [{name: nms, auth: {env: SNMP_AUTH}, priv: {vault: snmp_priv}}]}""")
    sw = next(iter(_baselines(_write(tmp_path, site=site)).values()))
    assert sw["baseline"]["aaa"]["secret"] == "{{ tacacs_key }}"
    assert sw["baseline"]["snmp"]["users"][0]["auth"] == "{{ lookup('ansible.builtin.env', 'SNMP_AUTH') }}"
    assert sw["baseline"]["snmp"]["users"][0]["priv_source"] == {"vault": "snmp_priv"}


def test_no_baseline_leaves_the_switch_intent_as_it_was(tmp_path: Path) -> None:
    switches = _baselines(_write(tmp_path, site=""))
    assert switches and not any("baseline" in s for s in switches.values())


@pytest.mark.parametrize("site,fabric,message,where", [
    # the lock-out guard: the ACL must admit the prefix the deploy runs from
    (SITE.replace("allow: [10.0.0.0/8]", "allow: [192.168.0.0/16]"), "",
     "the control-plane ACL admits 192.168.0.0/16 but not 10.77.0.0/24", "baseline.control_plane.allow"),
    (SITE.replace("allow: [10.0.0.0/8]", "allow: [10.0.0.0/8], deploy_from: 172.16.9.0/24"), "",
     "but not 172.16.9.0/24 (deploy_from)", "baseline.control_plane.allow"),
    (SITE.replace("allow: [10.0.0.0/8]", "allow: [10.0.0.1/8]"), "",
     "'10.0.0.1/8' is not an IPv4 prefix", "baseline.control_plane.allow[0]"),
    # a key a platform of the fabrics it applies to cannot carry
    (SITE.replace("protocol: tacacs+", "protocol: ldap, base_dn: 'dc=example,dc=com', bind_dn: 'cn=sw,dc=example,"
                  "dc=com'"), "", "fabric 'st' runs eos, which fabgen configures for radius and tacacs+ only",
     "baseline.aaa.protocol"),
    (SITE + "  telemetry: {wjh: true}\n", "", "wjh is a Spectrum feature fabgen renders on NVUE; fabric 'st' runs eos",
     "baseline.telemetry.wjh"),
    (SITE + "  auto_save: true\n", "", "auto_save is an NVUE setting; fabric 'st' runs eos", "baseline.auto_save"),
    (SITE.replace("protocol: tacacs+", "protocol: ldap"), "", "ldap needs base_dn", "baseline.aaa"),
    (SITE.replace("servers: [10.0.0.10]", "servers: [tacacs.example]"), "", "'tacacs.example' is not an IP address",
     "baseline.aaa.servers[0]"),
    (SITE.replace("timezone: Etc/UTC", "timezone: Mars/Olympus_Mons"), "",
     "'Mars/Olympus_Mons' is not a time zone", "baseline.roles.spine.timezone"),
    (SITE.replace("timezone: Etc/UTC", "timezone: Europe/Kyiv"), "",  # in the tz database, not in NVUE's list
     "did you mean Europe/Kiev?", "baseline.roles.spine.timezone"),
    (SITE.replace('"Authorized use only"', '"Authorized use only\\nEOF\\nrm -rf /"'), "",
     "a line reading EOF ends an EOS banner early", "baseline.banner.login"),
    (SITE.replace("spine: {timezone: Etc/UTC}", "spine: {users: [{name: x, password_hash: {env: X}}]}"), "",
     "accounts are the same on every switch of a fabric", "baseline.roles.spine.users"),
    # the fabric's own block: only where the management plane is rendered
    ("", "    baseline: {timezone: Etc/UTC}\n    ethernet: {}", None, None),
])
def test_a_baseline_that_would_lock_out_or_cannot_be_rendered_is_refused(site: str, fabric: str, message: str | None,
                                                                          where: str | None, tmp_path: Path) -> None:
    if message is None:  # the control case of the table: a fabric block alone is accepted
        assert _baselines(_write(tmp_path, site=site, fabric_baseline=fabric))
        return
    text = _refused(tmp_path, site, fabric)
    line = next(x for x in text.splitlines() if message in x)
    assert f" {where}: " in line, line
    assert re.match(r"^\S*inv\.yaml:\d+:\d+: ", line), "located"


@pytest.mark.parametrize("text", [
    "it's ours",  # a quote would end NVUE's quoted shell word
    "cost $HOME",  # shell expansion
    "{{ lookup('pipe', 'id') }}",  # Jinja in the deploy's template module
    "100% ours",  # a format directive
    "line\r\nfeed",  # a carriage return
    "\n".join(["x"] * 21),  # more than 20 lines
])
def test_banner_text_that_a_config_would_interpret_is_refused(text: str, tmp_path: Path) -> None:
    quoted = yaml.safe_dump(text, width=1000).split("\n...")[0].strip()
    site = SITE.replace('{login: "Authorized use only"}', "{login: " + quoted + "}")
    message = _refused(tmp_path, site=site)
    assert "baseline.banner.login" in message


def test_the_time_zones_are_nvue_s_own_list_in_every_release() -> None:
    import importlib
    import inspect

    from fabgen.spec.platforms import PLATFORMS
    from fabgen.spec.timezones import TIMEZONES

    for release in PLATFORMS["nvue"].versions:
        source = inspect.getsource(importlib.import_module("nvueschema.models.v" + release.replace(".", "_")))
        literal = re.search(r"timezone: Optional\[Optional\[Literal\[(.*?)\]\]\]", source)
        assert literal, release
        assert set(re.findall(r'"([^"]+)"', literal.group(1))) == TIMEZONES, release


def test_a_vault_variable_is_lower_case(tmp_path: Path) -> None:
    message = _refused(tmp_path, site=SITE.replace("{vault: tacacs_key}", "{vault: PATH}"))
    assert "baseline.aaa.secret" in message


def test_ldap_base_dn_is_ldap_only(tmp_path: Path) -> None:
    message = _refused(tmp_path, site=SITE.replace("secret: {vault: tacacs_key}",
                                                    "secret: {vault: tacacs_key}, base_dn: 'dc=x,dc=y'"))
    assert "base_dn and bind_dn are LDAP's" in message


def test_a_clear_text_secret_is_refused(tmp_path: Path) -> None:
    message = _refused(tmp_path, site=SITE.replace("secret: {vault: tacacs_key}", "secret: s3cret"))
    assert "secrets are never written into the inventory" in message


def test_a_baseline_on_an_infiniband_fabric_is_refused(tmp_path: Path) -> None:
    inv = tmp_path / "ib.yaml"
    inv.write_text("""version: 1
cluster: b
node_groups:
  - {name: n, model: dgx-h100, count: 16}
fabrics:
  - name: ib
    kind: infiniband
    platform: ufm
    topology: rail-optimized
    switch_model: qm9700
    node_groups: [n]
    baseline: {timezone: Etc/UTC}
""")
    with pytest.raises(InventoryError) as err:
        render_to(inv, tmp_path / "out")
    assert "fabrics[0].baseline: fabgen writes no switch configuration for an InfiniBand fabric" in str(err.value)


def test_what_sonic_cannot_carry_is_refused(tmp_path: Path) -> None:
    inv = tmp_path / "sonic.yaml"
    inv.write_text("""version: 1
cluster: b
node_groups:
  - {name: n, model: dgx-h100, count: 16}
fabrics:
  - name: so
    kind: roce
    platform: sonic
    platform_version: "202311"
    topology: fat-tree
    switch_model: sn5600-sonic
    node_groups: [n]
    management: {prefix: 10.79.0.0/24, gateway: 10.79.0.1}
baseline:
  banner: {login: "Authorized use only"}
  aaa: {protocol: tacacs+, servers: [10.0.0.10], secret: {env: TACACS_KEY}, fallback_local: false}
  snmp: {users: [{name: nms, auth: {env: SNMP_AUTH}, priv: {env: SNMP_PRIV}}]}
""")
    with pytest.raises(InventoryError) as err:
        render_to(inv, tmp_path / "out")
    text = str(err.value)
    assert "baseline.banner: fabric 'so' runs SONiC 202311, which has no login banner" in text
    assert "baseline.aaa.fallback_local: SONiC (fabric 'so') falls back to the local accounts" in text
    assert "baseline.snmp.users[0].name: SONiC takes SNMPv3 user names of 4 to 32 characters" in text
    # the same block is accepted where the release has the banner table and the rest is rendered
    inv.write_text(inv.read_text().replace('"202311"', '"202411"').replace(", fallback_local: false", "")
                   .replace("name: nms", "name: nmsro"))
    render_to(inv, tmp_path / "out")
    assert (tmp_path / "out" / "so").is_dir()


@pytest.mark.parametrize("fabric,refused", [
    # the fabric's own ACL replaces the site's there: the site's need not admit that fabric's prefix
    ("    baseline:\n      control_plane: {allow: [10.77.0.0/24]}", False),
    # the site's spines get an ACL of their own, and sx gives its own: the site's reach no switch of sx
    ("    baseline:\n      control_plane: {allow: [10.77.0.0/24]}\n      roles:\n"
     "        spine: {control_plane: {allow: [10.77.0.0/24]}}", False),
    # only its spines have their own: the site's ACL is still in force on sx's leaves, and shuts them
    ("    baseline:\n      roles:\n        spine: {control_plane: {allow: [10.77.0.0/24]}}", True),
])
def test_a_site_key_is_checked_only_where_it_is_in_force(fabric: str, refused: bool, tmp_path: Path) -> None:
    """A key of the site's block reaches a fabric's switches only where neither the fabric's block
    nor its role's gives that key (intent/baseline.py's rule): the site's ACL, admitting st's
    management prefix only, is refused where it would be in force on a switch of sx, and nowhere
    else."""
    site = SITE.replace("allow: [10.0.0.0/8]", "allow: [10.78.0.0/24]")
    if not refused:
        switches = _baselines(_write(tmp_path, site=site, fabric_baseline=fabric))
        acl = {n.split("-")[0]: s["baseline"]["control_plane"]["allow"] for n, s in switches.items()}
        assert acl == {"sx": ["10.77.0.0/24"], "st": ["10.78.0.0/24"]}
        return
    text = _refused(tmp_path, site=site, fabric_baseline=fabric)
    assert re.search(r"inv\.yaml:\d+:\d+: baseline\.control_plane\.allow: .* not 10\.77\.0\.0/24", text), text


def test_a_site_key_a_fabric_replaces_is_not_held_to_that_fabric_s_platform(tmp_path: Path) -> None:
    """The site's LDAP never reaches sx's switches when sx gives its own aaa; the platform check
    of the site's block names only the fabrics it reaches (st, EOS, still refuses it)."""
    ldap = SITE.replace("protocol: tacacs+", "protocol: ldap, base_dn: 'dc=example,dc=com', "
                        "bind_dn: 'cn=sw,dc=example,dc=com'")
    fabric = "    baseline:\n      aaa: {protocol: radius, servers: [10.0.0.11], secret: {vault: radius_key}}"
    text = _refused(tmp_path, site=ldap, fabric_baseline=fabric)
    assert "fabric 'st' runs eos" in text
    # telemetry.wjh at the site, every EOS fabric giving its own telemetry: accepted
    inv = tmp_path / "two.yaml"
    inv.write_text(_write(tmp_path, site=SITE + "  telemetry: {wjh: true}\n").read_text().replace(
        "      gateway: 10.78.0.1\n", "      gateway: 10.78.0.1\n    baseline: {telemetry: {gnmi: true}}\n"))
    switches = _baselines(inv)
    assert {n.split("-")[0]: s["baseline"]["telemetry"]["wjh"] for n, s in switches.items()} == \
        {"sx": True, "st": False}



@pytest.mark.parametrize("site,where", [
    (SITE.replace("servers: [10.0.0.10]", "servers: [10.0.0.10, 10.0.0.10]"), "baseline.aaa.servers[1]"),
    (SITE + "  telemetry: {sflow: {collectors: [10.0.0.20, 10.0.0.20]}}\n", "baseline.telemetry.sflow.collectors[1]"),
])
def test_a_server_listed_twice_is_refused_at_its_second_place(site: str, where: str, tmp_path: Path) -> None:
    """SONiC keys TACPLUS_SERVER by address (the second entry silently lost, its priority with
    it), NVUE by address too, EOS writes the line twice: one server, one entry."""
    text = _refused(tmp_path, site=site)
    assert re.search(rf"inv\.yaml:\d+:\d+: {re.escape(where)}: 10\.0\.0\.\d+ is listed twice", text), text


def test_an_acl_that_admits_every_address_is_refused(tmp_path: Path) -> None:
    """The control-plane ACL limits the management services to the management prefixes: one that
    admits 0.0.0.0/0 limits nothing while it looks like it does, refused where it is written."""
    text = _refused(tmp_path, site=SITE.replace("allow: [10.0.0.0/8]", "allow: [10.0.0.0/8, 0.0.0.0/0]"))
    assert re.search(r"inv\.yaml:\d+:\d+: baseline\.control_plane\.allow\[1\]: 0\.0\.0\.0/0 admits every address",
                     text), text


def test_an_account_hash_kept_in_ansible_vault_is_a_reference_everywhere(tmp_path: Path) -> None:
    """`password_hash: {vault: ...}`: the hash stays in the vault; NVUE's YAML and EOS's config
    carry the Ansible reference the deploy fills, the `nv set` script asks for a shell variable of
    the same name, NVIDIA's object model takes the tree, and no environment lookup remains."""
    import nvue_model

    site = SITE.replace("password_hash: {env: OPS_HASH}", "password_hash: {vault: ops_hash}")
    out = tmp_path / "out"
    render_to(_write(tmp_path, site), out)
    leaf = next((out / "sx" / "switches").glob("*leaf*.nvue.yaml"))
    doc = yaml.safe_load(leaf.read_text())
    user = doc[1]["set"]["system"]["aaa"]["user"]["ops"]
    assert user["hashed-password"] == "{{ ops_hash }}"
    assert nvue_model.problems(nvue_model.release(doc[0]["header"]), doc[1]["set"]) == []
    script = leaf.with_name(leaf.name.replace(".yaml", ".sh")).read_text()
    assert ': "${ops_hash:?set ops_hash to the Ansible Vault variable ops_hash' in script
    eos = next((out / "st" / "switches").glob("*.cfg")).read_text()
    assert re.search(r"^username ops .* secret sha512 \{\{ ops_hash \}\}$", eos, re.M)
    for path in out.rglob("*"):
        if path.is_file():
            assert "OPS_HASH" not in path.read_text(errors="replace"), path
    # a vault name the scripts could not read as their own variable is refused at its line
    bad = SITE.replace("password_hash: {env: OPS_HASH}", "password_hash: {vault: PATH}")
    (tmp_path / "bad").mkdir()
    assert "users[0].password_hash.vault: 'PATH' is not an Ansible variable name" in _refused(tmp_path / "bad", bad)
    both = SITE.replace("password_hash: {env: OPS_HASH}", "password_hash: {vault: ops_hash, env: OPS_HASH}")
    (tmp_path / "both").mkdir()
    said = _refused(tmp_path / "both", both)
    assert "users[0].password_hash.env: a secret is one reference" in said and said.count("password_hash") == 1


def test_ntp_dns_and_syslog_from_the_baseline_where_a_fabric_gives_none(tmp_path: Path) -> None:
    """The site baseline's servers reach every fabric whose management block names none (here the
    EOS storage fabric), a fabric's own win (the NVUE fabric keeps its NTP name and DNS server);
    per role they are refused, as is a server that is no address, and an NTP name no DNS resolves."""
    site = SITE.replace("  users:", "  ntp: [10.0.0.123]\n  dns: [10.0.0.53]\n  syslog: [10.0.0.54]\n  users:")
    sws = _baselines(_write(tmp_path, site))
    eos = next(sw for name, sw in sws.items() if name.startswith("st-"))
    assert (eos["management"]["ntp"], eos["management"]["dns"], eos["management"]["syslog"]) == (
        ["10.0.0.123"], ["10.0.0.53"], ["10.0.0.54"])
    nvue = next(sw for name, sw in sws.items() if name.startswith("sx-"))
    assert (nvue["management"]["ntp"], nvue["management"]["dns"]) == (["ntp.example.net"], ["10.0.0.2"])
    out = tmp_path / "out"
    render_to(_write(tmp_path, site), out)
    cfg = next((out / "st" / "switches").glob("*.cfg")).read_text()
    assert "ntp server vrf MGMT 10.0.0.123" in cfg and "ip name-server vrf MGMT 10.0.0.53" in cfg
    assert "logging vrf MGMT host 10.0.0.54" in cfg
    for where, text, said in (
            ("role", site.replace("spine: {timezone: Etc/UTC}", "spine: {ntp: [10.0.0.9]}"), "not per role"),
            ("address", site.replace("syslog: [10.0.0.54]", "syslog: [syslog.example.net]"), "baseline.syslog[0]"),
            ("dns", SITE.replace("  users:", "  ntp: [pool.ntp.org]\n  users:"), "neither its management block")):
        (tmp_path / where).mkdir()
        assert said in _refused(tmp_path / where, text), where
