"""One frozen record per switch platform: every fact about a platform that more than one stage
reads, in one place (docs/architecture.md, "Add a switch platform").

Validation reads the kinds a platform serves, its releases and its management VRF; the builder
its management port; the intent layer its interface names and whether its links are numbered;
the review which targets hold one item per switch; emulate the config file it translates; verify
whether the switch runs FRR. A plain data module (no pydantic, no networkx): the readers import
it. tests/test_architecture.py checks that every platform the schema accepts has a record.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Platform:
    """What fabgen knows of one switch platform (or subnet manager, for InfiniBand)."""

    name: str
    kinds: tuple[str, ...]  # the fabric kinds it serves (schema `kind`)
    mgmt_port: str  # the management interface, as the platform names it
    # routed Ethernet platforms: interface names (None where the platform routes nothing)
    loopback: str | None = None
    svi: str | None = None  # the VLAN interface, a format with {vlan}
    unnumbered: bool = False  # switch links run BGP unnumbered: no addresses (docs/decisions.md)
    mgmt_vrf: str | None = None  # the management VRF fabgen writes unless the inventory names one
    fixed_vrf: bool = False  # the platform takes only this name for the management VRF
    keeps_users: bool = False  # accounts live in the Linux user database, not the config
    versions: tuple[str, ...] = ()  # the releases fabgen writes for (none: one release)
    default_version: str | None = None
    config_file: str | None = None  # a switch's config, after `<fabric>/switches/<name>`
    runs_frr: bool = False  # the routing suite is FRR (verify reads its state as FRR's JSON)
    one_item_per_switch: bool = False  # its target's data["switches"] holds one item per switch
    # EVPN all-active multihoming towards bonded hosts: a northsouth fabric (docs/northsouth.md)
    evpn_multihoming: bool = False


PLATFORMS: dict[str, Platform] = {p.name: p for p in (
    # Arista EOS (Management1, Loopback0, VlanN, VRF MGMT by default).
    Platform("eos", kinds=("roce",), mgmt_port="Management1", loopback="Loopback0", svi="Vlan{vlan}",
             mgmt_vrf="MGMT", config_file=".cfg", one_item_per_switch=True, evpn_multihoming=True),
    # SONiC: up/down peer activation from 202505 on (frrcfgd), true/false before; the management
    # VRF is always `mgmt`; accounts live in the Linux user database.
    Platform("sonic", kinds=("roce",), mgmt_port="eth0", loopback="Loopback0", svi="Vlan{vlan}",
             mgmt_vrf="mgmt", fixed_vrf=True, keeps_users=True,
             versions=("202305", "202311", "202405", "202411", "202505", "202511"), default_version="202505",
             config_file="/config_db.json", runs_frr=True, one_item_per_switch=True),
    # Cumulus Linux NVUE: the object model changed at 5.15 (inventory/platform.py); the releases
    # are those its output is validated against with NVIDIA's published object model (nvueschema).
    Platform("nvue", kinds=("spectrum-x", "ethernet"), mgmt_port="eth0", loopback="lo", svi="vlan{vlan}",
             unnumbered=True, mgmt_vrf="mgmt", fixed_vrf=True,
             versions=("5.13", "5.14", "5.15", "5.16", "5.17", "5.18"), default_version="5.16",
             config_file=".nvue.yaml", runs_frr=True, one_item_per_switch=True, evpn_multihoming=True),
    # InfiniBand subnet managers: the managed switches' management port.
    Platform("ufm", kinds=("infiniband",), mgmt_port="mgmt0"),
    Platform("opensm", kinds=("infiniband",), mgmt_port="mgmt0"),
)}

KINDS = ("infiniband", "roce", "spectrum-x", "ethernet")


def platforms_of(kind: str) -> tuple[str, ...]:
    """The platforms a fabric of KIND may name, in the order the records are listed."""
    return tuple(p.name for p in PLATFORMS.values() if kind in p.kinds)


def routed() -> dict[str, Platform]:
    """The platforms whose switches route (an interface name for the loopback)."""
    return {n: p for n, p in PLATFORMS.items() if p.loopback is not None}
