"""Estimates, never measurements: all-reduce bandwidth and time per option, and what each kind needs.

Bus bandwidth (nccl-tests' `busbw`, the figure that compares across GPU counts) of a ring
all-reduce whose traffic leaves the node:

    busbw per GPU = link speed / 8 x NICs per GPU x link efficiency x fabric efficiency
                    / (leaf oversubscription x spine oversubscription)

* link efficiency 0.94: nccl-tests doc/PERFORMANCE.md expects 46-48 GB/s of bus bandwidth
  per 400G NDR NIC (47 / 50).
* fabric efficiency, only where traffic crosses a spine layer (one switch has no paths to
  choose between, so 1.0 there): InfiniBand 1.0 (the nccl-tests figure is measured across
  InfiniBand fabrics with their routing); Spectrum-X 0.95 and standard RoCE with static
  ECMP hashing 0.60, NVIDIA's figures for xAI Colossus ("95% data throughput" with
  Spectrum-X congestion control against "60%" for standard Ethernet with flow collisions;
  NVIDIA newsroom, 28 Oct 2024). These are a vendor's claims at one scale; `--efficiency
  KIND=VALUE` replaces any of them.
* oversubscription: a ring that crosses leaves gets each leaf's uplink share.

On nodes whose GPUs share NVLink, nccl-tests prints the node's figure (GPUs per node times the
per-GPU one: about 376 GB/s for a DGX H100 on NDR) and the step time follows from it:

    all-reduce seconds = bytes x 2(n-1)/n / (busbw per node x 1e9),  n = GPUs in the fabric

With SHARP (InfiniBand, NCCL's CollNet or NVLS with SHARP) the switches reduce, every NIC sends
and receives the data once, and the 2(n-1)/n factor drops to 1: shown as its own figure.

Hops: switches a packet crosses between two GPUs of different units (or leaves): one switch,
leaf-spine-leaf, or leaf-spine-core-spine-leaf across pods.
"""

from __future__ import annotations

from typing import Any

LINK_EFFICIENCY = 0.94
FABRIC_EFFICIENCY = {"infiniband": 1.0, "spectrum-x": 0.95, "roce": 0.60}
SOURCES = {
    "link_efficiency": "NVIDIA/nccl-tests doc/PERFORMANCE.md: 46-48 GB/s bus bandwidth per 400G NDR NIC",
    "fabric_efficiency": "NVIDIA newsroom, 2024-10-28, xAI Colossus: Spectrum-X 95% data throughput, standard "
                         "Ethernet 60% (vendor claims); InfiniBand: the nccl-tests figure above",
}

# What running each kind takes; "only this" in the output is what the other options do not need.
# Sources: the SM embedded in the switch does no adaptive routing or SHARP (MLNX-OS manual,
# "Subnet Manager"), hence UFM or a host OpenSM; Quantum-2 SHARPv3; Spectrum-X adaptive routing
# needs the SuperNIC to put packets back in order (Cumulus Linux 5.14, "RoCE", "Adaptive Routing").
NEEDS = {
    "infiniband": ("subnet manager on a host (UFM or OpenSM)", "SHARP in-network reduction (optional)",
                   "adaptive routing by the subnet manager"),
    "roce": ("PFC and ECN tuned alike on every switch and NIC", "BGP underlay", "ECMP hashing (no adaptive routing)"),
    "spectrum-x": ("PFC and ECN tuned alike on every switch and NIC", "BGP underlay",
                   "adaptive routing on the switches", "SuperNICs that reorder packets (BlueField-3 or ConnectX-8)"),
}


# How each kind keeps a link lossless and picks paths: what shapes its latency under load
# (a class, not a number: fabgen has no measured per-hop latency to cite for every part).
FLOW = {"infiniband": "credit-based link flow control (no pause frames), adaptive routing",
        "roce": "PFC pause frames and ECN, static ECMP paths",
        "spectrum-x": "PFC pause frames and ECN, adaptive routing"}


def latency_class(kind: str, plan: Any) -> str:
    n = hops(plan)
    return f"{n} switch hop{'s' if n != 1 else ''}; {FLOW[kind]}"


def hops(plan: Any) -> int:
    """Switches between two GPUs of different units (leaves) at the farthest."""
    if plan.tiers == 1:
        return 1
    if plan.tiers == 3 and plan.pods > 1:
        return 5
    return 3


def performance(option: Any, gpus_per_node: int, nics_per_node: int, message_bytes: float,
                efficiency: dict[str, float]) -> dict[str, Any]:
    """busbw per GPU and per node, and one all-reduce of `message_bytes` over the fabric's GPUs."""
    s, plan = option.summary, option.plan
    if not gpus_per_node or not s.gpus:
        return {"latency_class": latency_class(option.choice.kind, plan), "busbw_per_gpu_gbs": None,
                "busbw_per_node_gbs": None, "allreduce_seconds": None, "allreduce_seconds_sharp": None}
    fabric = efficiency[option.choice.kind] if plan.tiers >= 2 else 1.0
    over = (s.oversubscription["leaf"] * s.oversubscription["spine"]) if plan.tiers >= 2 else 1.0
    per_gpu = plan.speed / 8 * nics_per_node / gpus_per_node * efficiency["link"] * fabric / over
    per_node = per_gpu * gpus_per_node
    n = s.gpus
    ring = message_bytes * 2 * (n - 1) / n / (per_node * 1e9) if n > 1 else 0.0
    sharp = message_bytes / (per_node * 1e9) if option.choice.kind == "infiniband" and n > 1 else None
    return {"latency_class": latency_class(option.choice.kind, plan), "busbw_per_gpu_gbs": round(per_gpu, 2),
            "busbw_per_node_gbs": round(per_node, 1), "allreduce_seconds": round(ring, 6),
            "allreduce_seconds_sharp": None if sharp is None else round(sharp, 6)}


def needs(kinds: list[str]) -> dict[str, dict[str, list[str]]]:
    """Per kind: everything it needs, and what no other compared kind needs."""
    out = {}
    for kind in kinds:
        others = set().union(*(NEEDS[k] for k in kinds if k != kind)) if len(set(kinds)) > 1 else set()
        out[kind] = {"all": list(NEEDS[kind]), "only_this": [n for n in NEEDS[kind] if n not in others]}
    return out
