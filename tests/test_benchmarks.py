"""The benchmark's inputs: every synthetic inventory is valid or refused with a located
message, and the AVD side of the comparison is given the same network fabgen builds."""

from __future__ import annotations

import re
import sys
from collections import Counter

import pytest

from conftest import ROOT
from fabgen.errors import InventoryError
from fabgen.intent.switches import switch_configs
from fabgen.inventory.loader import load_text
from fabgen.inventory.validate import validate
from fabgen.pipeline import build

sys.path.append(str(ROOT / "benchmarks"))  # last: benchmarks/ansible.py must not shadow the ansible package
import avd  # noqa: E402

from inventories import KINDS, SIZES, inventory  # noqa: E402


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_size_validates_or_is_refused_cleanly(name: str) -> None:
    accepted = []
    for gpus in SIZES:
        try:
            validated = validate(load_text(inventory(name, gpus), f"{name}-{gpus}.yaml"))
        except InventoryError as exc:
            assert exc.problems and all(p.format().startswith(f"{name}-{gpus}.yaml:") for p in exc.problems)
            continue
        assert validated.plans["f"].nodes * 8 == gpus
        accepted.append(gpus)
    assert 32768 in accepted  # the size the targets are set for


def test_avd_inputs_describe_fabgens_fabric() -> None:
    _, contexts = build(validate(load_text(inventory("eos-fattree", 4096), "inv.yaml")))
    ctx = contexts["f"]
    switches = switch_configs(ctx)
    common, types = avd.avd_inputs(ctx, switches)
    nodes = {n["name"]: (key, n) for key in ("l3leaf", "spine", "super_spine") if key in common
             for n in common[key]["nodes"]}
    assert set(nodes) == {sw["name"] for sw in switches} == set(types)
    assert Counter(types.values()) == Counter(avd.AVD_TYPE[sw["role"]] for sw in switches)
    # every switch-to-switch link is one AVD uplink, declared by its lower end, on the same ports
    ours = {frozenset({(sw["name"], i["name"]), (i["peer"], i["peer_port"])})
            for sw in switches for i in sw["interfaces"] if i["kind"] == "fabric"}
    theirs = [frozenset({(name, port), (peer, peer_port)})
              for name, (_, n) in nodes.items()
              for peer, port, peer_port in zip(n.get("uplink_switches", []), n.get("uplink_interfaces", []),
                                               n.get("uplink_switch_interfaces", []))]
    assert len(theirs) == len(set(theirs)) and set(theirs) == ours
    # every host port keeps fabgen's address; ASNs are fabgen's; ids are unique per node type
    for sw in switches:
        _, n = nodes[sw["name"]]
        assert n["bgp_as"] == str(sw["bgp"]["asn"])
        hosts = {i["name"]: f"{i['ip']}/{i['prefix']}" for i in sw["interfaces"] if i["kind"] == "host"}
        assert {x["name"]: x["ip_address"] for x in n.get("l3_interfaces", [])} == hosts
    for key in ("l3leaf", "spine", "super_spine"):
        ids = [n["id"] for n in common[key]["nodes"]]
        assert len(ids) == len(set(ids))


def test_parity_notices_a_different_network() -> None:
    _, contexts = build(validate(load_text(inventory("eos-rail", 1024), "inv.yaml")))
    switches = switch_configs(contexts["f"])
    sw = next(s for s in switches if s["role"] == "leaf")
    fabric = [i for i in sw["interfaces"] if i["kind"] == "fabric"]
    text = "".join(f"interface {i['name']}\n   no switchport\n   ip address {i['ip']}/{i['prefix']}\n!\n"
                   for i in sw["interfaces"] if i["kind"] in ("fabric", "host"))
    text += f"router bgp {sw['bgp']['asn']}\n" + "".join(
        f"   neighbor {i['peer_ip']} remote-as 1\n" for i in fabric) + "   service-profile X\n"
    assert avd.parity([sw], {sw["name"]: text}) == []
    assert avd.parity([sw], {sw["name"]: text.replace(f"interface {fabric[0]['name']}\n", "interface Ethernet99/1\n")})
    assert avd.parity([sw], {sw["name"]: text.replace("remote-as 1\n", "", 1)})
    assert avd.parity([sw], {})


def test_line_parity_passes_only_the_documented_differences(tmp_path) -> None:
    """The line-level comparison with AVD: fabgen's config against itself in AVD's dress (its
    peer-group name, its platform defaults, redistribute instead of network statements) is
    equal; a line either side drops or changes is reported."""
    from fabgen.pipeline import render_to

    (tmp_path / "inv.yaml").write_text(inventory("eos-rail", 1024))
    render_to(tmp_path / "inv.yaml", tmp_path / "out")
    ours = (tmp_path / "out" / "f" / "switches" / "f-su01-leaf1.cfg").read_text()
    assert "   update wait-install\n" in ours and "interface Management1\n" in ours
    dressed = ours.replace("SPINES", "IPv4-UNDERLAY-PEERS").replace("hostname ", "no aaa root\n!\nhostname ")
    dressed = "\n".join(line for line in dressed.splitlines() if not line.startswith("      network "))
    dressed = dressed.replace("   address-family ipv4\n", "   redistribute connected\n   address-family ipv4\n")
    dressed = re.sub(r"(?m)^management ssh\n(   .*\n)*", "", dressed)
    assert avd.line_parity(ours, dressed) == []
    for broken, expected in ((dressed.replace("   update wait-install\n", ""), "only fabgen: router bgp"),
                             (dressed.replace("   distance bgp 20 200 200", "   distance bgp 20 200 201"),
                              "distance bgp 20 200 201"),
                             (dressed.replace("   spanning-tree", "   no spanning-tree", 1) if "spanning-tree portfast"
                              in dressed else dressed.replace("spanning-tree mode none", "spanning-tree mode mstp"),
                              "spanning-tree"),
                             (dressed.replace("      random-detect ecn count\n", "", 1), "random-detect ecn count"),
                             (dressed + "\nip routing vrf MGMT\n", "only avd: ip routing vrf MGMT")):
        problems = avd.line_parity(ours, broken)
        assert any(expected in p for p in problems), (expected, problems[:5])


def test_the_whole_cluster_benchmark_inventory_validates_at_every_size() -> None:
    """benchmarks/cluster.py grows the whole-cluster example; every size it runs is valid."""
    import cluster  # noqa: E402  (benchmarks/)

    for nodes in (256, 2048, 4096):
        validated = validate(load_text(cluster.inventory(nodes), f"cluster-{nodes}.yaml"))
        assert validated.plans["compute"].present_nodes == nodes
        assert set(validated.plans) == {"compute", "storagenet", "internalnet", "ipminet"}


def test_the_verify_benchmarks_evidence_is_the_plan_with_one_crossed_pair(tmp_path) -> None:
    """benchmarks/verify.py times `fabgen verify` on evidence it writes from the plan: verify finds
    exactly the pair it crossed (one repair), so the benchmark measures a real finding."""
    import json
    import subprocess

    import verify  # noqa: E402  (benchmarks/verify.py)

    inv = tmp_path / "inv.yaml"
    inv.write_text(inventory("eos-rail", 1024))
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "fabgen", "render", str(inv), "-o", str(out)], check=True,
                   capture_output=True)
    cables = verify.evidence(out, "f", tmp_path / "evidence")
    r = subprocess.run([sys.executable, "-m", "fabgen", "verify", str(out), "--lldp", str(tmp_path / "evidence"),
                        "--format", "json"], capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert cables == 2048 and len(doc["repairs"]) == 1 and "swap the plugs" in json.dumps(doc["repairs"])


def test_the_emulate_sampling_benchmark_reads_a_fabric_without_a_lab(tmp_path) -> None:
    """benchmarks/emulate.py --sampling reads a render and chooses the sample, no root needed."""
    import emulate  # noqa: E402  (benchmarks/emulate.py)

    row = emulate.sampling("eos-rail:1024", tmp_path)
    assert "error" not in row, row
    assert row["cables"] == 2048 and row["sample"].endswith("routers") and row["read_s"] > 0


def _clone_with_a_changed_header(tmp_path):
    """A clone of this repository whose last commit changes one line of every Slurm topology.conf."""
    import subprocess

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    slurm = clone / "generator" / "fabgen" / "targets" / "slurm.py"
    slurm.write_text(slurm.read_text().replace("(topology/tree) for {data['cluster']}; generated by fabgen",
                                               "(topology/tree) for {data['cluster']}; generated by another fabgen"))
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qam",
                    "another header"], check=True)
    return clone


def _against(run_py, ref: str, tmp_path):
    import subprocess

    return subprocess.run([sys.executable, str(run_py), "--kinds", "ib-rail", "--sizes", "1024", "--repeat", "1",
                           "--against", ref, "--out-root", str(tmp_path), "--json", str(tmp_path / "rows.json")],
                          capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="--against checks a git ref out")
def test_against_a_ref_renders_both_and_tells_when_the_output_is_the_same(tmp_path):
    proc = _against(ROOT / "benchmarks" / "run.py", "HEAD", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "### This tree" in proc.stdout and "### HEAD" in proc.stdout
    assert proc.stdout.rstrip().endswith("Output: identical in every case")
    import json

    rows = json.loads((tmp_path / "rows.json").read_text())
    assert [r["tree"] for r in rows] == ["this", "HEAD"] and rows[0]["digest"] == rows[1]["digest"]


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="--against checks a git ref out")
def test_against_a_ref_that_renders_otherwise_exits_1_and_names_the_case(tmp_path):
    # this tree (the installed fabgen) against the clone's last commit, which changed one line
    clone = _clone_with_a_changed_header(tmp_path)
    proc = _against(clone / "benchmarks" / "run.py", "HEAD", tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "Output: differs for ib-rail 1024" in proc.stdout
    import subprocess

    assert "fabgen-against" not in subprocess.run(["git", "-C", str(clone), "worktree", "list"], capture_output=True,
                                                  text=True).stdout  # the checkout is removed
