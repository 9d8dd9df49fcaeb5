"""Kubernetes topology labels and Kueue objects: valid for Kubernetes (kubernetes-validate, the
label syntax of apimachinery), each node labelled with the groups its cabling reaches, and the
Kueue Topology's levels nested coarsest first."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from readback import read_cabling

from conftest import INVENTORIES
from fabgen.pipeline import render_to

# Kubernetes label syntax (k8s.io/apimachinery/pkg/util/validation: IsQualifiedName, IsValidLabelValue)
NAME = r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
# Kueue's TopologyLevel.nodeLabel pattern (apis/kueue/v1beta2/topology_types.go, kubebuilder Pattern)
KUEUE_NODE_LABEL = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$")
KUBERNETES_VALIDATE = Path(sys.executable).parent / "kubernetes-validate"


def valid_label(key: str, value: str) -> bool:
    prefix, _, name = key.rpartition("/")
    key_ok = (not prefix or (len(prefix) <= 253 and re.fullmatch(DNS_SUBDOMAIN, prefix))) and \
        len(name) <= 63 and re.fullmatch(NAME, name)
    return bool(key_ok) and len(value) <= 63 and (value == "" or bool(re.fullmatch(NAME, value)))


def load(out: Path) -> tuple[list[dict], list[dict]]:
    nodes = [d for d in yaml.safe_load_all((out / "kubernetes" / "node-labels.yaml").read_text()) if d]
    kueue = [d for d in yaml.safe_load_all((out / "kubernetes" / "kueue.yaml").read_text()) if d]
    return nodes, kueue


def kubernetes_validate(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(KUBERNETES_VALIDATE), "--strict", str(path)], capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize("case,fabric", [("superpod-4su", "compute"), ("ib-3tier", "ib"),
                                         ("fattree-2to1", "fabric"), ("roce-3tier", "eth"),
                                         ("gb300-nvl72", "compute"), ("b300-spectrumx-2plane", "sx-plane1"),
                                         ("gb200-superpod-2su", "compute"), ("gb300-spectrumx-2plane", "sx-plane1")])
def test_labels_follow_the_cabling_and_kubernetes_accepts_them(case: str, fabric: str, tmp_path: Path) -> None:
    render_to(INVENTORIES / f"{case}.yaml", tmp_path)
    check_labels(tmp_path, fabric)


UNSEEN = {  # clusters no example has: model, count, kind, platform, switch, topology, extra fabric keys
    "nvl72-rail": ("gb200-nvl72", 72, "infiniband", "opensm", "qm9700", "rail-optimized", ""),
    "nvl72-3tier": ("gb300-nvl72", 108, "infiniband", "ufm", "q3400", "rail-optimized", "tiers: 3"),
    "nvl72-groups": ("gb200-nvl72", 216, "infiniband", "opensm", "qm9700", "rail-optimized", "scalable_unit: 72"),
    "planes-fattree-3tier": ("dgx-b300", 48, "roce", "eos", "arista-7060x5", "fat-tree", "{planes: 2, tiers: 3}"),
    "planes4-rail": ("dgx-b300", 40, "spectrum-x", "nvue", "sn5600", "rail-optimized", "{planes: 4}"),
}


@pytest.mark.parametrize("shape", sorted(UNSEEN))
def test_unseen_planes_and_nvl72_labels_follow_the_cabling(shape: str, tmp_path: Path) -> None:
    """Racks and planes in clusters no example has: the labels name the switches the cabling
    reaches (on a plane fabric, the first plane's, named after the fabric), the rack is the
    accelerator domain, Kubernetes and Kueue's rules accept them."""
    model, count, kind, platform, switch, topology, extra = UNSEEN[shape]
    keys = extra.strip("{}")
    inv = tmp_path / "inv.yaml"
    inv.write_text(f"version: 1\ncluster: u\nnode_groups:\n  - {{name: n, model: {model}, count: {count}}}\n"
                   f"fabrics:\n  - {{name: f, kind: {kind}, platform: {platform}, switch_model: {switch}, "
                   f"topology: {topology}, node_groups: [n]{', ' + keys if keys else ''}}}\n")
    render_to(inv, tmp_path / "out")
    planes = "planes" in keys
    check_labels(tmp_path / "out", "f-plane1" if planes else "f")
    nodes, _ = load(tmp_path / "out")
    domains = {n["metadata"]["labels"].get("accelerator.topograph.run/domain") for n in nodes}
    assert domains == ({None} if model == "dgx-b300" else {f"n-rack{r:04d}" for r in range(1, count // 18 + 1)})


def check_labels(tmp_path: Path, fabric: str) -> None:
    run = kubernetes_validate(tmp_path / "kubernetes" / "node-labels.yaml")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    nodes, kueue = load(tmp_path)
    cabling = read_cabling(tmp_path, fabric)
    leaves_of: dict[str, set[str]] = {}
    uplinks: dict[str, set[str]] = {}
    for r in cabling:
        if r["tier"] == "node-leaf":
            leaves_of.setdefault(r["a_device"], set()).add(r["z_device"])
        elif r["tier"] == "leaf-spine":
            uplinks.setdefault(r["a_device"], set()).add(r["z_device"])
    labelled = {n["metadata"]["name"]: n["metadata"]["labels"] for n in nodes}
    # a multi-plane fabric's units and pods are named after the fabric (its planes are cabled alike);
    # a fat-tree node's tier 0 is its leaf on the first plane
    parent = re.sub(r"-plane\d+$", "", fabric)
    raw_leaves = leaves_of
    if parent != fabric:
        leaves_of = {n: {leaf.replace(fabric, parent, 1) for leaf in ls} for n, ls in leaves_of.items()}
        uplinks = {leaf.replace(fabric, parent, 1): {sp.replace(fabric, parent, 1) for sp in sps}
                   for leaf, sps in uplinks.items()}
    assert set(labelled) == set(leaves_of), "every compute node labelled once"
    for node, labels in labelled.items():
        assert all(valid_label(k, v) for k, v in labels.items()), labels
        tier0 = labels["fabric.topograph.run/tier-0"]
        group = re.fullmatch(r"(.*-su\d+)-leaf(\d+)", tier0)
        if group:  # spine-leaf groups: the node's leaf in its unit's group of every rail, the same one
            assert all(re.fullmatch(rf"{group[1]}-rail\d+-leaf{group[2]}", leaf) for leaf in leaves_of[node]), \
                (node, tier0)
        elif "-su" in tier0:  # rail-optimized: every rail leaf of the node belongs to its unit
            assert all(leaf.startswith(tier0 + "-") for leaf in leaves_of[node]), (node, tier0)
        else:  # fat-tree: a leaf the node is cabled to
            assert tier0 in raw_leaves[node]
        if "fabric.topograph.run/tier-2" in labels:  # three tiers: the pod of the spines its leaves reach
            pod = labels["fabric.topograph.run/tier-1"]
            assert all(sp.startswith(pod + "-") for leaf in leaves_of[node] for sp in uplinks[leaf]), (node, pod)
            assert labels["fabric.topograph.run/tier-2"] == parent
        assert labels["fabgen/fabric"] == parent
    check_kueue(kueue, labelled)
    with open(tmp_path / "kubernetes" / "node-labels.csv", newline="") as fh:
        rows = {(r["node"], r["label"], r["value"]) for r in csv.DictReader(fh)}
    assert rows == {(n, k, v) for n, labels in labelled.items() for k, v in labels.items()}


def check_kueue(kueue: list[dict], labelled: dict[str, dict[str, str]]) -> None:
    """Field names of Kueue's API (v1beta2 Topology and ResourceFlavor) and what its validation
    rules require: levels unique, at most 16, hostname only last; a flavor with a topology has
    a node label. Levels must nest: nodes sharing a value at one level share the coarser ones."""
    topologies = {d["metadata"]["name"]: d for d in kueue if d["kind"] == "Topology"}
    flavors = [d for d in kueue if d["kind"] == "ResourceFlavor"]
    assert topologies and len(flavors) == len(topologies)
    for t in topologies.values():
        assert t["apiVersion"] == "kueue.x-k8s.io/v1beta2" and set(t["spec"]) == {"levels"}
        levels = [lv["nodeLabel"] for lv in t["spec"]["levels"]]
        assert all(set(lv) == {"nodeLabel"} for lv in t["spec"]["levels"])
        assert 1 <= len(levels) <= 16 and len(set(levels)) == len(levels)
        assert levels[-1] == "kubernetes.io/hostname" and "kubernetes.io/hostname" not in levels[:-1]
        assert all(re.fullmatch(KUEUE_NODE_LABEL, key) and len(key) <= 316 for key in levels)
        for coarse, fine in zip(levels, levels[1:-1]):
            parent: dict[str, str] = {}
            for labels in labelled.values():
                assert parent.setdefault(labels[fine], labels[coarse]) == labels[coarse], (coarse, fine)
    for f in flavors:
        assert set(f["spec"]) == {"nodeLabels", "topologyName"} and f["spec"]["topologyName"] in topologies
        assert f["spec"]["nodeLabels"], "Kueue: at least one nodeLabel is required when topology is set"
        selected = [n for n, labels in labelled.items()
                    if all(labels.get(k) == v for k, v in f["spec"]["nodeLabels"].items())]
        assert selected, "the flavor selects the fabric's nodes"


def test_legacy_label_keys_on_request(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text((INVENTORIES / "ib-3tier.yaml").read_text() + "kubernetes:\n  label_keys: legacy\n")
    render_to(inv, tmp_path / "out")
    nodes, kueue = load(tmp_path / "out")
    keys = set(nodes[0]["metadata"]["labels"])
    assert keys == {"network.topology.nvidia.com/leaf", "network.topology.nvidia.com/spine",
                    "network.topology.nvidia.com/core", "fabgen/fabric"}
    levels = [lv["nodeLabel"] for lv in kueue[0]["spec"]["levels"]]
    assert levels == ["network.topology.nvidia.com/core", "network.topology.nvidia.com/spine",
                      "network.topology.nvidia.com/leaf", "kubernetes.io/hostname"]


def test_long_values_are_hashed_as_topograph_does() -> None:
    from fabgen.targets.kubernetes import label_value

    assert label_value("a") == "a" and label_value("x" * 63) == "x" * 63
    # FNV-1a 64 of "a" is 0xaf63dc4c8601ec8c (the FNV reference test vector)
    long = "a" * 64
    h = 0xCBF29CE484222325
    for b in long.encode():
        h = ((h ^ b) * 0x100000001B3) % 2 ** 64
    assert label_value(long) == f"x{h:x}" and valid_label("k", label_value(long))
    h1 = (0xCBF29CE484222325 ^ ord("a")) * 0x100000001B3 % 2 ** 64
    assert h1 == 0xAF63DC4C8601EC8C


def test_the_checks_reject_broken_labels(tmp_path: Path) -> None:
    render_to(INVENTORIES / "roce-2node.yaml", tmp_path)
    path = tmp_path / "kubernetes" / "node-labels.yaml"
    broken = tmp_path / "broken.yaml"
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    docs[0]["metadata"]["labels"] = ["not", "a", "map"]
    broken.write_text(yaml.safe_dump_all(docs))
    run = kubernetes_validate(broken)
    assert run.returncode != 0 and "is not of type 'object'" in run.stdout + run.stderr
    assert not valid_label("fabric.topograph.run/tier-0", "-starts-with-a-dash")
    assert not valid_label("Bad_Prefix.example/x", "v") and not valid_label("k", "v" * 64)
    shutil.rmtree(tmp_path / "kubernetes")
