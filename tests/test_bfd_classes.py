"""BFD per session class (`ethernet.bfd`): each platform's render carries each class's timers,
and the platform's own consumer accepts it and refuses a broken value: NVUE in every release
fabgen writes (NVIDIA's object model: the 5.15+ profiles and the 5.13/5.14 peer-group timers;
the `nv set` script run by bash), the nodes' FRR (`vtysh --dryrun`), EOS against Arista AVD's
eos_cli_config_gen (the same lines from the intent, translated to AVD's keys, not from fabgen's
EOS spelling; AVD's schema refuses a multiplier above 50), SONiC through its YANG models. Bad
values are refused at their line and column with exit 2; `bfd: true|false` renders byte for byte
as the classes written out do."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nvue_model
import pytest
import yaml
from typer.testing import CliRunner

from conftest import IN_CI, ROOT
from fabgen.cli import app
from fabgen.intent.switches import DEFAULT_BFD, OVERLAY_BFD_CLASS, group_bfd
from fabgen.pipeline import render_to

sys.path.append(str(ROOT / "benchmarks"))  # last: benchmarks/ansible.py must not shadow the ansible package
from inventories import inventory  # noqa: E402

RELEASES = ("5.13", "5.14", "5.15", "5.16", "5.17", "5.18")
VTYSH = shutil.which("vtysh")
# a storage fabric whose nodes peer with their leaves (host_routing bgp): leaf_spine and leaf_host
STORAGE = """version: 1
cluster: bfd
node_groups:
  - {{name: gpu, model: dgx-b200, count: 16, hostname: "g{{n:02d}}"}}
fabrics:
  - name: st
    role: storage
    kind: {kind}
    platform: {platform}
{version}    topology: rail-optimized
    switch_model: {model}
    node_groups: [gpu]
    scalable_unit: 16
    management: {{prefix: 192.168.5.0/24, gateway: 192.168.5.1}}
    ethernet:
      host_routing: bgp
      bfd: {bfd}
"""
CLASSES = "{leaf_spine: {interval_ms: 1000, multiplier: 5}, leaf_host: {interval_ms: 600, multiplier: 4}}"


def _storage(tmp: Path, bfd: str, platform: str = "nvue", release: str | None = None) -> Path:
    kind, model = {"nvue": ("spectrum-x", "sn5600"), "sonic": ("roce", "sn5600-sonic"),
                   "eos": ("roce", "arista-7060x5")}[platform]
    version = f'    platform_version: "{release}"\n' if release else ""
    tmp.mkdir(parents=True, exist_ok=True)
    inv = tmp / "inventory.yaml"
    inv.write_text(STORAGE.format(kind=kind, platform=platform, model=model, version=version, bfd=bfd))
    out = tmp / "out"
    render_to(inv, out)
    return out


def _nvue_trees(out: Path) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """switch -> (header, set tree) of every startup.yaml."""
    trees = {}
    for p in sorted((out / "st" / "switches").glob("*.nvue.yaml")):
        doc = yaml.safe_load(p.read_text())
        trees[p.name[:-len(".nvue.yaml")]] = (doc[0]["header"], doc[1]["set"])
    return trees


def _groups(tree: dict[str, Any]) -> dict[str, Any]:
    return tree["vrf"]["default"]["router"]["bgp"]["peer-group"]


@pytest.mark.parametrize("release", RELEASES)
def test_nvue_carries_each_class_and_the_object_model_accepts_it(release: str, tmp_path: Path) -> None:
    new = release >= "5.15"
    out = _storage(tmp_path, CLASSES, release=release)
    trees = _nvue_trees(out)
    leaves = [n for n in trees if "leaf" in n]
    assert leaves and len(trees) > len(leaves)
    for name, (header, tree) in trees.items():
        assert nvue_model.release(header) == release
        assert nvue_model.problems(release, tree) == [], name
        groups = _groups(tree)
        fabric = "SPINES" if name in leaves else "LEAVES"
        if new:  # a profile per timers, the groups naming theirs
            profiles = tree["router"]["bfd"]["profile"]
            assert groups[fabric]["bfd"] == {"profile": "FABRIC-1000x5"}
            assert profiles["FABRIC-1000x5"] == {"detect-multiplier": 5, "min-rx-interval": 1000,
                                                 "min-tx-interval": 1000}
            if name in leaves:
                assert groups["HOSTS"]["bfd"] == {"profile": "FABRIC-600x4"}
                assert profiles["FABRIC-600x4"] == {"detect-multiplier": 4, "min-rx-interval": 600,
                                                    "min-tx-interval": 600}
            assert set(profiles) == ({"FABRIC-1000x5", "FABRIC-600x4"} if name in leaves else {"FABRIC-1000x5"})
        else:  # the timers on the peer group itself
            assert "bfd" not in tree["router"]
            assert groups[fabric]["bfd"] == {"enable": "on", "detect-multiplier": 5, "min-rx-interval": 1000,
                                             "min-tx-interval": 1000}
            if name in leaves:
                assert groups["HOSTS"]["bfd"] == {"enable": "on", "detect-multiplier": 4, "min-rx-interval": 600,
                                                  "min-tx-interval": 600}
    # the `nv set` script, run by bash, says the YAML word for word and builds a tree the model takes
    from test_baseline_nvue import leaves as words_of
    from test_baseline_nvue import run_script

    _, tree = trees[leaves[0]]
    calls = run_script(out / "st" / "switches" / f"{leaves[0]}.nvue.sh")
    assert calls[:-1] == [["set", *w] for w in words_of(tree)]
    built: dict[str, Any] = {}
    for call in calls[:-1]:
        nvue_model.merge(built, nvue_model.parse_nv_words(release, call[1:]))
    assert built == tree and nvue_model.problems(release, built) == []
    # the object model refuses a timer it does not take (5.15+: at least 10 ms; before: 50 ms)
    if new:
        tree["router"]["bfd"]["profile"]["FABRIC-1000x5"]["min-rx-interval"] = 5
    else:
        _groups(tree)["SPINES"]["bfd"]["min-rx-interval"] = 20
    assert any("min-rx-interval" in p for p in nvue_model.problems(release, tree))


def test_a_class_set_false_has_no_bfd_on_its_sessions(tmp_path: Path) -> None:
    trees = _nvue_trees(_storage(tmp_path, "{leaf_spine: false}", release="5.16"))
    for name, (_, tree) in trees.items():
        groups = _groups(tree)
        assert all("bfd" not in g for n, g in groups.items() if n != "HOSTS"), name
        if "leaf" in name:  # the nodes' sessions keep the default timers, in the profile they had
            assert groups["HOSTS"]["bfd"] == {"profile": "FABRIC"}
            assert tree["router"]["bfd"]["profile"] == {"FABRIC": {"detect-multiplier": 3, "min-rx-interval": 300,
                                                                   "min-tx-interval": 300}}
        else:
            assert "bfd" not in tree["router"], name
        assert nvue_model.problems("5.16", tree) == [], name


def test_the_nodes_frr_carries_the_leaf_host_timers(tmp_path: Path) -> None:
    out = _storage(tmp_path, CLASSES, release="5.16")
    conf = (out / "hosts" / "g01" / "frr.conf").read_text()
    assert "bfd\n profile FABRIC\n  detect-multiplier 4\n  receive-interval 600\n  transmit-interval 600\n" in conf
    assert " neighbor FABRIC bfd profile FABRIC\n" in conf
    default = (_storage(tmp_path / "d", "true", release="5.16") / "hosts" / "g01" / "frr.conf").read_text()
    assert " neighbor FABRIC bfd\n" in default and "profile" not in default
    off = (_storage(tmp_path / "o", "{leaf_host: false}", release="5.16") / "hosts" / "g01" / "frr.conf").read_text()
    assert "bfd" not in off.split("\n", 1)[1]  # below the header line
    if VTYSH is None:
        if IN_CI:
            raise RuntimeError("CI must have frr: `make test` installs it")
        pytest.skip("frr is not installed (`make test` installs it)")
    for text in (conf, default, off):
        path = tmp_path / "frr.conf"
        path.write_text(text)
        run = subprocess.run([VTYSH, "--dryrun", "-f", str(path)], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr
    path.write_text(conf.replace("detect-multiplier 4", "detect-multiplier 300"))
    run = subprocess.run([VTYSH, "--dryrun", "-f", str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode != 0, "FRR must refuse a multiplier beyond 255"


# EOS against AVD ---------------------------------------------------------------------------------

AVD_SCRIPT = """
import json, sys
import pyavd
out = {}
for name, sc in json.load(sys.stdin).items():
    violations = pyavd.validate_structured_config(sc).validation_result.violations
    out[name] = {"violations": [(v.message, v.path) for v in violations],
                 "config": "" if violations else pyavd.get_device_config(sc)}
print(json.dumps(out))
"""


def _avd_input(sw: dict[str, Any]) -> dict[str, Any]:
    """eos_cli_config_gen's keys for a switch's BFD, from fabgen's intent (`bgp.bfd`): each peer
    group with `bfd` and, at other than EOS's default timers, `bfd_timers`; the overlay's timers
    as router_bfd.multihop."""
    groups = []
    for g in sw["bgp"]["peer_groups"]:
        t = group_bfd(sw["bgp"]["bfd"], g)
        item: dict[str, Any] = {"name": g, **({"bfd": True} if t else {})}
        if t and t != DEFAULT_BFD:
            item["bfd_timers"] = {"interval": t["interval_ms"], "min_rx": t["interval_ms"],
                                  "multiplier": t["multiplier"]}
        groups.append(item)
    sc: dict[str, Any] = {"hostname": sw["name"], "router_bgp": {"as": str(sw["bgp"]["asn"]),
                                                                "router_id": sw["bgp"]["router_id"],
                                                                "peer_groups": groups}}
    overlay = group_bfd(sw["bgp"]["bfd"], OVERLAY_BFD_CLASS) if sw.get("evpn") else None
    if overlay:
        sc["router_bfd"] = {"multihop": {"interval": overlay["interval_ms"], "min_rx": overlay["interval_ms"],
                                         "multiplier": overlay["multiplier"]}}
    return sc


def _bfd_lines(config: str) -> list[str]:
    """The lines that set BFD: `router bfd`'s and every `neighbor <group> bfd...` (peer groups only)."""
    out, in_bfd = [], False
    for line in config.splitlines():
        if not line.startswith(" "):
            in_bfd = line == "router bfd"
        if in_bfd or re.fullmatch(r"   neighbor [A-Z][A-Z-]* bfd.*", line):
            out.append(line)
    return out


def _avd(inputs: dict[str, Any]) -> dict[str, Any]:
    from test_avd import AVD_PYTHON, _need_pyavd

    _need_pyavd()
    run = subprocess.run([str(AVD_PYTHON), "-c", AVD_SCRIPT], input=json.dumps(inputs), capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


EOS_THREE_TIER = """version: 1
cluster: bfd
node_groups:
  - {name: gpu, model: dgx-h100, count: 32, hostname: "g{n:03d}"}
fabrics:
  - name: f
    kind: roce
    platform: eos
    topology: rail-optimized
    switch_model: arista-7060x5
    node_groups: [gpu]
    tiers: 3
    management: {prefix: 192.168.1.0/26, gateway: 192.168.1.1}
    ethernet:
      bfd: {leaf_spine: {interval_ms: 1000, multiplier: 5}, spine_core: false}
"""
NORTHSOUTH_BFD = """    ethernet:
      bfd:
        overlay: {interval_ms: 1000, multiplier: 3}
        leaf_spine: {interval_ms: 250, multiplier: 4}
"""


def test_eos_lines_are_avds_for_every_class(tmp_path: Path) -> None:
    ours: dict[str, str] = {}
    inputs: dict[str, Any] = {}
    for case, text in (("three", EOS_THREE_TIER), ("ns", inventory("eos-northsouth", 128) + NORTHSOUTH_BFD)):
        inv = tmp_path / f"{case}.yaml"
        inv.write_text(text)
        out = tmp_path / case
        render_to(inv, out)
        for p in sorted((out / "ansible" / "configs").glob("*.json")):
            sw = json.loads(p.read_text())["fabgen_config"]
            key = f"{case}/{sw['name']}"
            inputs[key] = _avd_input(sw)
            ours[key] = (out / "f" / "switches" / f"{sw['name']}.cfg").read_text()
    roles = {k.split("/")[0] + "/" + re.sub(r".*-(leaf|spine|core).*", r"\1", k) for k in ours}
    assert roles == {"three/leaf", "three/spine", "three/core", "ns/leaf", "ns/spine"}, roles
    # what fabgen writes, class by class
    spine = next(v for k, v in ours.items() if k.startswith("three/") and "spine" in k)
    assert "   neighbor LEAVES bfd\n   neighbor LEAVES bfd interval 1000 min-rx 1000 multiplier 5\n" in spine
    assert "neighbor CORES bfd" not in spine and "router bfd" not in spine
    core = next(v for k, v in ours.items() if k.startswith("three/") and "core" in k)
    assert " bfd" not in core
    ns_leaf = next(v for k, v in ours.items() if k.startswith("ns/") and "leaf" in k)
    assert "router bfd\n   multihop interval 1000 min-rx 1000 multiplier 3\n" in ns_leaf
    assert "   neighbor EVPN-OVERLAY-PEERS bfd\n" in ns_leaf
    assert "   neighbor SPINES bfd interval 250 min-rx 250 multiplier 4\n" in ns_leaf
    theirs = _avd(inputs)
    for key, text in ours.items():
        assert theirs[key]["violations"] == [], key
        expected = _bfd_lines(theirs[key]["config"])
        # the overlay group is AVD's (eos_designs) and not a group of the underlay intent
        assert [ln for ln in _bfd_lines(text) if "EVPN-OVERLAY-PEERS" not in ln] == expected, key
    # AVD's schema refuses a multiplier EOS does not take (3-50)
    broken = json.loads(json.dumps(inputs[next(k for k in inputs if k.startswith("three/") and "spine" in k)]))
    next(g for g in broken["router_bgp"]["peer_groups"] if "bfd_timers" in g)["bfd_timers"]["multiplier"] = 99
    found = _avd({"broken": broken})["broken"]["violations"]
    assert found and "multiplier" in found[0][1], found


# SONiC --------------------------------------------------------------------------------------------

def test_sonic_turns_bfd_on_or_off_per_class_and_yang_accepts_it(tmp_path: Path) -> None:
    from test_ethernet import yang_check

    out = _storage(tmp_path, "{leaf_spine: false, leaf_host: true}", platform="sonic")
    leaves = sorted((out / "st" / "switches").glob("st-su*-leaf*/config_db.json"))
    spines = sorted((out / "st" / "switches").glob("st-spine*/config_db.json"))
    assert leaves and spines
    for p in leaves:
        groups = json.loads(p.read_text())["BGP_PEER_GROUP"]
        assert groups["default|SPINES"]["bfd"] == "false" and groups["default|HOSTS"]["bfd"] == "true", p
    for p in spines:
        assert json.loads(p.read_text())["BGP_PEER_GROUP"]["default|LEAVES"]["bfd"] == "false", p
    yang_check([leaves[0], spines[0]])  # asserts the models accept both
    broken = tmp_path / "broken.json"
    broken.write_text(leaves[0].read_text().replace('"bfd":"true"', '"bfd":"sometimes"').replace(
        '"bfd": "true"', '"bfd": "sometimes"'))
    assert "sometimes" in broken.read_text()
    with pytest.raises(AssertionError):
        yang_check([broken])


# Bad values, located -------------------------------------------------------------------------------

@pytest.mark.parametrize("bfd,platform,column,message", [
    ("{leaf_spine: {interval_ms: 20, multiplier: 3}}", "nvue", 39, "interval_ms: must be at least 50, not 20"),
    ("{leaf_spine: {interval_ms: 300, multiplier: 2}}", "nvue", 56, "multiplier: must be at least 3, not 2"),
    ("{spine_core: {interval_ms: 60001, multiplier: 3}}", "nvue", 39, "must be at most 60000, not 60001"),
    ("{leaf_to_spine: true}", "nvue", 13, "unknown key 'leaf_to_spine'"),
    ("{overlay: null}", "nvue", 22, "write true, false or {interval_ms: ..., multiplier: ...}"),
    ('"sometimes"', "nvue", 12, "write true, false or a mapping of session class"),
    ("{leaf_host: {interval_ms: 1000, multiplier: 3}}", "sonic", 24,
     "SONiC's config_db turns BFD on or off per peer group and carries no timers"),
])
def test_bad_values_are_refused_at_their_place(bfd: str, platform: str, column: int, message: str,
                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kind, model = {"nvue": ("spectrum-x", "sn5600"), "sonic": ("roce", "sn5600-sonic")}[platform]
    (tmp_path / "bad.yaml").write_text(STORAGE.format(kind=kind, platform=platform, model=model, version="",
                                                      bfd=bfd))
    assert (tmp_path / "bad.yaml").read_text().splitlines()[16].startswith("      bfd:")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["render", "bad.yaml", "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()
    located = [ln for ln in result.stderr.splitlines() if message in ln]
    assert located and located[0].startswith(f"bad.yaml:17:{column}: "), result.stderr


def test_border_timers_without_a_border_warn_and_render_nothing(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Timers for the border class on a fabric without border uplinks (northsouth.border) are a
    warning at their place (and in the report), and the configs are those of the class left out;
    `bfd: true` (every class on) is no warning."""
    def render(bfd: str, name: str) -> tuple[str, Path]:
        (tmp_path / f"{name}.yaml").write_text(STORAGE.format(kind="spectrum-x", platform="nvue", model="sn5600",
                                                               version="", bfd=bfd))
        monkeypatch.chdir(tmp_path)
        result = CliRunner().invoke(app, ["render", f"{name}.yaml", "-o", str(tmp_path / name)])
        assert result.exit_code == 0, result.stderr
        return result.stderr, tmp_path / name

    warned, out = render("{border: {interval_ms: 1000, multiplier: 5}}", "timed")
    located = [ln for ln in warned.splitlines() if "no border uplinks (northsouth.border)" in ln]
    assert located and "fabrics[0].ethernet.bfd.border (line 17, column 21)" in located[0], warned
    quiet, plain = render("{}", "plain")
    assert "northsouth.border" not in quiet
    timed, left_out = _files(out), _files(plain)
    assert "no border uplinks" in timed["report.md"].decode()  # the report lists the warnings
    assert {k: v for k, v in timed.items() if not k.startswith("report.")} == \
        {k: v for k, v in left_out.items() if not k.startswith("report.")}
    assert "northsouth.border" not in render("true", "every")[0]


# The boolean form, unchanged -------------------------------------------------------------------------

def _files(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != "manifest.json"}


@pytest.mark.parametrize("platform,release", [("nvue", "5.14"), ("nvue", "5.16"), ("eos", None), ("sonic", None)])
def test_true_and_false_render_as_every_class_written_out(platform: str, release: str | None, tmp_path: Path) -> None:
    """`bfd: true` is every class at 300 ms x 3 (and what no key renders), `bfd: false` every class
    off: the same files byte for byte; the two differ from each other."""
    every = "{leaf_spine: true, spine_core: true, leaf_host: {interval_ms: 300, multiplier: 3}, overlay: true}"
    none = "{leaf_spine: false, spine_core: false, leaf_host: false, overlay: false}"
    renders = {b: _files(_storage(tmp_path / str(i), b, platform, release))
               for i, b in enumerate(("true", every, "{}", "false", none))}
    assert renders["true"] == renders[every] == renders["{}"]
    assert renders["false"] == renders[none]
    assert renders["true"] != renders["false"]


@pytest.mark.parametrize(("platform", "release"), [("nvue", "5.14"), ("nvue", "5.16"), ("eos", None)])
def test_the_emulator_reads_every_class_and_runs_bfd_where_it_is_on(platform: str, release: str | None,
                                                                    tmp_path: Path) -> None:
    """`fabgen emulate` reads a render with class timers as it reads the default: each peer group
    of a class with BFD runs BFD in the lab (on 5.15+ too, where a profile turns it on), none of a
    class set false; the nodes' frr.conf with its bfdd profile is one the lab runs as written."""
    from fabgen.emulate.read import fabrics_of, read_fabric
    from fabgen.rendered.read import read_render

    out = _storage(tmp_path / "c", "{leaf_spine: {interval_ms: 1000, multiplier: 5}, "
                   "leaf_host: {interval_ms: 600, multiplier: 4}}", platform, release)
    files = read_render(out, lambda s: None)
    fab = read_fabric(files, next(f for f in fabrics_of(files, "st")))
    leaves = {d: r for d, r in fab.routers.items() if "leaf" in d}
    assert leaves and all(any(g.bfd for g in r.groups.values()) for r in leaves.values())
    assert all(n.bfd for r in leaves.values() for n in r.neighbors if n.group and r.groups[n.group].bfd)
    assert all("bfd profile FABRIC" in h.frr for h in fab.hosts.values() if h.frr)
    off = _storage(tmp_path / "o", "{leaf_spine: false, leaf_host: false}", platform, release)
    files = read_render(off, lambda s: None)
    fab = read_fabric(files, next(f for f in fabrics_of(files, "st")))
    assert not any(g.bfd for r in fab.routers.values() for g in r.groups.values())
    assert not any(n.bfd for r in fab.routers.values() for n in r.neighbors)
