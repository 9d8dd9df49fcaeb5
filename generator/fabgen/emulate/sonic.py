"""SONiC config_db.json (what targets/sonic renders) -> the routing it describes.

The BGP tables are read as SONiC's frrcfgd (sonic-buildimage src/sonic-frr-mgmt-framework,
frrcfgd.py) turns them into FRR: BGP_GLOBALS (local_asn, router_id) -> `router bgp` and
`bgp router-id`; BGP_GLOBALS_AF max_ebgp_paths -> `maximum-paths`; BGP_GLOBALS_AF_NETWORK ->
`network`; BGP_PEER_GROUP (bfd) -> `neighbor G peer-group`, `neighbor G bfd`; BGP_PEER_GROUP_AF
route_map_in/out -> `neighbor G route-map M in|out`; BGP_NEIGHBOR (asn, peer_group_name) ->
`neighbor A remote-as N`, `neighbor A peer-group G`; PREFIX_SET and PREFIX
(`SET|seq|prefix|ge..le`, action) -> `ip prefix-list SET seq N permit PREFIX ge X le Y`;
ROUTE_MAP (`MAP|seq`, route_operation, match_prefix_set) -> `route-map MAP permit N` /
`match ip address prefix-list SET`. Interfaces: INTERFACE, LOOPBACK_INTERFACE, VLAN,
VLAN_MEMBER, VLAN_INTERFACE. Tables of QoS, buffers, the management plane and the switch
baseline are left out by name; any other table, or a field of a translated table this module does not know, is a
TranslateError.
"""

from __future__ import annotations

import json
import re

from fabgen.emulate.model import Neighbor, Router, TranslateError

LEFT_OUT = {  # tables not emulated, and what they are
    **{t: "qos" for t in ("BUFFER_PG", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_QUEUE",
                          "BUFFER_PORT_EGRESS_PROFILE_LIST", "BUFFER_PORT_INGRESS_PROFILE_LIST", "CABLE_LENGTH",
                          "DEFAULT_LOSSLESS_BUFFER_PARAMETER", "DSCP_TO_TC_MAP", "LOSSLESS_TRAFFIC_PATTERN",
                          "MAP_PFC_PRIORITY_TO_QUEUE", "PFC_WD", "PORT_QOS_MAP", "QUEUE", "SCHEDULER",
                          "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP", "WRED_PROFILE")},
    **{t: "management" for t in ("DNS_NAMESERVER", "MGMT_INTERFACE", "MGMT_PORT", "MGMT_VRF_CONFIG", "NTP",
                                 "NTP_SERVER", "SYSLOG_SERVER")},
    # the switch baseline (targets/sonic.py baseline_tables): access, telemetry, nothing routed
    **{t: "baseline" for t in ("AAA", "ACL_RULE", "ACL_TABLE", "BANNER_MESSAGE", "FEATURE", "GNMI", "RADIUS",
                               "RADIUS_SERVER", "SFLOW", "SFLOW_COLLECTOR", "SFLOW_SESSION", "SNMP",
                               "SNMP_AGENT_ADDRESS_CONFIG", "SNMP_USER", "TACPLUS", "TACPLUS_SERVER", "TELEMETRY")},
    "PORT": "ports", "ROUTE_MAP_SET": "policy names",
}
FIELDS = {  # the fields of each translated table this module reads (any other is an error)
    "BGP_GLOBALS": {"local_asn", "router_id"}, "BGP_GLOBALS_AF": {"max_ebgp_paths"}, "BGP_GLOBALS_AF_NETWORK": set(),
    "BGP_PEER_GROUP": {"admin_status", "bfd"}, "BGP_PEER_GROUP_AF": {"admin_status", "route_map_in", "route_map_out"},
    "BGP_NEIGHBOR": {"admin_status", "asn", "local_addr", "name", "peer_group_name"},
    "PREFIX_SET": {"mode"}, "PREFIX": {"action"}, "ROUTE_MAP": {"match_prefix_set", "route_operation"},
    "INTERFACE": set(), "LOOPBACK_INTERFACE": set(), "VLAN": {"mtu", "vlanid"}, "VLAN_MEMBER": {"tagging_mode"},
    "VLAN_INTERFACE": set(), "DEVICE_METADATA": {"bgp_asn", "buffer_model", "default_pfcwd_status",
                                                 "docker_routing_config_mode", "frr_mgmt_framework_config",
                                                 "hostname", "hwsku", "platform", "timezone", "type"},
}
ACTIVE = ("up", "true")  # admin_status: frrcfgd takes up/down from 202505 on, true/false before


def translate(name: str, text: str, where: str) -> Router:
    try:
        db = json.loads(text)
    except ValueError as exc:
        raise TranslateError(f"{where}: not JSON ({exc})") from None
    if not isinstance(db, dict):
        raise TranslateError(f"{where}: a config_db.json is an object of tables")
    r = Router(name, "sonic")
    for table, rows in db.items():
        if table in LEFT_OUT:
            r.ignored.add(LEFT_OUT[table])
            continue
        known = FIELDS.get(table)
        if known is None:
            raise TranslateError(f"{where}: the SONiC translator does not know table {table}")
        for key, row in rows.items():
            extra = set(row) - known if isinstance(row, dict) else {"(not an object)"}
            if extra:
                raise TranslateError(f"{where}: {table}|{key}: the SONiC translator does not know "
                                     f"{', '.join(sorted(extra))}")
    meta = db.get("DEVICE_METADATA", {}).get("localhost", {})
    if meta.get("docker_routing_config_mode") != "unified" or meta.get("frr_mgmt_framework_config") != "true":
        raise TranslateError(f"{where}: DEVICE_METADATA does not hand BGP to frrcfgd (docker_routing_config_mode "
                             "unified, frr_mgmt_framework_config true): these BGP tables would not be applied")
    _interfaces(r, db)
    _bgp(r, db, where)
    _policy(r, db, where)
    return r


def _interfaces(r: Router, db: dict) -> None:
    for key in db.get("LOOPBACK_INTERFACE", {}):
        if "|" in key:
            r.loopbacks.append(key.split("|", 1)[1])
    for key in db.get("INTERFACE", {}):
        if "|" in key:
            port, cidr = key.split("|", 1)
            r.routed.setdefault(port, []).append(cidr)
    for key in db.get("VLAN_INTERFACE", {}):
        if "|" in key:
            vlan, cidr = key.split("|", 1)
            r.vlans.setdefault(vlan.lower(), []).append(cidr)
    for key in db.get("VLAN_MEMBER", {}):
        vlan, port = key.split("|", 1)
        r.members[port] = vlan.lower()


def _bgp(r: Router, db: dict, where: str) -> None:
    glob = db.get("BGP_GLOBALS", {}).get("default")
    if glob is None:
        raise TranslateError(f"{where}: no BGP_GLOBALS|default: no BGP")
    r.asn, r.router_id = int(glob["local_asn"]), glob.get("router_id", "")
    af = db.get("BGP_GLOBALS_AF", {}).get("default|ipv4_unicast", {})
    r.multipath = int(af.get("max_ebgp_paths", 1))
    for key in db.get("BGP_GLOBALS_AF_NETWORK", {}):
        vrf, family, cidr = key.split("|", 2)
        if (vrf, family) != ("default", "ipv4_unicast"):
            raise TranslateError(f"{where}: BGP_GLOBALS_AF_NETWORK|{key}: only default|ipv4_unicast is emulated")
        r.networks.append(cidr)
    for key, row in db.get("BGP_PEER_GROUP", {}).items():
        vrf, group = key.split("|", 1)
        r.groups[group] = Neighbor("", "", group, bfd=row.get("bfd") == "true")
        if row.get("admin_status", "up") not in ACTIVE:
            raise TranslateError(f"{where}: BGP_PEER_GROUP|{key} is shut down")
    for key, row in db.get("BGP_PEER_GROUP_AF", {}).items():
        vrf, group, family = key.split("|", 2)
        if group not in r.groups:
            raise TranslateError(f"{where}: BGP_PEER_GROUP_AF|{key}: peer group {group} is not declared")
        r.route_maps[group] = (_one(row.get("route_map_in")), _one(row.get("route_map_out")))
    for key, row in db.get("BGP_NEIGHBOR", {}).items():
        vrf, peer = key.split("|", 1)
        group = row.get("peer_group_name", "")
        if group and group not in r.groups:
            raise TranslateError(f"{where}: BGP_NEIGHBOR|{key}: peer group {group} is not declared")
        if row.get("admin_status", "up") not in ACTIVE:
            continue  # shut down: frrcfgd writes `neighbor A shutdown`
        r.neighbors.append(Neighbor(peer, row["asn"], group, bfd=bool(group and r.groups[group].bfd)))


def _one(value: object) -> str:
    """A route map named in a BGP_PEER_GROUP_AF field (a list of one, as frrcfgd takes it)."""
    if isinstance(value, list):
        return value[0] if value else ""
    return str(value or "")


def _policy(r: Router, db: dict, where: str) -> None:
    for name, row in db.get("PREFIX_SET", {}).items():
        if row.get("mode", "IPv4") != "IPv4":
            raise TranslateError(f"{where}: PREFIX_SET|{name}: only IPv4 prefix sets are emulated")
        r.prefix_lists[name] = []
    for key, row in db.get("PREFIX", {}).items():
        m = re.fullmatch(r"([^|]+)\|([0-9]+)\|([0-9./]+)\|([0-9]+)\.\.([0-9]+)", key)
        if not m or m.group(1) not in r.prefix_lists:
            raise TranslateError(f"{where}: PREFIX|{key}: not SET|seq|prefix|ge..le of a declared set")
        r.prefix_lists[m.group(1)].append((int(m.group(2)), row.get("action", "permit"), m.group(3),
                                           int(m.group(4)), int(m.group(5))))
    for key, row in db.get("ROUTE_MAP", {}).items():
        m = re.fullmatch(r"([^|]+)\|([0-9]+)", key)
        if not m:
            raise TranslateError(f"{where}: ROUTE_MAP|{key}: not MAP|seq")
        match = row.get("match_prefix_set", "")
        if match and match not in r.prefix_lists:
            raise TranslateError(f"{where}: ROUTE_MAP|{key} matches prefix set {match}, never declared")
        r.maps.setdefault(m.group(1), []).append((int(m.group(2)), row.get("route_operation", "permit"), match))
    for group, (rin, rout) in r.route_maps.items():
        for name in (rin, rout):
            if name and name not in r.maps:
                raise TranslateError(f"{where}: peer group {group} applies route map {name}, never declared")
