"""The hardware of an inventory: catalog switch and node models, and those declared inline
(`switch_models`, `node_models`, custom SONiC SKUs), resolved and checked."""

from __future__ import annotations

import re
from collections.abc import Callable

from fabgen.inventory.check_nodes import NETDEV_RULE, netdev_ok
from fabgen.inventory.messages import MAX_FIELD_WIDTH, did_you_mean, format_all, pattern_problem
from fabgen.inventory.state import PORT_RE, SWITCH_PORT, switch_name
from fabgen.spec.catalog import NODES, PLATFORMS_BY_KIND, SWITCHES, Nic, NodeModel, PortMode, SwitchModel
from fabgen.spec.schema import CustomNodeModel, CustomSwitchModel, Inventory


def resolve_models(inv: Inventory, report) -> tuple[dict[str, SwitchModel], dict[str, NodeModel]]:
    switches = dict(SWITCHES)
    nodes = dict(NODES)
    for key, m in inv.switch_models.items():
        switch = _switch_model(key, m, report)
        if switch is not None:
            switches[key] = switch
    for key, n in inv.node_models.items():
        node = _node_model(key, n, report)
        if node is not None:
            nodes[key] = node
    return switches, nodes


def _switch_model(key: str, m: CustomSwitchModel, report: Callable[..., None]) -> SwitchModel | None:
    """An inline switch model, or None with its first problem reported."""
    if key in SWITCHES:
        report(("switch_models", key), f"'{key}' is a catalog model; give the custom model another name",
               key=True)
        return None
    for j, platform in enumerate(m.platforms):
        allowed = [p for k in m.kinds for p in PLATFORMS_BY_KIND[k]]
        if platform not in allowed:
            report(("switch_models", key, "platforms", j),
                   f"'{platform}' is not a platform of {', '.join(m.kinds)} "
                   f"(choose from {', '.join(allowed)}){did_you_mean(platform, allowed)}")
    names, why = _port_names(m)
    if why is not None:
        report(("switch_models", key, "port_name"), f"bad port name pattern: {why}; use fields like "
               "{n} (1-based) or {i} (0-based)")
        return None
    clash = _device_clash(names) if m.kinds != ["infiniband"] else None
    if clash is not None:
        report(("switch_models", key, "port_name"), f"the pattern {clash}: name the ports as the switch does "
               "(swp<n> on Cumulus Linux, Ethernet<n> on EOS and SONiC)")
        return None
    if len(set(names)) != len(names):
        report(("switch_models", key, "port_name"), "the pattern gives the same name to several ports; "
               "include {n} or {i}")
        return None
    cages = -(-m.ports // m.ports_per_cage)
    sku = _custom_sonic(key, m, cages, report)
    if "sonic" in m.platforms and sku is None:
        return None
    return SwitchModel(key, m.vendor, m.part or key, f"custom switch {key}", tuple(m.kinds),
                       tuple(m.platforms), cages, "cage", m.ports_per_cage,
                       (PortMode(m.speed, m.ports_per_cage, m.port_name),), m.transceiver, True, sku,
                       rack_units=m.rack_units)


def _port_names(m: CustomSwitchModel) -> tuple[list[str], str | None]:
    """The ports' names from the model's pattern, or why the pattern cannot be used."""
    fields = ("n", "i", "c", "j", "j0", "lane", "l", "pair", "sub2")
    why = pattern_problem(m.port_name, fields)
    if why is not None:
        return [], why
    names, why = format_all(m.port_name, ({"n": i + 1, "i": i, "c": i // m.ports_per_cage + 1,
                                           "j": i % m.ports_per_cage + 1, "j0": i % m.ports_per_cage,
                                           "lane": i, "l": 1, "pair": 1, "sub2": 1} for i in range(m.ports)),
                            MAX_FIELD_WIDTH)
    if why is None:
        bad = next((n for n in names if not PORT_RE.fullmatch(n)), None)
        if bad is not None:
            why = (f"gives {bad!r}; port names are letters, digits and '/', '_', '.', ':', '-' (they reach "
                   "switch configs and shell scripts)")
    return names, why


def _node_model(key: str, n: CustomNodeModel, report: Callable[..., None]) -> NodeModel | None:
    """An inline node model, or None with its first problem reported."""
    if key in NODES:
        report(("node_models", key), f"'{key}' is a catalog model; give the custom model another name",
               key=True)
        return None
    rdmas = [nic.rdma for nic in n.nics] + [p.rdma for p in n.ports]
    dup = sorted({r for r in rdmas if rdmas.count(r) > 1})
    if dup:
        in_ports = any(p.rdma == dup[0] for p in n.ports)
        report(("node_models", key, "ports" if in_ports else "nics"), f"RDMA device names repeat: {', '.join(dup)}")
        return None
    if not n.nics and not n.ports:
        where = "nics" if "nics" in n.model_fields_set else "ports" if "ports" in n.model_fields_set else None
        report(("node_models", key, where) if where else ("node_models", key),
               "a node model needs compute NICs (nics) or other ports (ports): it has none", key=where is None)
        return None
    bad = n.plane_rdma and pattern_problem(n.plane_rdma, ("k", "rail", "plane"))
    if bad:
        report(("node_models", key, "plane_rdma"), f"bad plane_rdma pattern '{n.plane_rdma}': {bad}")
        return None
    bad_netdevs = [(k, j, x.netdev) for k in ("nics", "ports") for j, x in enumerate(getattr(n, k))
                   if x.netdev is not None and not netdev_ok(x.netdev)]
    if bad_netdevs:
        k, j, name = bad_netdevs[0]
        report(("node_models", key, k, j, "netdev"), f"{name!r} cannot be a port's interface: {NETDEV_RULE}")
        return None
    nics = tuple(Nic(x.rdma, x.netdev or x.rdma, x.label or x.rdma, x.cage or x.rdma, x.speed,
                     netdev_known=x.netdev is not None) for x in n.nics)
    ports = tuple(Nic(x.rdma, x.netdev or x.rdma, x.label or x.rdma,
                      x.cage or ("RJ45" if x.role == "oob" else x.rdma), x.speed, x.role,
                      netdev_known=x.netdev is not None or x.role == "oob") for x in n.ports)
    return NodeModel(key, n.vendor, n.part or key, f"custom node {key}", n.gpus, n.nic_model,
                     n.transceiver, nics, True, n.nvlink_domain, n.plane_rdma, ports,
                     tuple((r, n.nic_model if "nic_model" in n.model_fields_set else f"{r} NIC",
                            n.transceiver) for r in ("storage", "inband", "oob")), rack_units=n.rack_units)


def _device_clash(names: list[str]) -> str | None:
    """An Ethernet switch's ports are network devices beside its bonds, SVIs, bridge, VXLAN device
    and management port: a port named like one of those would be two devices in one config."""
    for name in names:
        what = switch_name(name)
        if what is not None and not re.fullmatch(SWITCH_PORT, name, re.I):
            return f"gives {name!r}, the name of {what} on the switch"
    return None


NEEDED_PROFILES = ("ingress_lossy_profile", "egress_lossy_profile", "egress_lossless_profile")


def _profiles_problem(pools: dict[str, dict[str, str]], profiles: dict[str, dict[str, str]]) -> str | None:
    """Why a custom SKU's buffer profiles cannot be loaded, or None: SONiC needs the profiles fabgen
    refers to, and every profile's pool (a mandatory field of BUFFER_PROFILE) among BUFFER_POOL's
    rows. The message names pools, never an empty list: the unknown ones, and the defined ones where
    a profile names none or none is defined."""
    missing = [p for p in NEEDED_PROFILES if p not in profiles]
    unknown = sorted({row["pool"] for row in profiles.values() if "pool" in row} - set(pools))
    poolless = sorted(name for name, row in profiles.items() if "pool" not in row)
    wants = ([f"define {', '.join(missing)}"] if missing else []) + \
        ([f"use pools that buffer_pools defines (not {', '.join(unknown)})"] if unknown else []) + \
        ([f"each name a pool ({', '.join(poolless)} names none)"] if poolless else [])
    if not wants:
        return None
    defined = f"; buffer_pools defines {', '.join(sorted(pools)) or 'none'}" if poolless or not pools else ""
    return "buffer profiles must " + " and ".join(wants) + defined


def _custom_sonic(key: str, m, cages: int, report):
    """The SonicSku of a custom model that runs SONiC: its identity and buffer tables are the
    user's (from the SKU's files), lanes count from 0 in port order, aliases are the names."""
    from fabgen.spec.sonic_skus import DYNAMIC_BUFFER_ASICS, SonicSku

    if "sonic" not in m.platforms:
        if m.sonic is not None:
            report(("switch_models", key, "sonic"), "the sonic block applies to models that run platform sonic",
                   key=True)
        return None
    if m.sonic is None:
        report(("switch_models", key), "a SONiC switch model names its SKU: add sonic: {hwsku, platform, asic, "
               "buffer_pools, buffer_profiles} from the SKU's files in sonic-buildimage (port_config.ini, "
               "buffers_defaults_t1.j2)")
        return None
    sk = m.sonic
    why = _profiles_problem(sk.buffer_pools, sk.buffer_profiles)
    if why is not None:
        report(("switch_models", key, "sonic", "buffer_profiles"), why)
        return None
    dynamic = sk.asic in DYNAMIC_BUFFER_ASICS
    return SonicSku(hwsku=sk.hwsku, platform=sk.platform, asic=sk.asic,
                    buffer_model="dynamic" if dynamic else "traditional",
                    first_lanes=tuple(c * m.ports_per_cage for c in range(cages)), alias="",
                    extra_ports=(), buffer_pools=dict(sk.buffer_pools), buffer_profiles=dict(sk.buffer_profiles),
                    lossy_queue_profile="egress_lossy_profile",
                    cable_lengths={"node-leaf": "5m", "leaf-spine": "40m", "spine-core": "300m", **sk.cable_lengths},
                    default_cable="5m",
                    dynamic_tables={"DEFAULT_LOSSLESS_BUFFER_PARAMETER": {"AZURE": {"default_dynamic_th": "0"}},
                                    "LOSSLESS_TRAFFIC_PATTERN": {"AZURE": {"mtu": "1024",
                                                                           "small_packet_percentage": "50"}}}
                    if dynamic else {},
                    sources=("the inventory's switch_models." + key + ".sonic",))
