"""A plane's switch pair (`pair: true`, spec/sizing.py `_plane_pair`): NVIDIA's 2-8-9-800 at its
default size (inventories/era-2-8-9-800.yaml) splits each plane's rails over two SN5600 joined by
peer links, no spine, as NVIDIA's generator writes it (NVIDIA/enterprise-ras,
net-configurator/output/2-8-9-800/default at 2f46cb2fca8f4d9b432f9de62957e54aed8f64d9 and
993eed6a993b668e9ab80556cd973b548612c4a4): configs/gsl-plane<p>-0<n>-config.sh, four switches;
odd rails on -01 and even rails on -02 (topology/2-8-9-800-topology.json at 2f46cb2; rail 1 on
swp1s0, swp3s0, ..., rail 3 on swp1s1, rail 5 on swp2s0, rail 7 on swp2s1 in gsl-plane2-01-config.sh at
993eed6); 32 x 400G peer links, swp33-48 broken 2x at 993eed6, each `peer-group internal_isl
remote-as internal`, `type unnumbered`; one loopback session in peer group `overlay` (remote-as
internal, multihop-ttl 2, update-source lo, EVPN only, BFD 1000 ms). Read from the rendered cabling,
BOM, report and NVUE files (NVIDIA's object model, the `nvueschema` package); refused where it cannot
be built; growth adds only."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nvue_model
import pytest
import yaml
from test_gb300_facts import rendered, rows, switches
from test_growth import assert_pure_addition, identities

from fabgen.errors import InventoryError
from fabgen.inventory.loader import load_text
from fabgen.inventory.validate import validate
from fabgen.pipeline import render_to

EXAMPLE = Path(__file__).resolve().parents[1] / "inventories" / "era-2-8-9-800.yaml"
PEER_LINKS = 32  # gsl-plane1-01-config.sh at 2f46cb2: swp49-64 broken 2x; gsl-plane2-01 at 993eed6: swp33-48
# gsl-plane2-01-config.sh at 993eed6: the peer links' 32 subports, the first 400G ports after the 64 node ports
NVIDIA_PEER_PORTS = [f"swp{c}s{s}" for c in range(33, 49) for s in (0, 1)]
LEAVES = ("gpu-plane1-leaf01", "gpu-plane1-leaf02")


def _gpu_only(text: str) -> str:
    """The example without its north-south and out-of-band fabrics and the support servers they
    take: the GPU pair alone, as these tests grow and refuse it."""
    models, groups = text.index("# NVIDIA's support servers"), text.index("node_groups:")
    text = text[:models] + text[groups:]
    support = text.index("  # on the north-south pair after the nodes")
    text = text[:support] + text[text.index("\n", text.index("  - {name: support", support)) + 1:]
    return text[:text.index("\n  - name: ns\n")] + text[text.index("\nbaseline:"):]


def _text(nodes: int = 4, planned: int | None = None, **changes: str) -> str:
    text = _gpu_only(EXAMPLE.read_text()).replace("count: 4, hostname: \"su-02", f"count: {nodes}, hostname: \"su-02")
    if planned:
        text = text.replace("    pair: true", f"    pair: true\n    planned_nodes: {planned}")
    for old, new in changes.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def _tree(files: dict, leaf: str) -> tuple[dict, dict]:
    doc = yaml.safe_load(files[f"{leaf.rsplit('-', 1)[0]}/switches/{leaf}.nvue.yaml"])
    return doc[0]["header"], doc[1]["set"]


def test_the_example_is_nvidias_four_switches_and_their_peer_links() -> None:
    files = rendered(EXAMPLE.read_text())
    for plane in ("gpu-plane1", "gpu-plane2"):
        assert switches(files, plane) == {"leaf": 2}  # gsl-plane<p>-01/02: two a plane, no spine
        cabling = rows(files, f"{plane}/cabling.csv")
        peer = [r for r in cabling if r["tier"] == "leaf-leaf"]
        assert len(peer) == PEER_LINKS and {r["speed"] for r in peer} == {"400G"}
        assert [r["a_port"] for r in peer] == NVIDIA_PEER_PORTS and all(r["a_port"] == r["z_port"] for r in peer)
        assert {(r["a_device"], r["z_device"]) for r in peer} == {(f"{plane}-leaf01", f"{plane}-leaf02")}
        node = {(r["a_device"], r["a_port"]): (r["z_device"], r["z_port"]) for r in cabling if r["tier"] == "node-leaf"}
        assert len(node) == 64
        # node 2's rails as NVIDIA cables them: 1, 3, 5, 7 on -01 at swp3s0, swp3s1, swp4s0, swp4s1; even on -02
        for rail, port in enumerate(("swp3s0", "swp3s0", "swp3s1", "swp3s1", "swp4s0", "swp4s0", "swp4s1", "swp4s1")):
            p = 0 if plane.endswith("1") else 1  # plane p's port of ConnectX-8 r: mlx5_{2r + p}
            assert node[("su-01-node-02", f"mlx5_{2 * rail + p}")] == (f"{plane}-leaf0{rail % 2 + 1}", port)
        bom = [r for r in rows(files, f"{plane}/bom.csv") if r["description"].startswith("leaf-leaf")]
        assert [int(r["quantity"]) for r in bom] == [PEER_LINKS]
    report = json.loads(files["report.json"])["fabrics"]["gpu-plane1"]
    assert report["tiers"] == 1 and report["switches"]["spine"] == 0 and report["pair"] == {"peer_links": PEER_LINKS}
    assert "A switch pair, as NVIDIA builds 2-8-9-800" in str(files["report.md"], "utf-8")
    netbox = [(r["side_a_device"], r["side_a_name"], r["side_b_device"], r["side_b_name"])
              for r in rows(files, "netbox/08-cables.csv")]
    for plane in ("gpu-plane1", "gpu-plane2"):  # the peer links are NetBox cables too
        assert [(p, p) for p in NVIDIA_PEER_PORTS] == [(a, b) for da, a, db, b in netbox
                                                       if (da, db) == (f"{plane}-leaf01", f"{plane}-leaf02")]


@pytest.mark.parametrize("release", ["5.14", "5.16"])
def test_every_nvue_file_is_nvidias_pair_and_the_object_model_takes_it(release: str, tmp_path: Path) -> None:
    text = _text(**{"    pair: true": f'    pair: true\n    platform_version: "{release}"',
                    # no account: its hash is a secret the script reads from the environment
                    "  users:\n    - {name: cumulus, password_hash: {env: FABGEN_CUMULUS_HASH}}\n": ""})
    files = rendered(text)
    trees = [(p, yaml.safe_load(b)) for p, b in files.items() if p.endswith(".nvue.yaml")]
    assert len(trees) == 4
    if release != "5.16":  # the older dialect on plane 1's pair (the planes are built alike)
        trees = [(p, t) for p, t in trees if p.startswith("gpu-plane1/")]
    for path, doc in trees:
        assert nvue_model.problems(release, doc[1]["set"]) == [], path
    asns, loopbacks = set(), {}
    for leaf in LEAVES:
        _, tree = _tree(files, leaf)
        asns.add(tree["router"]["bgp"]["autonomous-system"])
        loopbacks[leaf] = next(iter(tree["interface"]["lo"]["ip"]["address"] if "ip" in tree["interface"]["lo"]
                                    else tree["interface"]["lo"]["ipv4"]["address"])).split("/")[0]
    for leaf, mate in (LEAVES, LEAVES[::-1]):
        _, tree = _tree(files, leaf)
        bgp = tree["vrf"]["default"]["router"]["bgp"]
        isl = {n: v for n, v in bgp["neighbor"].items() if v.get("peer-group") == "ISL"}
        assert sorted(isl, key=NVIDIA_PEER_PORTS.index) == NVIDIA_PEER_PORTS  # internal_isl on every subport
        assert {v["type"] for v in isl.values()} == {"unnumbered"}
        assert bgp["peer-group"]["ISL"]["remote-as"] == "internal"
        assert "policy" not in json.dumps(bgp["peer-group"]["ISL"])  # NVIDIA's internal_isl sends no route-map
        overlay = bgp["peer-group"]["OVERLAY"]  # NVIDIA's `overlay` peer group
        assert overlay["remote-as"] == "internal" and overlay["multihop-ttl"] == 2 and overlay["update-source"] == "lo"
        assert bgp["neighbor"][loopbacks[mate]] == {"peer-group": "OVERLAY", "type": "numbered"}
        # the GPU ports: access ports of the plane's one VLAN, stretched over the pair by its VNI
        vlan = tree["bridge"]["domain"]["br_default"]["vlan"]
        assert list(vlan) == ["900"]
        assert tree["interface"]["swp1s0"]["bridge"]["domain"]["br_default"]["access"] == 900
    assert len(asns) == 1  # iBGP: one ASN for the pair
    if release == "5.16":  # the `nv set` script, run by bash, builds the same tree, which the model takes
        from test_baseline_nvue import leaves as words_of
        from test_baseline_nvue import run_script

        _, tree = _tree(files, LEAVES[1])
        script = tmp_path / "leaf.nvue.sh"
        script.write_bytes(files[f"gpu-plane1/switches/{LEAVES[1]}.nvue.sh"])
        calls = run_script(script)
        assert calls[:-1] == [["set", *w] for w in words_of(tree)]
        built: dict = {}
        for call in calls[:-1]:
            nvue_model.merge(built, nvue_model.parse_nv_words(release, call[1:]))
        assert built == tree
    # NVIDIA's object model refuses a broken file
    _, tree = _tree(files, LEAVES[0])
    tree["vrf"]["default"]["router"]["bgp"]["peer-group"]["OVERLAY"]["remote-as"] = "inside"
    assert any("peer-group.OVERLAY.remote-as" in p for p in nvue_model.problems(release, tree))


def test_growth_up_to_the_plan_is_pure_addition() -> None:
    assert_pure_addition(_text(1, planned=16), _text(4, planned=16))
    _, f, *_ = identities(_text(4, planned=16))
    assert f.plan.pair and f.plan.peer_links == 64 and f.plan.leaves == 2  # a leaf's 64 node ports at 1:1
    # unplanned, a new node adds its peer links after the others: nothing moves
    assert_pure_addition(_text(4), _text(8))


def _refused(text: str) -> str:
    with pytest.raises(InventoryError) as exc:
        validate(load_text(text, "pair.yaml"))
    return str(exc.value)


@pytest.mark.parametrize(("change", "where", "says"), [
    ({"topology: rail-optimized": "topology: fat-tree"}, "pair.yaml:22:11: fabrics[0].pair", "rail-optimized"),
    ({"    pair: true": "    pair: true\n    tiers: 2"}, "pair.yaml:22:11: fabrics[0].pair", "remove tiers"),
    ({"    pair: true": "    pair: true\n    scalable_unit: 8"}, "pair.yaml:22:11: fabrics[0].pair",
     "remove scalable_unit"),
    ({"    pair: true": "    pair: true\n    planned_nodes: 17"}, "fabrics[0].pair", "holds 16 nodes"),
    ({"    pair: true": "    pair: yes please"}, "fabrics[0].pair", ""),
])
def test_refused_at_the_key(change: dict[str, str], where: str, says: str) -> None:
    message = _refused(_text(**change))
    assert where in message and says in message, message


def test_more_nodes_than_a_leaf_holds_is_refused() -> None:
    message = _refused(_text(13))  # 4 + 13 = 17 nodes: 68 node ports a leaf, 64 at most
    assert "fabrics[0].pair" in message and "holds 16 nodes" in message and "need spines" in message


def test_the_cli_refuses_with_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fabgen.cli import app

    inv = tmp_path / "pair.yaml"
    inv.write_text(_text(**{"topology: rail-optimized": "topology: fat-tree"}))
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["render", str(inv), "-o", str(out)])
    assert result.exit_code == 2 and "pair.yaml:22:11" in result.output and not out.exists(), result.output


def _routed() -> str:
    """The example's pair in fabgen's routed design (a /31 a GPU port, no VLAN, VRF or bond): what
    network namespaces here can run."""
    text = _gpu_only(EXAMPLE.read_text())
    start, end = text.index("    ethernet:\n"), text.index("\nbaseline:")
    return text[:start] + "    ethernet:\n      bfd: {leaf_spine: true}\n" + text[end:]


@pytest.mark.skipif(not (os.geteuid() == 0 and shutil.which("vtysh") and Path("/usr/lib/frr/bgpd").exists()
                         and shutil.which("ping")), reason="needs root, FRR and ping (`make test` installs them)")
def test_the_routed_pair_runs_in_frr_with_a_peer_link_down(tmp_path: Path) -> None:
    """Both leaves of a plane in network namespaces with FRR (`fabgen emulate`): the 32 iBGP sessions
    on the peer links up, the mate's prefixes 32 wide over them (emulate/expect.py: iBGP passes a path
    unchanged), every host reaching the next host of its rail; one peer link down, 31 wide; `fabgen
    verify` finds the saved FRR state as planned."""
    inv = tmp_path / "pair.yaml"
    inv.write_text(_routed())
    out = tmp_path / "out"
    render_to(load_text(inv.read_text(), str(inv)), out)
    state = tmp_path / "state"  # the converged state, before the failure
    run = subprocess.run([sys.executable, "-m", "fabgen", "emulate", str(out), "--fabric", "gpu-plane1",
                          "--fail", "gpu-plane1-leaf01:swp33s0", "--format", "json", "--save-state", str(state)],
                         capture_output=True, text=True, timeout=300, check=False)
    report = json.loads(run.stdout)
    assert run.returncode == 0 and report["ok"] and report["routers"] == 2 and report["hosts"] == 8, run.stdout
    assert not report["findings"], report["findings"]
    # `fabgen verify` holds the converged FRR state (`--save-state`) to the plan: the iBGP pair as planned
    run = subprocess.run([sys.executable, "-m", "fabgen", "verify", str(out), "--fabric", "gpu-plane1", "--frr",
                          str(state)], capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0 and "2 switch(es) checked, 0 finding(s)" in run.stdout + run.stderr, run.stdout


def test_a_full_pair_warns_that_the_next_node_needs_spines_and_a_partial_one_warns_nothing() -> None:
    def warnings(text: str) -> list[str]:
        v, *_ = identities(text)  # the growth check runs beside the build
        return [w for ws in v.warnings.values() for w in ws if "rdma_links" not in w]

    assert warnings(_text()) == []
    full = warnings(_text(12))
    assert len(full) == 1 and "the next node (17 nodes) cannot be added" in full[0] and "need spines" in full[0]


SP = """version: 1
cluster: era-2-8-9-400-sp
node_models:
  hgx-400:
    vendor: NVIDIA HGX (OEM)
    gpus: 8
    nics: [NICS]
node_groups:
  - {name: su01, model: hgx-400, count: 4, hostname: "su-01-node-{n:02d}"}
  - {name: su02, model: hgx-400, count: 4, hostname: "su-02-node-{n:02d}"}
fabrics:
  - name: gpu
    kind: spectrum-x
    platform: nvue
    topology: rail-optimized
    switch_model: sn5600
    node_groups: [su01, su02]
    pair: true
    management: {prefix: 192.168.41.0/24, gateway: 192.168.41.1}
    ethernet: {host_addressing: evpn, pools: {hosts: 192.168.0.0/20}}
""".replace("NICS", ", ".join(f"{{rdma: mlx5_{i}, speed: 400}}" for i in range(8)))


def test_2_8_9_400_sp_is_the_same_pair_on_one_plane() -> None:
    """2-8-9-400-SP's default (`2-8-9-400-SP/default/configs/gsl-plane1-01-config.sh` at 2f46cb2):
    one plane, eight nodes of 8 x 400G, the same pair and 32 peer links."""
    files = rendered(SP)
    assert switches(files, "gpu") == {"leaf": 2}
    peer = [r for r in rows(files, "gpu/cabling.csv") if r["tier"] == "leaf-leaf"]
    assert [r["a_port"] for r in peer] == NVIDIA_PEER_PORTS
    assert {(r["a_device"], r["z_device"]) for r in peer} == {("gpu-leaf01", "gpu-leaf02")}
    for leaf in ("gpu-leaf01", "gpu-leaf02"):
        doc = yaml.safe_load(files[f"gpu/switches/{leaf}.nvue.yaml"])
        assert nvue_model.problems(nvue_model.release(doc[0]["header"]), doc[1]["set"]) == [], leaf


@pytest.mark.parametrize(("platform", "model"), [("eos", "arista-7060x5"), ("sonic", "arista-7060x6-64pe-b")])
def test_eos_and_sonic_are_refused_at_the_key(platform: str, model: str) -> None:
    """The routed pair on EOS or SONiC: their targets write no iBGP peer link, so it is refused at
    `pair` (NVIDIA's generator writes the pair on Cumulus Linux alone)."""
    text = _routed().replace("kind: spectrum-x", "kind: roce").replace("platform: nvue ", f"platform: {platform} ")
    # the example's NVUE-only baseline keys (NVIDIA's ACLs, SSH line, AAA roles) are refused elsewhere
    text = "".join(line for line in text.splitlines(keepends=True)
                   if not line.startswith(("  control_plane:", "  ssh_server:", "  builtin_roles:")))
    message = _refused(text.replace("switch_model: sn5600", f"switch_model: {model}"))
    assert message.splitlines()[0].startswith("pair.yaml:22:11: fabrics[0].pair: "), message
    assert f"fabgen's {platform} target writes none" in message and len(message.splitlines()) == 1, message


def test_2_8_9_400s_gpu_half_is_a_pair_with_nvidias_48_peer_links() -> None:
    """2-8-9-400's core pair carries 48 GPU ports and 48 x 400G peer links a switch
    (`2-8-9-400/default/configs/core-01-config.sh` at 2f46cb2: GPU swp4-27 and ISL swp28-51, broken 2x);
    its example's GPU fabric as a pair on switches of its own has the same counts."""
    example = (EXAMPLE.parent / "era-2-8-9-400.yaml").read_text()
    old = "    topology: fat-tree\n    tiers: 1 "
    assert old in example
    files = rendered(example.replace(old, "    topology: rail-optimized\n    pair: true\n    #"))
    assert switches(files, "gpu") == {"leaf": 2}
    cabling = rows(files, "gpu/cabling.csv")
    assert sum(r["tier"] == "leaf-leaf" for r in cabling) == 48
    assert {sum(r["z_device"] == leaf for r in cabling if r["tier"] == "node-leaf")
            for leaf in ("gpu-leaf01", "gpu-leaf02")} == {48}


@pytest.mark.skipif(shutil.which("vtysh") is None, reason="needs FRR's vtysh (`make test` installs FRR)")
def test_the_overlay_labs_frr_config_of_the_pair_is_ibgp_and_frr_takes_it(tmp_path: Path) -> None:
    """The GPU overlay's lab (emulate/overlay.py, run in its VM; not here) reads the pair from the
    rendered NVUE files: both peer groups iBGP (`remote-as internal`), EVPN on the loopback session
    alone, iBGP multipath; FRR's own parser (`vtysh --dryrun`) takes each leaf's frr.conf."""
    from fabgen.emulate import evpn
    from fabgen.emulate.inputs import table
    from fabgen.emulate.overlay import read
    from fabgen.emulate.read import overlay_of
    from fabgen.rendered.read import read_render

    out = tmp_path / "out"
    render_to(load_text(EXAMPLE.read_text(), str(EXAMPLE)), out)
    files = read_render(out)
    ((name, planes),) = overlay_of(files, None)
    plan = read(files, name, planes, table)
    assert sorted(plan.switches) == [f"gpu-plane{p}-leaf0{n}" for p in (1, 2) for n in (1, 2)]
    for leaf in LEAVES:
        conf = evpn.frr_conf(plan.switches[leaf])
        for line in (" neighbor ISL remote-as internal\n", " neighbor OVERLAY remote-as internal\n",
                     " neighbor swp33s0 interface peer-group ISL\n", "  maximum-paths ibgp 64\n",
                     "  no neighbor OVERLAY activate\n"):
            assert line in conf, (leaf, line)
        path = tmp_path / f"{leaf}.conf"
        path.write_text(conf)
        run = subprocess.run([shutil.which("vtysh") or "vtysh", "--dryrun", "-f", str(path)], capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 0, run.stderr[-500:]
