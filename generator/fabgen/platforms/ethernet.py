"""Structured config shared by the Ethernet targets (EOS, SONiC; Spectrum-X reuses it).

Every value that appears on both ends of a link or on host and switch is decided here,
once: the QoS intent (`qos_intent`), each port's address and its peer's, each BGP
session's ASNs. The platform modules only translate this into their syntax, so two
platforms in one fabric (or a switch and a host) cannot disagree.

Decisions:
* DSCP map: the RoCE DSCP goes to the RoCE class, the CNP DSCP to the CNP class, every
  other DSCP to class 0. Only RoCE is no-drop; EOS's default map (DSCP/8) would have put
  DSCP 24-31 into the no-drop class too, and SONiC's stock map puts DSCP 26 in lossy TC1.
* traffic class n uses queue n and priority group n for the lossless class, 0 otherwise.
* every used port (fabric and host-facing) gets the lossless profile: PFC on the RoCE
  priority, ECN on the RoCE queue, strict priority for CNPs, the watchdog.
* unused ports are shut down.
* BGP: eBGP on every switch-to-switch link, one peer group per peer tier (SPINES, LEAVES,
  CORES) carrying BFD; remote ASN per neighbor (leaves have one each). ECMP width is
  the larger of 64 and the device's switch links, so it is never below the uplink count.
  Each switch announces its loopback and its host-facing subnets; the per-peer route
  limit is twice the fabric's prefix count (at least 12,000).
"""

from __future__ import annotations

from typing import Any

from fabgen.addressing import network_of
from fabgen.intent import secret_ref
from fabgen.intent.management import plane as management_plane
from fabgen.inventory.schema import EthernetOptions
from fabgen.platforms import Context

PEER_GROUP = {"leaf": "LEAVES", "spine": "SPINES", "core": "CORES"}
HOST_VLAN = 100  # leaf-subnet mode: the host VLAN of every leaf (locally significant)
MIN_ECMP = 64
MIN_MAX_ROUTES = 12000
QOS_PROFILE = "ROCE_LOSSLESS"


def options(ctx: Context) -> EthernetOptions:
    return ctx.fabric.spec.ethernet or EthernetOptions()


def adaptive_routing(ctx: Context) -> tuple[bool, bool]:
    """(on globally, on the switch-to-switch ports) for a Spectrum-X fabric: on unless the
    inventory turns it off; never on ports faster than Spectrum-4 adapts (800G)."""
    if ctx.fabric.spec.kind != "spectrum-x":
        return False, False
    from fabgen.inventory.ethernet import AR_MAX_SPEED

    eth = options(ctx)
    on = True if eth.adaptive_routing is None else eth.adaptive_routing
    return on, on and ctx.fabric.plan.speed <= AR_MAX_SPEED


def qos_intent(ctx: Context) -> dict[str, Any]:
    """The lossless RoCE intent every switch port and every host of the fabric reads."""
    eth = options(ctx)
    q = eth.qos
    dscp_to_tc = [0] * 64
    dscp_to_tc[q.roce_dscp] = q.roce_priority
    dscp_to_tc[q.cnp_dscp] = q.cnp_priority
    return {
        "roce_dscp": q.roce_dscp, "roce_priority": q.roce_priority,
        "cnp_dscp": q.cnp_dscp, "cnp_priority": q.cnp_priority,
        "no_drop": [q.roce_priority],
        "dscp_to_tc": dscp_to_tc,
        "tc_to_queue": list(range(8)),
        "tc_to_pg": [tc if tc == q.roce_priority else 0 for tc in range(8)],
        "roce_bandwidth_percent": q.roce_bandwidth_percent,
        "ecn": {"min_kbytes": q.ecn.min_threshold_kbytes, "max_kbytes": q.ecn.max_threshold_kbytes,
                # KB as NVIDIA counts it (150 KB = 150,000 B in Cumulus's RoCE profile): every
                # target is given bytes, so no two platforms round differently.
                "min_bytes": q.ecn.min_threshold_kbytes * 1000, "max_bytes": q.ecn.max_threshold_kbytes * 1000,
                "probability": q.ecn.probability},
        "watchdog": {"enabled": q.pfc_watchdog.enabled, "detection_ms": q.pfc_watchdog.detection_ms,
                     "restoration_ms": q.pfc_watchdog.restoration_ms,
                     "poll_interval_ms": q.pfc_watchdog.poll_interval_ms, "action": q.pfc_watchdog.action},
        "mode": q.mode,
        "mtu": eth.mtu,
        "host_mtu": eth.host_mtu,
        "host_tos": q.roce_dscp * 4 + 2,  # DSCP << 2 with ECT(0): what NCCL_IB_TC carries
    }


def _management(mgmt: dict[str, Any] | None, address: str | None) -> dict[str, Any] | None:
    """One switch's management plane: the fabric's settings (shared) and its own address."""
    if mgmt is None or address is None:
        return None
    return {"address": address, **mgmt}


def switch_configs(ctx: Context) -> list[dict[str, Any]]:
    """One structured config per switch, in switch order."""
    f, alloc = ctx.fabric, ctx.allocation
    eth = options(ctx)
    roles = {s.name: s.role for s in f.switches}
    mgmt = management_plane(f)
    speed = f.plan.speed
    names = f.switch_model.port_names(speed)
    out = []
    for s in f.switches:
        used = f.ports.get(s.name, {})
        interfaces: list[dict[str, Any]] = []
        neighbors: list[dict[str, Any]] = []
        networks = [f"{alloc.loopbacks[s.name]}/32"]
        host_ports = 0
        uplinks = links = 0
        for port in names:
            idx = used.get(port)
            if idx is None:
                interfaces.append({"name": port, "kind": "unused"})
                continue
            lk = f.links[idx]
            a_ip, z_ip, plen = alloc.link_ips[idx]
            mine_a = lk.a == s.name
            peer, peer_port = (lk.z, lk.z_port) if mine_a else (lk.a, lk.a_port)
            ip, peer_ip = (a_ip, z_ip) if mine_a else (z_ip, a_ip)
            if lk.tier == "node-leaf":
                host_ports += 1
                iface = {"name": port, "kind": "host", "peer": peer, "peer_port": peer_port,
                         "description": f"HOST_{peer}_{peer_port}", "peer_ip": peer_ip}
                if eth.host_addressing == "p2p":
                    iface.update(ip=ip, prefix=plen)
                    networks.append(network_of(ip, plen))
                else:
                    iface.update(vlan=HOST_VLAN)
                interfaces.append(iface)
                continue
            links += 1
            uplinks += mine_a
            prole = roles[peer]
            interfaces.append({"name": port, "kind": "fabric", "peer": peer, "peer_port": peer_port,
                               "peer_role": prole, "description": f"P2P_{peer}_{peer_port}",
                               "ip": ip, "prefix": plen, "peer_ip": peer_ip})
            neighbors.append({"ip": peer_ip, "local_ip": ip, "asn": alloc.asns[peer], "peer": peer,
                              "peer_port": peer_port, "peer_group": PEER_GROUP[prole]})
        subnet = alloc.leaf_subnets.get(s.name)
        svi = None
        if subnet is not None and host_ports:
            base, plen = subnet.split("/")
            gateway = alloc.link_ips[next(i for i in used.values() if f.links[i].tier == "node-leaf")][1]
            svi = {"vlan": HOST_VLAN, "ip": gateway, "prefix": int(plen), "subnet": subnet}
            networks.append(subnet)
        groups = sorted({n["peer_group"] for n in neighbors})
        out.append({
            "name": s.name, "role": s.role, "management": _management(mgmt, alloc.management.get(s.name)), "model": f.switch_model.key, "platform": f.spec.platform,
            "speed": speed, "mtu": eth.mtu, "loopback": alloc.loopbacks[s.name],
            "interfaces": interfaces, "svi": svi,
            "bgp": {"asn": alloc.asns[s.name], "router_id": alloc.loopbacks[s.name],
                    "password_env": eth.bgp_password.env if eth.bgp_password else None,
                    "password": secret_ref(eth.bgp_password.env) if eth.bgp_password else None,
                    "ecmp": max(MIN_ECMP, links), "uplinks": uplinks, "bfd": eth.bfd,
                    "peer_groups": groups, "neighbors": neighbors, "networks": networks},
        })
    # Every switch learns every other switch's announcements: size the per-peer route limit
    # to the fabric (twice its prefixes), never below the usual 12,000, so growth to 65k host
    # /31s does not tear sessions down.
    prefixes = sum(len(sw["bgp"]["networks"]) for sw in out)
    limit = max(MIN_MAX_ROUTES, 2 * prefixes)
    for sw in out:
        sw["bgp"]["max_routes"] = limit
    return out
