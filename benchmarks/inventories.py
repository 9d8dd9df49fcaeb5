"""Synthetic inventories for the scale benchmark: every fabric kind at 1k to 64k GPUs, and the
2026 parts at 128k (`--sizes 131072 --kinds ib-xdr sx-4plane`).

DGX H100 / B200 / B300 nodes (8 GPUs, 8 NICs); the switch models of each platform. Sizes beyond
what a kind's topology allows are skipped (the sizing rules say why).
"""

from __future__ import annotations

SIZES = (1024, 4096, 16384, 32768, 65536)  # GPUs
KINDS = {
    # name: (kind, platform, topology, switch model, node model)
    "ib-rail": ("infiniband", "ufm", "rail-optimized", "qm9700", "dgx-h100"),
    "eos-fattree": ("roce", "eos", "fat-tree", "arista-7060x5", "dgx-h100"),
    "eos-rail": ("roce", "eos", "rail-optimized", "arista-7060x5", "dgx-h100"),
    "sonic-fattree": ("roce", "sonic", "fat-tree", "arista-7060x6-64pe-b", "dgx-h100"),
    "sonic-rail": ("roce", "sonic", "rail-optimized", "sn5600-sonic", "dgx-h100"),
    "spectrum-x": ("spectrum-x", "nvue", "rail-optimized", "sn5600", "dgx-b200"),
    # 2026: XDR InfiniBand on Quantum-X800, and Spectrum-X with four planes (each ConnectX-8
    # 800G as 4 x 200G, SN5600 as 256 x 200G)
    "ib-xdr": ("infiniband", "ufm", "rail-optimized", "q3400", "dgx-b300"),
    "sx-4plane": ("spectrum-x", "nvue", "rail-optimized", "sn5600", "dgx-b300"),
    # the emulation's whole-fabric case: EOS rail-optimized pinned to three tiers, so a few hundred
    # GPUs make a few hundred routers (benchmarks/emulate.py)
    "eos-rail3": ("roce", "eos", "rail-optimized", "arista-7060x5", "dgx-h100"),
    # the converged north-south fabric (docs/northsouth.md): each DGX's two storage ports bonded to
    # a leaf pair, EVPN all-active multihoming; beside AVD (benchmarks/avd.py), its EVPN design
    "eos-northsouth": ("roce", "eos", "rail-optimized", "arista-7060x5", "dgx-h100"),
    # the GPU fabric as an EVPN overlay (host_addressing evpn, docs/planes.md) on EOS: beside AVD's
    # l3ls-evpn with the GPU ports as access ports of one VLAN (benchmarks/avd.py)
    "eos-overlay": ("roce", "eos", "rail-optimized", "arista-7060x5", "dgx-h100"),
    # the same with a VLAN a rail (ethernet.overlay.vlans rail, NVIDIA's output at 993eed6): beside AVD's
    # l3ls-evpn with one SVI a rail in the one GPU VRF
    "eos-overlay-rail": ("roce", "eos", "rail-optimized", "arista-7060x5", "dgx-h100"),
}
ROLES = {"eos-northsouth": "northsouth"}
TIERS = {"eos-rail3": 3}
PLANES = {"sx-4plane": 4}
# four planes at 128k GPUs need a million host /31s and as many switch-link ones
POOLS = {"sx-4plane": """    ethernet:
      pools: {loopbacks: 10.255.0.0/16, links: 10.64.0.0/10, hosts: 10.128.0.0/10}
""", "eos-overlay": """    ethernet:
      host_addressing: evpn
      overlay: {vlan: 900, vni: 10900, vrf: GPU, l3vni: 10003}
      pools: {hosts: 10.128.0.0/16}
""", "eos-overlay-rail": """    ethernet:
      host_addressing: evpn
      overlay: {vlan: 900, vni: 10900, vrf: GPU, l3vni: 10003, vlans: rail}
      pools: {hosts: 10.128.0.0/16}
"""}


# Ethernet switch configs carry their management plane, as a deployable config must; a /17
# holds the switches of the largest case (four planes at 128k GPUs) and its gateway.
MANAGEMENT = """    management:
      prefix: 10.192.0.0/17
      gateway: 10.192.0.1
      ntp: [10.191.0.1, 10.191.0.2]
      dns: [10.191.0.3]
      syslog: [10.191.0.4]
"""


def inventory(name: str, gpus: int) -> str:
    kind, platform, topology, switch, model = KINDS[name]
    nodes = gpus // 8
    management = MANAGEMENT if kind != "infiniband" else ""
    role = f"    role: {ROLES[name]}" + chr(10) if name in ROLES else ""
    tiers = f"    tiers: {TIERS[name]}" + chr(10) if name in TIERS else ""
    return f"""# fabgen benchmark: {name}, {gpus} GPUs
version: 1
cluster: bench-{name}-{gpus}
node_groups:
  - {{name: gpu, model: {model}, count: {nodes}, hostname: "gpu{{n:05d}}"}}
fabrics:
  - name: f
    kind: {kind}
    platform: {platform}
    topology: {topology}
    switch_model: {switch}
    node_groups: [gpu]
    planes: {PLANES.get(name, 1)}
{role}{tiers}{management}{POOLS.get(name, "")}"""
