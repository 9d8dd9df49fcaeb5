"""`fabgen lab` against the consumers of its files, offline: containerlab's published JSON Schema
(tests/data/containerlab/, with its licence and source commit), netlab's own parser (`netlab
create`, which writes files and starts nothing) and NVIDIA Air's JSON import format as its
documentation and SDK define it. Every golden render with an Ethernet fabric is written as a lab
(sampled with a small budget, so it is quick); every switch's startup config is the rendered file
byte for byte, and every planned cable among the lab's devices is a link with the names each
image gives its ports, worked out here from the render's tables and containerlab's kind docs,
not from fabgen's mapping. Hostile render folders are refused in one line, exit 2, nothing written.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from conftest import GOLDEN, ROOT
from fabgen.emulate.read import BadInput
from fabgen.lab.run import lab

SCHEMA = ROOT / "tests" / "data" / "containerlab" / "clab.schema.json"
NETLAB = Path(sys.executable).parent / "netlab"
BUDGET = {"max_switches": 18, "max_nodes": 3}
ROUTED = ("roce", "spectrum-x")


def _ethernet(case: str) -> bool:
    fabrics = json.loads((GOLDEN / case / "report.json").read_text())["fabrics"]
    return any(f.get("kind") in ROUTED and f.get("role") not in ("oob", "northsouth")
               and (f.get("addressing") or {}).get("host_addressing") != "evpn" for f in fabrics.values())


CASES = sorted(p.name for p in GOLDEN.iterdir() if (p / "report.json").is_file())
LABS = [c for c in CASES if _ethernet(c)]


# a two-plane fabric by one plane (--fabric NAME-planeN), which is also what its budget keeps: reading
# one plane takes half the time
PLANE = {"b300-spectrumx-2plane": "sx-plane1", "gb300-spectrumx-2plane": "sx-plane2"}


@pytest.fixture(scope="module")
def labs() -> dict[str, dict[str, bytes]]:
    return {case: lab(GOLDEN / case, PLANE.get(case), **BUDGET) for case in LABS}  # type: ignore[arg-type]


def _clab(files: dict[str, bytes]) -> tuple[str, dict[str, Any]]:
    [(path, data)] = [(p, d) for p, d in files.items() if p.endswith(".clab.yml")]
    return path, yaml.safe_load(data)


# containerlab's schema -------------------------------------------------------------------------

def _schema_errors(doc: Any) -> list[str]:
    # the schema's own check_schema fails on ECMAScript \p{..} classes in patterns fabgen's files never
    # reach (mgmt-ipv4); validation compiles a pattern only where a value meets it
    schema = json.loads(SCHEMA.read_text())
    return [f"{list(e.path)}: {e.message[:200]}" for e in jsonschema.Draft7Validator(schema).iter_errors(doc)]


def test_every_golden_lab_passes_containerlabs_schema(labs: dict[str, dict[str, bytes]]) -> None:
    assert {"roce-2node", "fattree-2to1", "spectrumx-1su", "superpod-cluster"} <= set(labs)
    for case, files in labs.items():
        _, doc = _clab(files)
        assert doc["topology"]["nodes"] and doc["topology"]["links"], case
        assert not _schema_errors(doc), (case, _schema_errors(doc)[:3])


def test_the_schema_rejects_a_broken_topology(labs: dict[str, dict[str, bytes]]) -> None:
    _, doc = _clab(labs["fattree-2to1"])
    name = next(iter(doc["topology"]["nodes"]))
    doc["topology"]["nodes"][name]["kind"] = "sonic"  # no such kind: sonic-vs
    assert _schema_errors(doc)
    _, doc = _clab(labs["roce-2node"])
    doc["topology"]["nodes"][name := next(iter(doc["topology"]["nodes"]))]["startup"] = "x.cfg"  # not a node key
    assert _schema_errors(doc)
    _, doc = _clab(labs["roce-2node"])
    doc["name"] = "a lab"  # the name's pattern
    assert _schema_errors(doc)


def test_each_file_says_what_was_kept_at_the_top(labs: dict[str, dict[str, bytes]]) -> None:
    for case, files in labs.items():
        for path in (p for p in files if p.endswith((".yml", ".txt"))):
            head = files[path].decode().split("\n", 1)[0]
            assert head.startswith("# ") and "fabgen lab" in head, (case, path)
            assert "# fabrics: " in files[path].decode(), (case, path)
    rows = _rows("spectrumx-1su", "sx/addresses.csv")  # the header's counts: the sample's and the plan's
    switches = {r["device"] for r in rows if r["role"] in ("leaf", "spine", "core")}
    nodes = {r["device"] for r in rows if r["role"] == "node"}
    kept = _clab(labs["spectrumx-1su"])[1]["topology"]["nodes"]
    said = (f"sampled: {len(switches & set(kept))} of {len(switches)} switches, {len(nodes & set(kept))} of "
            f"{len(nodes)} nodes")
    assert len(kept) < len(switches | nodes) and said in labs["spectrumx-1su"]["netlab/topology.yml"].decode()


def test_the_sample_holds_the_budget(labs: dict[str, dict[str, bytes]]) -> None:
    for case, files in labs.items():
        nodes = _clab(files)[1]["topology"]["nodes"].values()
        switches = sum(1 for n in nodes if n["kind"] != "linux")
        assert 0 < switches <= BUDGET["max_switches"], case
        assert sum(1 for n in nodes if n["kind"] == "linux") <= BUDGET["max_nodes"], case


# startup configs -------------------------------------------------------------------------------

def test_every_switch_boots_its_rendered_config_byte_for_byte(labs: dict[str, dict[str, bytes]]) -> None:
    for case, files in labs.items():
        path, doc = _clab(files)
        for name, node in doc["topology"]["nodes"].items():
            if node["kind"] == "linux":
                assert "startup-config" not in node and node["exec"], (case, name)
                continue
            ref = node.get("startup-config") or node["binds"][0].split(":")[0]
            assert ref.startswith("configs/") and Path(ref).stem.startswith(name) or f"/{name}/" in ref, ref
            copy = files[f"containerlab/{ref}"]
            rendered = (GOLDEN / case / ref.removeprefix("configs/")).read_bytes()
            assert copy == rendered and copy, (case, name)
            if node["kind"] == "sonic-vs":  # sonic-vs takes no startup-config: its config_db.json, bound
                assert node["binds"] == [f"{ref}:/etc/sonic/config_db.json"]


def test_nodes_get_their_netplan_addresses(labs: dict[str, dict[str, bytes]]) -> None:
    _, doc = _clab(labs["roce-2node"])
    netplan = yaml.safe_load((GOLDEN / "roce-2node" / "hosts" / "gpu01" / "netplan.yaml").read_text())
    lines = doc["topology"]["nodes"]["gpu01"]["exec"]
    for dev, eth in netplan["network"]["ethernets"].items():
        for cidr in eth.get("addresses", []):
            assert f"ip addr add {cidr} dev {dev}" in lines
        assert f"ip link set dev {dev} mtu {eth['mtu']} up" in lines


# links against the cabling plan ----------------------------------------------------------------

def _rows(case: str, rel: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((GOLDEN / case / rel).read_text())))


def _image_port(kind: str, port: str, width: int) -> str:
    """The port's name as containerlab's kind docs give it (docs/manual/kinds/ceos.md: eth1_1 is
    Ethernet1/1; sonic-vs.md: eth1 is Ethernet0, ports four lanes apart; nvidia_cumulusvx: swpN,
    a breakout cage's lanes one after another)."""
    if kind == "arista_ceos":
        return "eth" + port.removeprefix("Ethernet").replace("/", "_")
    if kind == "sonic-vs":
        return f"eth{int(port.removeprefix('Ethernet')) // 4 + 1}"
    if kind == "nvidia_cumulusvx":
        m = re.fullmatch(r"swp(\d+)(?:s(\d+))?", port)
        assert m, port
        return f"swp{int(m[1])}" if width == 0 else f"swp{(int(m[1]) - 1) * width + int(m[2] or 0) + 1}"
    return port


def _expected_links(case: str, doc: dict[str, Any], fabrics: list[str]) -> list[frozenset[tuple[str, str]]]:
    nodes = doc["topology"]["nodes"]
    report = json.loads((GOLDEN / case / "report.json").read_text())["fabrics"]
    planes = [p for p in report if p in fabrics or p.rsplit("-plane", 1)[0] in fabrics]
    cables = [r for p in planes for r in _rows(case, f"{p}/cabling.csv")]
    netdev = {(r["peer_device"], r["peer_interface"]): r["interface"] for p in planes
              for r in _rows(case, f"{p}/addresses.csv") if r["role"] == "node"}
    width: dict[str, int] = {}
    for c in cables:  # the widest breakout on each switch, from the whole plan
        for dev, port in ((c["a_device"], c["a_port"]), (c["z_device"], c["z_port"])):
            m = re.fullmatch(r"swp\d+s(\d+)", port)
            width[dev] = max(width.get(dev, 0), int(m[1]) + 1 if m else 0)
    out = []
    for c in cables:
        if c["a_device"] not in nodes or c["z_device"] not in nodes:
            continue
        ends = []
        for dev, port, far, far_port in ((c["a_device"], c["a_port"], c["z_device"], c["z_port"]),
                                         (c["z_device"], c["z_port"], c["a_device"], c["a_port"])):
            kind = nodes[dev]["kind"]
            name = netdev[(far, far_port)] if kind == "linux" else _image_port(kind, port, width.get(dev, 0))
            ends.append((dev, name))
        out.append(frozenset(ends))
    return out


def test_every_planned_cable_among_the_labs_devices_is_a_link(labs: dict[str, dict[str, bytes]]) -> None:
    for case, files in labs.items():
        _, doc = _clab(files)
        head = files[_clab(files)[0]].decode()
        fabrics = re.search(r"^# fabrics: (.*)$", head, re.M)[1].split(", ")  # type: ignore[index]
        links = [frozenset(tuple(e.split(":", 1)) for e in k["endpoints"]) for k in doc["topology"]["links"]]
        expected = _expected_links(case, doc, fabrics)
        assert sorted(map(sorted, links)) == sorted(map(sorted, expected)), case
        ends = [e for k in doc["topology"]["links"] for e in k["endpoints"]]
        assert len(ends) == len(set(ends)), case  # each port on one link


def test_the_link_check_notices_a_wrong_port(labs: dict[str, dict[str, bytes]]) -> None:
    files = dict(labs["fattree-2to1"])
    path, doc = _clab(files)
    link = doc["topology"]["links"][0]["endpoints"]
    link[0] = link[0].rsplit(":", 1)[0] + ":eth99"
    files[path] = files[path].split(b"\nname:")[0] + b"\n" + yaml.safe_dump(doc).encode()
    with pytest.raises(AssertionError):
        test_every_planned_cable_among_the_labs_devices_is_a_link({"fattree-2to1": files})


# netlab's parser -------------------------------------------------------------------------------

def _write(files: dict[str, bytes], out: Path) -> None:
    for rel, data in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_bytes(data)


def netlab_create(topology_dir: Path) -> subprocess.CompletedProcess:
    """`netlab create`: netlab's parser and transformation, writing clab.yml and Ansible's files
    into the directory; it starts nothing."""
    return subprocess.run([str(NETLAB), "create", "-q"], cwd=topology_dir, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "HOME": str(topology_dir)})


# one EOS, one SONiC, one NVUE golden and a multi-platform one (SONiC and EOS fabrics in one lab)
# budgets small enough that each takes netlab a few seconds (netlab's time grows with the links)
NETLAB_CASES = {"roce-2node": {"max_switches": 6, "max_nodes": 2}, "fattree-2to1": {"max_switches": 3, "max_nodes": 1},
                "spectrumx-518-lossy": {"max_switches": 4, "max_nodes": 1},
                "superpod-cluster": {"max_switches": 8, "max_nodes": 1}}


@pytest.mark.parametrize("case", sorted(NETLAB_CASES))
def test_netlab_parses_the_lab(case: str, tmp_path: Path) -> None:
    files = lab(GOLDEN / case, **NETLAB_CASES[case])  # type: ignore[arg-type]
    _write(files, tmp_path)
    doc = yaml.safe_load(files["netlab/topology.yml"])
    devices = {n["device"] for n in doc["nodes"].values()}
    run = netlab_create(tmp_path / "netlab")
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    made = yaml.safe_load((tmp_path / "netlab" / "clab.yml").read_text())
    assert set(made["topology"]["nodes"]) == set(doc["nodes"])
    assert len(made["topology"]["links"]) == len(doc["links"])
    if case == "superpod-cluster":
        assert {"eos", "sonic", "linux"} <= devices


def test_netlab_rejects_a_broken_topology(tmp_path: Path) -> None:
    files = lab(GOLDEN / "roce-2node", **BUDGET)  # type: ignore[arg-type]
    doc = yaml.safe_load(files["netlab/topology.yml"])
    doc["links"][0]["interfaces"][0]["node"] = "no-such-node"
    files["netlab/topology.yml"] = yaml.safe_dump(doc).encode()
    _write(files, tmp_path)
    run = netlab_create(tmp_path / "netlab")
    assert run.returncode != 0 and "no-such-node" in run.stdout + run.stderr
    assert not (tmp_path / "netlab" / "clab.yml").exists()


# NVIDIA Air ------------------------------------------------------------------------------------

def air_problems(doc: Any) -> list[str]:
    """NVIDIA Air's JSON import format, as its documentation defines it (docs.nvidia.com/dsx-air,
    api-reference/simulations/api-v-3-simulations-import-create: `format` JSON, `content.nodes` a
    map of name to an object whose `os` (a string) is required and `cpu`, `memory`, `storage`
    integers; the Custom Topology guide (CumulusNetworks/docs, content/nvidia-air-v2/
    Custom-Topology.md): `content.links` a list of pairs of {node, interface}, `oob` a flag or an
    object) and its SDK (air_sdk.v2's TopologyFormat keys; the content resolved to a JSON object
    as SimulationEndpointApi.create_from does)."""
    from air_sdk.v2.endpoints.simulations import SimulationEndpointApi, TopologyFormat

    out = []
    if set(doc) - set(TopologyFormat.__annotations__) or doc.get("format") != "JSON":
        out.append(f"top-level keys {sorted(doc)} / format {doc.get('format')!r}")
    content = SimulationEndpointApi._resolve_json_import_format_content(json.dumps(doc.get("content")))
    nodes = content.get("nodes")
    if not isinstance(nodes, dict) or not nodes:
        return [*out, "content.nodes is not a map of nodes"]
    for name, node in nodes.items():
        if not isinstance(node, dict) or not isinstance(node.get("os"), str) or not node["os"]:
            out.append(f"node {name}: no os")
        elif any(not isinstance(node[k], int) for k in ("cpu", "memory", "storage") if k in node):
            out.append(f"node {name}: cpu, memory and storage are integers")
    used: set[tuple[str, str]] = set()
    for i, link in enumerate(content.get("links", [])):
        pair = isinstance(link, list) and len(link) == 2
        if not (pair and all(isinstance(e, dict) and set(e) == {"node", "interface"} for e in link)):
            out.append(f"links[{i}] is not a pair of node and interface")
            continue
        for e in link:
            if e["node"] not in nodes:
                out.append(f"links[{i}]: no node {e['node']}")
            if (e["node"], e["interface"]) in used:
                out.append(f"links[{i}]: {e['node']} {e['interface']} on two links")
            used.add((e["node"], e["interface"]))
    if not isinstance(content.get("oob", False), (bool, dict)):
        out.append("oob is a flag or an object")
    return out


def test_every_golden_air_topology_passes_airs_format(labs: dict[str, dict[str, bytes]]) -> None:
    written = 0
    for case, files in labs.items():
        if "air/topology.json" not in files:  # EOS only: Air has no EOS image, and says why
            assert "no Air topology" in files["air/README.txt"].decode(), case
            continue
        doc = json.loads(files["air/topology.json"])
        assert not air_problems(doc), (case, air_problems(doc)[:3])
        written += 1
        if case == "spectrumx-1su":  # Air keeps Cumulus breakout names
            assert any(e["interface"].startswith("swp") and "s" in e["interface"][3:]
                       for k in doc["content"]["links"] for e in k)
    assert written >= 5


def test_the_air_check_rejects_a_broken_topology(labs: dict[str, dict[str, bytes]]) -> None:
    good = json.loads(labs["spectrumx-1su"]["air/topology.json"])
    for breaks in (lambda d: d["content"]["links"][0][0].update(node="nowhere"),
                   lambda d: d["content"]["nodes"][next(iter(d["content"]["nodes"]))].pop("os"),
                   lambda d: d["content"]["links"].append(d["content"]["links"][0]),
                   lambda d: d.update(format="DOT")):
        doc = json.loads(json.dumps(good))
        breaks(doc)
        assert air_problems(doc), doc.get("format")


# hostile render folders ------------------------------------------------------------------------

def fabgen(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabgen", *map(str, args)], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "COLUMNS": "200"})


def refused(run: subprocess.CompletedProcess, out: Path, *words: str) -> None:
    assert run.returncode == 2, (run.returncode, run.stderr[-1000:])
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    for w in words:
        assert w in run.stderr, (w, run.stderr)
    assert not out.exists() and not list(out.parent.glob(f".{out.name}*"))


def _copy(tmp_path: Path, case: str, rel: str, edit: Any, relist: bool) -> Path:
    src = tmp_path / case
    shutil.copytree(GOLDEN / case, src)
    (src / rel).write_text(edit((src / rel).read_text()))
    if relist:  # an editor who updates the manifest too
        doc = json.loads((src / "manifest.json").read_text())
        data = (src / rel).read_bytes()
        next(e for e in doc["files"] if e["path"] == rel).update(sha256=hashlib.sha256(data).hexdigest(),
                                                                   bytes=len(data))
        (src / "manifest.json").write_text(json.dumps(doc))
    return src


def test_an_edited_render_is_refused_unless_trusted(tmp_path: Path) -> None:
    rel = "roce/switches/roce-leaf01.cfg"
    src = _copy(tmp_path, "roce-2node", rel, lambda t: t.replace("! generated by fabgen", "! edited by hand", 1),
                relist=False)
    out = tmp_path / "out"
    refused(fabgen("lab", src, "-o", out), out, "manifest.json", rel, "--trust-edited")
    ok = fabgen("lab", src, "-o", out, "--trust-edited")
    assert ok.returncode == 0, ok.stderr
    text = next((out / "containerlab").glob("*.clab.yml")).read_text()
    assert "--trust-edited" in text.split("name:")[0] and rel in text.split("name:")[0]
    assert (out / "containerlab" / "configs" / rel).read_bytes() == (src / rel).read_bytes()


FORGED = {  # a name from the render that would end a YAML comment, add a node, or run a command
    "device name with a newline": ("roce/cabling.csv",
                                   lambda t: t.replace("gpu01,mlx5_0", '"gpu01\n  evil:",mlx5_0', 1), "cabling.csv"),
    "port that is a second endpoint": ("roce/cabling.csv",
                                       lambda t: t.replace("Ethernet1/1", "Ethernet1/1:gpu02:eth1", 1), "cabling.csv"),
    "netplan address into an exec line": ("hosts/gpu01/netplan.yaml",
                                          lambda t: t.replace("- 10.8.0.1/31", '- "10.8.0.1/31; touch x"', 1),
                                          "netplan.yaml"),
    "cluster name that breaks out of the header": ("report.json",
                                                   lambda t: t.replace('"cluster": "lab"', '"cluster": "lab\\nx: 1"'),
                                                   "cluster"),
}


@pytest.mark.parametrize("case", sorted(FORGED))
def test_forged_names_are_refused(case: str, tmp_path: Path) -> None:
    rel, edit, word = FORGED[case]
    src = _copy(tmp_path, "roce-2node", rel, edit, relist=True)
    out = tmp_path / "out"
    refused(fabgen("lab", src, "-o", out), out, word)


def test_a_render_without_a_routed_fabric_and_an_existing_output_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    refused(fabgen("lab", GOLDEN / "ib-3tier", "-o", out), out, "no routed RoCE or Spectrum-X fabric")
    out.mkdir()
    run = fabgen("lab", GOLDEN / "roce-2node", "-o", out)
    assert run.returncode == 2 and "exists" in run.stderr and not any(out.iterdir())
    with pytest.raises(BadInput):
        lab(GOLDEN / "gb300-northsouth")


def test_the_lab_is_the_same_to_the_byte_each_time(labs: dict[str, dict[str, bytes]]) -> None:
    assert lab(GOLDEN / "fattree-2to1", **BUDGET) == labs["fattree-2to1"]  # type: ignore[arg-type]
