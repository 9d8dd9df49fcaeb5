"""Allocate identifiers: InfiniBand GUIDs (and, for Ethernet targets, addresses and ASNs).

Synthetic GUIDs live in a locally administered EUI-64 space (first octet 0xFA has the
'local' bit set, the multicast bit clear), so they can never collide with a vendor's
real GUIDs; the report warns that they must be replaced before deployment. Layout:

    0xFAB0 | fabric number (8 bits) | type (8 bits: 01 switch, 02 channel adapter) | serial (32 bits)

Serials follow the builder's natural order, so the same inventory gives the same GUIDs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabgen.topology.model import Fabric

GUID_PREFIX = 0xFAB0
TYPE_SWITCH, TYPE_CA = 0x01, 0x02


@dataclass(frozen=True)
class Allocation:
    guids: dict[str, int] = field(default_factory=dict)  # switch name or 'host/rdma' -> node GUID
    synthetic_guids: bool = False


def synthetic_guid(fabric_no: int, kind: int, serial: int) -> int:
    return (GUID_PREFIX << 48) | ((fabric_no & 0xFF) << 40) | (kind << 32) | serial


def allocate(fabric: Fabric, fabric_no: int, guid_map: dict[tuple[str, str], int] | None = None) -> Allocation:
    """Real GUIDs from the inventory's GUID map where given, synthetic ones elsewhere."""
    if fabric.spec.kind != "infiniband":
        return Allocation()
    real = guid_map or {}
    guids: dict[str, int] = {}
    synthetic = 0
    for i, s in enumerate(fabric.switches):
        g = real.get((s.name, "0"))
        if g is None:
            g, synthetic = synthetic_guid(fabric_no, TYPE_SWITCH, i + 1), synthetic + 1
        guids[s.name] = g
    serial = 0
    for h in fabric.hosts:
        for nic in h.model.nics:
            serial += 1
            g = real.get((h.name, nic.rdma))
            if g is None:
                g, synthetic = synthetic_guid(fabric_no, TYPE_CA, serial), synthetic + 1
            guids[f"{h.name}/{nic.rdma}"] = g
    if synthetic:
        fabric.warnings.append(
            f"{synthetic} of {len(guids)} InfiniBand GUIDs are synthetic (0xfab0...): give the real ones in a "
            "guid_map before deployment, or the root and compute-node GUID files will not match the fabric"
        )
    return Allocation(guids, synthetic_guids=bool(synthetic))
