"""Kubernetes: the topology labels GPU schedulers read, and Kueue's Topology and ResourceFlavor,
from the cabling plan instead of a discovery run after the fact (docs/kubernetes.md).

Files under OUT/kubernetes/:
* node-labels.yaml: one Node object per compute node with only metadata.name and labels, for
  `kubectl apply --server-side --field-manager=fabgen`; node-labels.csv: node,label,value.
* kueue.yaml: a kueue.x-k8s.io/v1beta2 Topology per fabric (the storage version of Kueue 0.19,
  apis/kueue/v1beta2/topology_types.go) whose levels are the label keys coarsest first and
  `kubernetes.io/hostname` last, and a ResourceFlavor selecting the fabric's nodes
  (`fabgen/fabric`) that names it in spec.topologyName.

Label keys (NVIDIA topograph, pkg/topology/topology.go at v1.0.0): `fabric.topograph.run/tier-N`,
tier 0 closest to the node. The groups per tier are `intent/placement.py`'s (the unit or leaf,
the pod with three tiers, the fabric), the same Slurm's topology uses. A DGX node is its own
NVLink domain, so it has no `accelerator.topograph.run/domain`; a tray of an NVL72 rack has its
rack there, and the rack is a Kueue level between tier 0 and the hostname when racks nest in
tier 0 (rail-optimized units hold whole racks; a fat-tree rack spans leaves). With
`kubernetes.label_keys: legacy` the keys are topograph 0.x's
(pkg/engines/k8s/labeler.go at v0.5.0): `network.topology.nvidia.com/leaf`, `.../spine`,
`.../core` for tiers 0, 1 and 2. Values longer than Kubernetes' 63 characters are replaced as
topograph does (its checkLabel): `x` and the FNV-1a 64-bit hash in hex.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fabgen.context import Context
from fabgen.formats import csvout, yamlout
from fabgen.intent.placement import node_groups, racks
from fabgen.targets.base import CLUSTER, Target

TIER_PREFIX = "fabric.topograph.run/tier-"
LEGACY = ("network.topology.nvidia.com/leaf", "network.topology.nvidia.com/spine",
          "network.topology.nvidia.com/core")
FABRIC_LABEL = "fabgen/fabric"
# The NVLink domain (an NVL72 rack): topograph's accelerator label (docs/k8s.md at v1.x), and
# topograph 0.x's for `label_keys: legacy`.
ACCELERATOR = {"topograph": "accelerator.topograph.run/domain", "legacy": "network.topology.nvidia.com/accelerator"}
HOSTNAME = "kubernetes.io/hostname"
KUEUE_API = "kueue.x-k8s.io/v1beta2"


def label_value(text: str) -> str:
    """A valid label value: as is up to 63 characters, else 'x' + FNV-1a 64 of it in hex (topograph)."""
    if len(text) <= 63:
        return text
    h = 0xCBF29CE484222325
    for byte in text.encode():
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"x{h:x}"


def tier_keys(style: str, tiers: int) -> list[str]:
    """Label keys for tiers 0..tiers-1, closest to the node first."""
    if style == "legacy":
        return list(LEGACY[:tiers])
    return [f"{TIER_PREFIX}{n}" for n in range(tiers)]


def structure(contexts: list[Context], structured: list | None = None) -> dict[str, Any]:
    style = contexts[0].kubernetes.label_keys if contexts and contexts[0].kubernetes else "topograph"
    nodes: list[dict[str, Any]] = []
    topologies: list[dict[str, Any]] = []
    for ctx in contexts:
        groups = node_groups(ctx)
        if not groups or ctx.fabric.plane > 0 or ctx.fabric.spec.role != "compute":
            continue  # a node's planes share its labels (the first plane's); other roles place no jobs
        depth = len(next(iter(groups.values())))
        keys = tier_keys(style, depth)
        domains = racks(ctx)
        rack = {node: name for name, nodes in domains.items() for node in nodes}
        domain_key = ACCELERATOR[style]
        for node, levels in groups.items():
            labels = {key: label_value(value) for key, value in zip(keys, levels)}
            if node in rack:
                labels[domain_key] = label_value(rack[node])
            labels[FABRIC_LABEL] = label_value(ctx.fabric.inventory_name)
            nodes.append({"name": node, "labels": labels})
        # Kueue needs each level's domains inside one domain of the level above: racks sit inside
        # a rail-optimized unit (units hold whole racks); a fat-tree rack spans leaves and is no level
        nested = domains and all(len({groups[n][0] for n in members}) == 1 for members in domains.values())
        topologies.append({"name": ctx.fabric.inventory_name,
                           "levels": [*reversed(keys), *([domain_key] if nested else []), HOSTNAME]})
    return {"style": style, "nodes": nodes, "topologies": topologies}


def _manifests(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": n["name"], "labels": n["labels"]}}
            for n in data["nodes"]]


def _kueue(data: dict[str, Any]) -> list[dict[str, Any]]:
    docs = []
    for t in data["topologies"]:
        docs.append({"apiVersion": KUEUE_API, "kind": "Topology", "metadata": {"name": t["name"]},
                     "spec": {"levels": [{"nodeLabel": key} for key in t["levels"]]}})
        docs.append({"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": {"name": t["name"]},
                     "spec": {"nodeLabels": {FABRIC_LABEL: label_value(t["name"])}, "topologyName": t["name"]}})
    return docs


def _documents(head: str, docs: list[dict[str, Any]]) -> bytes:
    return (head + "".join(f"---\n{yamlout.dump(d)}" for d in docs)).encode()


def render(data: dict[str, Any]) -> Iterable[tuple[str, bytes]]:
    if not data["nodes"]:
        return
    yield "kubernetes/node-labels.yaml", _documents(
        "# Topology labels of the compute nodes; generated by fabgen.\n"
        "# Apply to existing nodes with\n"
        "# kubectl apply --server-side --field-manager=fabgen -f node-labels.yaml\n", _manifests(data))
    yield "kubernetes/node-labels.csv", csvout.dumps(
        ["node", "label", "value"],
        [(n["name"], key, value) for n in data["nodes"] for key, value in n["labels"].items()])
    yield "kubernetes/kueue.yaml", _documents(
        "# Kueue Topology Aware Scheduling: a Topology and a ResourceFlavor per fabric;\n"
        "# generated by fabgen\n",
        _kueue(data))


TARGET = Target("kubernetes", lambda ctx: True, structure, render, scope=CLUSTER, apart=True)
