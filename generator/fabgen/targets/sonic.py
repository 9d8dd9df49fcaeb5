"""SONiC target: OUT/<fabric>/switches/<device>/config_db.json per switch.

Tables, keys, field names and value formats are those of the SONiC YANG models (every
value a string, composite keys joined with `|`, PORT_QOS_MAP keyed by single ports and
`global`); the tests validate each file with yanglint against them, and check the rules a
running image adds (tests/sonic_rules.py, each rule with the SONiC source it comes from).
Values come from the intent layer (`intent/`); decided here is only how SONiC holds them:
* the SKU (`spec/sonic_skus.py`): DEVICE_METADATA names its hwsku and platform, and the
  PORT table is the SKU's port_config.ini: every port with its lanes, alias and index (xcvrd
  skips a port without an index), unused ones admin down and without QoS.
* buffers are the SKU's, never computed here: the dynamic model on ASICs whose SONiC builds run
  it (NVIDIA Spectrum; lossless PG profile "NULL", so buffermgrd computes headroom, and
  DEFAULT_LOSSLESS_BUFFER_PARAMETER / LOSSLESS_TRAFFIC_PATTERN, which that model reads), the
  traditional model elsewhere (the SKU's pool and profile sizes; buffermgrd adds the lossless
  PG from pg_profile_lookup.ini by speed and cable length). CABLE_LENGTH for every port: the
  length SONiC's templates give the link's roles.
* one lossless class (the RoCE priority) where SONiC's stock templates make 3 and 4 lossless:
  fabgen's QoS intent has one no-drop class on every switch and host, and PFC on a priority
  nothing sends would only pause traffic for nothing.
* all 64 DSCPs are mapped (the stock AZURE map would put DSCP 26 in lossy TC1), per port and
  `global`.
* BGP is written in the tables frrcfgd reads (BGP_GLOBALS, BGP_PEER_GROUP, BGP_NEIGHBOR keyed
  `default|<ip>`), with `frr_mgmt_framework_config` set and `docker_routing_config_mode:
  unified`, the mode in which docker-fpm-frr's docker_init.sh renders FRR's configuration from
  CONFIG_DB through frrcfgd (in `split` it renders none). FRR drops eBGP routes without a
  policy (ebgp-requires-policy), so every peer group has route-map FABRIC in and out,
  permitting the prefixes the fabric announces (loopbacks, host subnets) and nothing else.
  Peers are activated with `admin_status` in the form the release takes: up/down from 202505
  on (frrcfgd hdl_admin_status, sonic-buildimage PR 21697), true/false before.
* DEVICE_METADATA type: ToRRouter for leaves, LeafRouter for spines, SpineRouter for
  cores (SONiC's T0/T1/T2 names).
* the management plane (`management_tables`): eth0 with the switch's address and gateway in
  SONiC's management VRF, NTP, name and syslog servers, so `config reload` of the file keeps
  the switch reachable. Local accounts live outside CONFIG_DB and survive the reload.
* the switch baseline, where the inventory has one (`baseline_tables`): TACACS+ or RADIUS with
  AAA, caclmgrd's control-plane ACLs, BANNER_MESSAGE (202405 on), the timezone, SNMPv3 users,
  sFlow and gNMI (GNMI from 202311 on, TELEMETRY in 202305); secrets as references the deploy
  playbook's template fills. Without a baseline the file is what it was, byte for byte.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from fabgen.context import Context
from fabgen.formats.memo import Memo
from fabgen.formats.yamlout import Filled, Shape
from fabgen.intent.qos import options, qos_intent
from fabgen.intent.switches import group_bfd, switch_configs
from fabgen.inventory.ethernet import leaf_subnet_prefix
from fabgen.inventory.platform import version_of
from fabgen.spec.platforms import PLATFORMS
from fabgen.targets.base import Target, every_other

MAP = "ROCE"
POLICY = "FABRIC"  # route map and prefix set of what the fabric announces
DEVICE_TYPE = {"leaf": "ToRRouter", "spine": "LeafRouter", "core": "SpineRouter"}
ROUTING_MODE = "unified"
FIRST_UP_DOWN_RELEASE = "202505"
VRF = "default"
AF = "ipv4_unicast"


def _ranges(values: list[int]) -> list[str]:
    """[0, 1, 2, 4, 5] -> ['0-2', '4-5']: SONiC's queue and PG range keys."""
    out, start = [], None
    for i, v in enumerate(values):
        if start is None:
            start = v
        if i + 1 == len(values) or values[i + 1] != v + 1:
            out.append(str(v) if v == start else f"{start}-{v}")
            start = None
    return out


def port_table(model, speed: int) -> list[dict[str, str]]:
    """The SKU's PORT rows at this speed, in port order: lanes, alias and index (the cage)."""
    sku = model.sonic
    mode = model.mode_for(speed)
    per = max(1, model.lanes_per_cage // mode.per_cage)
    names = model.port_names(speed)
    rows = []
    for i, name in enumerate(names):
        c, j0 = divmod(i, mode.per_cage)
        first = sku.first_lanes[c] + j0 * per
        alias = sku.alias.format(c=c + 1, sub="abcdefgh"[j0]) if sku.alias else name
        rows.append({"lanes": ",".join(str(first + k) for k in range(per)), "alias": alias, "index": str(c + 1)})
    return rows


def shared_tables(qos: dict[str, Any], sku: Any, policy: dict[str, Any], admin_up: str) -> dict[str, Any]:
    """Tables and rows every switch of the fabric has alike, built once and shared (never
    copied) by every switch's config_db: 2,560 switches hold references, not copies."""
    s = str
    dynamic = sku.buffer_model == "dynamic"
    roce, cnp = qos["roce_priority"], qos["cnp_priority"]
    wd = qos["watchdog"]
    no_drop = ",".join(s(p) for p in qos["no_drop"])
    port_qos = {"dscp_to_tc_map": MAP, "tc_to_queue_map": MAP, "tc_to_pg_map": MAP, "pfc_to_queue_map": MAP,
                "pfc_enable": no_drop}
    if wd["enabled"]:
        port_qos["pfcwd_sw_enable"] = no_drop
    return {
        "tables": {
            "DSCP_TO_TC_MAP": {MAP: {s(d): s(tc) for d, tc in enumerate(qos["dscp_to_tc"])}},
            "TC_TO_QUEUE_MAP": {MAP: {s(tc): s(q) for tc, q in enumerate(qos["tc_to_queue"])}},
            "TC_TO_PRIORITY_GROUP_MAP": {MAP: {s(tc): s(pg) for tc, pg in enumerate(qos["tc_to_pg"])}},
            "MAP_PFC_PRIORITY_TO_QUEUE": {MAP: {s(p): s(qos["tc_to_queue"][p]) for p in qos["no_drop"]}},
            "SCHEDULER": {"BEST_EFFORT": {"type": "DWRR", "weight": s(100 - qos["roce_bandwidth_percent"])},
                          "ROCE": {"type": "DWRR", "weight": s(qos["roce_bandwidth_percent"])},
                          "CNP": {"type": "STRICT"}},
            "WRED_PROFILE": {"ROCE_ECN": {"ecn": "ecn_all", "wred_green_enable": "true",
                                          "green_min_threshold": s(qos["ecn"]["min_bytes"]),
                                          "green_max_threshold": s(qos["ecn"]["max_bytes"]),
                                          "green_drop_probability": s(qos["ecn"]["probability"])}},
            "BUFFER_POOL": dict(sku.buffer_pools),
            "BUFFER_PROFILE": dict(sku.buffer_profiles),
            **({table: dict(rows) for table, rows in sku.dynamic_tables.items()} if dynamic else {}),
            **policy,
        },
        "port_qos": port_qos,
        "watchdog": {"action": wd["action"], "detection_time": s(wd["detection_ms"]),
                     "restoration_time": s(wd["restoration_ms"])} if wd["enabled"] else None,
        "poll": {"GLOBAL": {"POLL_INTERVAL": s(wd["poll_interval_ms"])}} if wd["enabled"] else None,
        "queue": [("0", {"scheduler": "BEST_EFFORT"}), (s(roce), {"scheduler": "ROCE", "wred_profile": "ROCE_ECN"}),
                  (s(cnp), {"scheduler": "CNP"})],
        # the lossless PG: "NULL" lets the dynamic model compute its headroom; the traditional
        # model's buffermgrd writes it itself from pg_profile_lookup.ini (speed, cable length)
        "pg": [("0", {"profile": "ingress_lossy_profile"})] + ([(s(roce), {"profile": "NULL"})] if dynamic else []),
        "bq": [(r, {"profile": sku.lossy_queue_profile}) for r in _ranges([q for q in range(8) if q != roce])]
              + [(s(roce), {"profile": "egress_lossless_profile"})],
        "profile_lists": ({"profile_list": "ingress_lossless_profile,ingress_lossy_profile"},
                          {"profile_list": "egress_lossless_profile,egress_lossy_profile"})
                         if "ingress_lossless_profile" in sku.buffer_profiles else None,
        "global_qos": {"dscp_to_tc_map": MAP},
        "empty": {},
        "untagged": {"tagging_mode": "untagged"},
        "admin_up": {"admin_status": admin_up},
        "group_af": {"admin_status": admin_up, "route_map_in": [POLICY], "route_map_out": [POLICY]},
        "default_pfcwd": "enable" if wd["enabled"] else "disable",
        "port_shapes": {},  # the PORT table by (port names, which are used, speed, MTU): `_port_shape`
        "neighbor_shapes": {},  # a BGP neighbor's row by peer group
        # The per-port QoS tables by the tuple of used ports they cover: almost every switch
        # of a fabric uses the same ports, so they share these tables (`_port_tables`).
        "port_tables": {},
    }


PORT_TABLES = ("PORT_QOS_MAP", "QUEUE", "BUFFER_PG", "BUFFER_QUEUE", "PFC_WD", "BUFFER_PORT_INGRESS_PROFILE_LIST",
               "BUFFER_PORT_EGRESS_PROFILE_LIST")


def _port_tables(used: tuple[str, ...], shared: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """PORT_QOS_MAP, QUEUE, BUFFER_PG, BUFFER_QUEUE and PFC_WD for these used ports: one set
    of table objects per distinct tuple, shared by every switch that uses those ports."""
    tables = shared["port_tables"].get(used)
    if tables is not None:
        return tables
    port_qos: dict[str, Any] = {"global": shared["global_qos"]}
    lists = shared["profile_lists"]
    ingress_lists: dict[str, Any] = {name: lists[0] for name in used} if lists else {}
    egress_lists: dict[str, Any] = {name: lists[1] for name in used} if lists else {}
    queue: dict[str, Any] = {}
    pg: dict[str, Any] = {}
    bq: dict[str, Any] = {}
    pfc_wd: dict[str, Any] = dict(shared["poll"]) if shared["poll"] else {}
    for name in used:
        port_qos[name] = shared["port_qos"]
        if shared["watchdog"] is not None:
            pfc_wd[name] = shared["watchdog"]
        for q, row in shared["queue"]:
            queue[f"{name}|{q}"] = row
        for g, row in shared["pg"]:
            pg[f"{name}|{g}"] = row
        for r, row in shared["bq"]:
            bq[f"{name}|{r}"] = row
    tables = dict(zip(PORT_TABLES, (port_qos, queue, pg, bq, pfc_wd, ingress_lists, egress_lists)))
    shared["port_tables"][used] = tables
    return tables


TIER = {frozenset({"leaf", "spine"}): "leaf-spine", frozenset({"spine", "core"}): "spine-core"}


def _cable(sku: Any, role: str, iface: dict[str, Any]) -> str:
    """CABLE_LENGTH of a port by the link's roles, as SONiC's buffers_config.j2 assigns it."""
    if iface["kind"] == "host":
        return sku.cable_lengths["node-leaf"]
    if iface["kind"] == "fabric":
        return sku.cable_lengths[TIER[frozenset({role, iface["peer_role"]})]]
    return sku.default_cable


def config_db(sw: dict[str, Any], shared: dict[str, Any], ports: list[dict[str, str]], sku: Any) -> dict[str, Any]:
    s = str
    empty = shared["empty"]
    db: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": {
            "hostname": sw["name"], "hwsku": sku.hwsku, "platform": sku.platform, "type": DEVICE_TYPE[sw["role"]],
            "bgp_asn": s(sw["bgp"]["asn"]), "buffer_model": sku.buffer_model,
            "default_pfcwd_status": shared["default_pfcwd"],
            "docker_routing_config_mode": ROUTING_MODE, "frr_mgmt_framework_config": "true"}},
        "PORT": {}, "INTERFACE": {}, "CABLE_LENGTH": {"AZURE": {}},
        "LOOPBACK_INTERFACE": {"Loopback0": empty, f"Loopback0|{sw['loopback']}/32": empty},
        **shared["tables"],
        **_port_tables(tuple(i["name"] for i in sw["interfaces"] if i["kind"] != "unused"), shared),
    }
    interface, cables = db["INTERFACE"], db["CABLE_LENGTH"]["AZURE"]
    speed, mtu = s(sw["speed"] * 1000), s(sw["mtu"])
    role = sw["role"]
    interfaces = sw["interfaces"]
    for iface in interfaces:
        name = iface["name"]
        used = iface["kind"] != "unused"
        cables[name] = _cable(sku, role, iface)
        if used and "ip" in iface:
            interface[name] = empty
            interface[f"{name}|{iface['ip']}/{iface['prefix']}"] = empty
    for name, *_ in sku.extra_ports:
        cables[name] = sku.default_cable
    db["PORT"] = _port_shape(shared, interfaces, ports, speed, mtu, sku).fill(
        *[i.get("description", "UNUSED") for i in interfaces])
    svi = sw["svi"]
    if svi:
        vlan = f"Vlan{svi['vlan']}"
        db["VLAN"] = {vlan: {"vlanid": s(svi["vlan"]), "mtu": mtu}}
        db["VLAN_MEMBER"] = {f"{vlan}|{i['name']}": shared["untagged"] for i in sw["interfaces"]
                             if i["kind"] == "host"}
        db["VLAN_INTERFACE"] = {vlan: empty, f"{vlan}|{svi['ip']}/{svi['prefix']}": empty}
    if sw["management"]:
        db.update(management_tables(sw["management"]))
    b = sw.get("baseline")
    if b is not None and sw["management"]:
        if b["timezone"]:
            db["DEVICE_METADATA"]["localhost"]["timezone"] = b["timezone"]
        used = [i["name"] for i in interfaces if i["kind"] != "unused"]
        db.update(baseline_tables(b, sw["management"], used, shared["release"]))
    bgp = sw["bgp"]
    db["BGP_GLOBALS"] = {VRF: {"local_asn": s(bgp["asn"]), "router_id": bgp["router_id"]}}
    db["BGP_GLOBALS_AF"] = {f"{VRF}|{AF}": {"max_ebgp_paths": s(bgp["ecmp"])}}
    db["BGP_GLOBALS_AF_NETWORK"] = {f"{VRF}|{AF}|{net}": empty for net in bgp["networks"]}
    # BFD on or off per peer group, by its session class (frrcfgd's BGP_PEER_GROUP carries no
    # timers: FRR's 300 ms x 3; validation refuses other timers on SONiC)
    rows = {on: {"bfd": "true" if on else "false", "admin_status": "up"} for on in (True, False)}
    if bgp["password"]:
        for row in rows.values():
            row["auth_password"] = bgp["password"]
    db["BGP_PEER_GROUP"] = {f"{VRF}|{g}": rows[group_bfd(bgp["bfd"], g) is not None] for g in bgp["peer_groups"]}
    db["BGP_PEER_GROUP_AF"] = {f"{VRF}|{g}|{AF}": shared["group_af"] for g in bgp["peer_groups"]}
    admin = shared["admin_up"]["admin_status"]
    neighbor = shared["neighbor_shapes"]
    for g in bgp["peer_groups"]:
        if g not in neighbor:
            neighbor[g] = Shape(partial(_neighbor_row, g, admin), 3)
    db["BGP_NEIGHBOR"] = {f"{VRF}|{n['ip']}": neighbor[n["peer_group"]].fill(s(n["asn"]), n["local_ip"], n["peer"])
                          for n in bgp["neighbors"]}
    return {table: rows for table, rows in db.items() if rows}


# A switch's PORT table and a BGP neighbor's row differ from switch to switch only in a few
# strings (the ports' descriptions; the peer's AS, address and name): yamlout.Filled, their JSON
# text compiled once per shape and filled in (`_table`), not encoded for each of the 330,000
# ports and 260,000 neighbors of a 64k-GPU fabric.

def _port_shape(shared: dict[str, Any], interfaces: list[dict[str, Any]], ports: list[dict[str, str]], speed: str,
                mtu: str, sku: Any) -> Shape:
    """The PORT table's shape for these ports (names, which are used), speed and MTU."""
    names = tuple(i["name"] for i in interfaces)
    used = tuple(i["kind"] != "unused" for i in interfaces)
    key = (names, used, speed, mtu)
    shape = shared["port_shapes"].get(key)
    if shape is None:
        rows = tuple((name, {**ports[k], "speed": speed, "mtu": mtu, "fec": "rs",
                             "admin_status": "up" if u else "down"})
                     for k, (name, u) in enumerate(zip(names, used)))
        extra = tuple((name, {"lanes": lanes, "alias": alias, "index": str(index), "speed": str(mbps), "mtu": mtu,
                              "admin_status": "down", "description": "UNUSED"})  # the SKU's other ports (SFP)
                      for name, lanes, alias, index, mbps in sku.extra_ports)
        shape = shared["port_shapes"][key] = Shape(partial(_port_rows, rows, extra), len(names))
    return shape


def _port_rows(rows: tuple[tuple[str, dict[str, str]], ...], extra: tuple[tuple[str, dict[str, str]], ...],
               *descriptions: str) -> dict[str, dict[str, str]]:
    table = {name: {**row, "description": d} for (name, row), d in zip(rows, descriptions)}
    table.update((name, dict(row)) for name, row in extra)
    return table


def _neighbor_row(group: str, admin: str, asn: str, local_addr: str, name: str) -> dict[str, str]:
    return {"asn": asn, "local_addr": local_addr, "name": name, "peer_group_name": group, "admin_status": admin}


MGMT_PORT = PLATFORMS["sonic"].mgmt_port


def management_tables(m: dict[str, Any]) -> dict[str, Any]:
    """The management plane in CONFIG_DB (sonic-mgmt_port, sonic-mgmt_interface, sonic-mgmt_vrf,
    sonic-ntp, sonic-dns and sonic-syslog YANG models): eth0 with the switch's address and the
    gateway, the management VRF on, NTP sourced from eth0 in that VRF, name and syslog servers.
    SONiC keeps no DNS domain in CONFIG_DB, and local accounts live outside it."""
    vrf = m["vrf"]
    return {
        "MGMT_PORT": {MGMT_PORT: {"alias": MGMT_PORT, "admin_status": "up"}},
        "MGMT_INTERFACE": {f"{MGMT_PORT}|{m['address']}/{m['prefix_len']}": {"gwaddr": m["gateway"]}},
        "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}},
        "NTP": {"global": {"vrf": vrf, "src_intf": MGMT_PORT}} if m["ntp"] else {},
        "NTP_SERVER": {server: {} for server in m["ntp"]},
        "DNS_NAMESERVER": {server: {} for server in m["dns"]},
        "SYSLOG_SERVER": {server: {"vrf": vrf} for server in m["syslog"]},
    }


# The switch baseline (intent/baseline.py) in CONFIG_DB, every table and field as the SONiC
# YANG models of sonic-buildimage define them (src/sonic-yang-models/yang-models: sonic-system-aaa,
# sonic-system-tacacs, sonic-system-radius, sonic-acl, sonic-banner, sonic-snmp, sonic-sflow,
# sonic-gnmi, sonic-telemetry, sonic-feature; tests/data/sonic-yang-extra keeps them). Secrets are
# the intent's reference text, filled by deploy-sonic.yml's template task, never their values.
FIRST_BANNER_RELEASE = "202405"  # BANNER_MESSAGE (sonic-banner.yang, hostcfgd) from 202405 on
FIRST_GNMI_RELEASE = "202311"  # docker-sonic-gnmi reads GNMI from 202311 on; 202305 runs telemetry
GNMI_PORT = "50051"
# the gNMI server's certificate, key and client CA where SONiC's telemetry tooling keeps them
GNMI_CERTS = {"server_crt": "/etc/sonic/telemetry/streamingtelemetryserver.cer",
              "server_key": "/etc/sonic/telemetry/streamingtelemetryserver.key",
              "ca_crt": "/etc/sonic/telemetry/dsmsroot.cer"}
MGMT_ACL = "FABGEN_MGMT"  # the control-plane ACL of SSH and SNMP
GNMI_ACL = "FABGEN_GNMI"  # gNMI's port, as caclmgrd's EXTERNAL_CLIENT service
ACL_TOP = 9999  # priority of the first ACCEPT rule; caclmgrd applies rules by priority, highest first
AAA_METHOD = {"tacacs+": "tacacs+", "radius": "radius"}


def baseline_tables(b: dict[str, Any], m: dict[str, Any], used: list[str], release: str) -> dict[str, Any]:
    """The baseline's tables for one switch: AAA, control-plane ACLs, banner, SNMPv3, sFlow and
    gNMI; the timezone is DEVICE_METADATA's (config_db). `m` is the management plane (its VRF
    and this switch's address), `used` the ports sFlow samples, `release` the SONiC release."""
    tables: dict[str, Any] = {}
    if b["aaa"]:
        tables.update(aaa_tables(b["aaa"], m["vrf"]))
    if b["control_plane"]:
        tables.update(acl_tables(b["control_plane"]["allow"], b["telemetry"]["gnmi"]))
    banner = b["banner"]
    if banner and release >= FIRST_BANNER_RELEASE:
        text = {k: v for k, v in banner.items() if v is not None}
        tables["BANNER_MESSAGE"] = {"global": {"state": "enabled", **text}}
    if b["snmp"]:
        tables.update(snmp_tables(b["snmp"], m))
    sflow = b["telemetry"]["sflow"]
    if sflow:
        tables.update(sflow_tables(sflow, m["vrf"], used))
    if b["telemetry"]["gnmi"]:
        table = "GNMI" if release >= FIRST_GNMI_RELEASE else "TELEMETRY"
        tables[table] = {"certs": dict(GNMI_CERTS),
                         "gnmi": {"port": GNMI_PORT, "client_auth": "true", "log_level": "2"}}
    return tables


def _vrf(vrf: str) -> str:
    """The AAA and sFlow tables name SONiC's management VRF `mgmt`, any other `default`."""
    return "mgmt" if vrf == "mgmt" else "default"


def aaa_tables(aaa: dict[str, Any], vrf: str) -> dict[str, Any]:
    """TACACS+ or RADIUS: the shared key (a reference) in the global row, one server row each,
    the first server the highest priority; authentication by the servers, then the local accounts
    when `fallback_local`. hostcfgd's PAM template (sonic-host-services common-auth-sonic.j2, the
    same in 202305) makes an unreachable server pass to the next module and a refused password
    stop there (failthrough off); it reads `login` only, not AAA's `fallback`, and writes
    `tacacs+` as it writes `tacacs+,local`: TACACS+ always falls back to the local accounts."""
    method = AAA_METHOD[aaa["protocol"]]
    count = len(aaa["servers"])
    if method == "tacacs+":
        table, servers = "TACPLUS", "TACPLUS_SERVER"
        row = {"tcp_port": "49"}
    else:
        table, servers = "RADIUS", "RADIUS_SERVER"
        row = {"auth_port": "1812"}
    login = f"{method},local" if aaa["fallback_local"] else method
    return {
        table: {"global": {"passkey": aaa["secret"], "auth_type": "pap"}},
        servers: {server: {**row, "priority": str(count - k), "vrf": _vrf(vrf)}
                  for k, server in enumerate(aaa["servers"])},
        "AAA": {"authentication": {"login": login, "failthrough": "false"}},
    }


def acl_tables(allow: list[str], gnmi: bool) -> dict[str, Any]:
    """Control-plane ACLs (caclmgrd): SSH and SNMP, and gNMI's port when it runs, accepted from
    the allowed prefixes and dropped from anywhere else. caclmgrd also drops all other traffic
    to the switch once any such rule exists (after established connections, ICMP, DHCP and BGP),
    so gNMI needs its own EXTERNAL_CLIENT table to stay reachable."""
    tables: dict[str, tuple[list[str], dict[str, str]]] = {MGMT_ACL: (["SSH", "SNMP"], {})}
    if gnmi:
        tables[GNMI_ACL] = (["EXTERNAL_CLIENT"], {"L4_DST_PORT": GNMI_PORT})
    acl_table: dict[str, Any] = {}
    acl_rule: dict[str, Any] = {}
    for name, (services, match) in tables.items():
        acl_table[name] = {"type": "CTRLPLANE", "stage": "ingress", "services": services,
                           "policy_desc": f"{name}: management access from the allowed prefixes only"}
        for k, prefix in enumerate(allow):
            acl_rule[f"{name}|ALLOW_{k + 1}"] = {"PRIORITY": str(ACL_TOP - k), "SRC_IP": prefix,
                                                 "PACKET_ACTION": "ACCEPT", **match}
        acl_rule[f"{name}|DEFAULT_DROP"] = {"PRIORITY": "1", "SRC_IP": "0.0.0.0/0", "PACKET_ACTION": "DROP",
                                            **match}
    return {"ACL_TABLE": acl_table, "ACL_RULE": acl_rule}


def snmp_tables(snmp: dict[str, Any], m: dict[str, Any]) -> dict[str, Any]:
    """SNMPv3 users, read-only with SHA and AES (authPriv), their passphrases as references;
    location and contact; and the agent's address: snmpd listens in the management VRF only
    where SNMP_AGENT_ADDRESS_CONFIG names it (docker-snmp's snmpd.conf.j2)."""
    users = {u["name"]: {"SNMP_USER_TYPE": "Priv", "SNMP_USER_PERMISSION": "RO", "SNMP_USER_AUTH_TYPE": "SHA",
                         "SNMP_USER_AUTH_PASSWORD": u["auth"], "SNMP_USER_ENCRYPTION_TYPE": "AES",
                         "SNMP_USER_ENCRYPTION_PASSWORD": u["priv"]} for u in snmp["users"]}
    tables: dict[str, Any] = {"SNMP_USER": users}
    info = {}
    if snmp["location"]:
        info["LOCATION"] = {"Location": snmp["location"]}
    if snmp["contact"]:
        info["CONTACT"] = {"Contact": snmp["contact"]}
    if info:
        tables["SNMP"] = info
    vrf = "mgmt" if m["vrf"] == "mgmt" else ""
    tables["SNMP_AGENT_ADDRESS_CONFIG"] = {f"{m['address']}|161|{vrf}": {}}
    return tables


def sflow_tables(sflow: dict[str, Any], vrf: str, used: list[str]) -> dict[str, Any]:
    """sFlow on: the feature's state only (off in SONiC's init_cfg.json, which `config reload`
    loads before the file, sonic-utilities config/main.py, so its other fields stay), the agent
    on eth0, the collectors reached through the management VRF, and the sampling rate on every
    used port (SFLOW_SESSION: SONiC takes a rate per port only)."""
    rate = str(sflow["sample_rate"])
    return {
        "FEATURE": {"sflow": {"state": "enabled"}},
        "SFLOW": {"global": {"admin_state": "up", "agent_id": MGMT_PORT}},
        "SFLOW_COLLECTOR": {f"collector{k + 1}": {"collector_ip": ip, "collector_port": "6343",
                                                  "collector_vrf": _vrf(vrf)}
                            for k, ip in enumerate(sflow["collectors"])},
        "SFLOW_SESSION": {port: {"admin_state": "up", "sample_rate": rate} for port in used},
    }


_SAFE_KEY = re.compile(r"^[A-Za-z0-9_|./:-]*$")


def _encoder() -> Callable[[Any], str]:
    """json.JSONEncoder(sort_keys=True).encode, same bytes: with json's C encoder made once, not
    once per call as encode() does (3.2 us a port row instead of 5.3; a 64k-GPU SONiC fabric
    encodes 850,000 rows)."""
    plain = json.JSONEncoder(sort_keys=True)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator (another Python implementation)
        return plain.encode
    c = make(None, plain.default, json.encoder.encode_basestring_ascii, None, ": ", ", ", True, False, True)
    return lambda obj: "".join(c(obj, 0))


_ENC = _encoder()


def shared_tables_ids(shared: dict[str, Any]) -> set[int]:
    """Identities of the table objects several switches share (their text is written once)."""
    ids = {id(t) for t in shared["tables"].values()}
    ids.update(id(t) for tables in shared["port_tables"].values() for t in tables.values())
    return ids


def shared_rows(shared: dict[str, Any]) -> dict[int, str]:
    """Encodings of the rows every port and switch shares, by object identity."""
    rows = [shared["port_qos"], shared["empty"], shared["untagged"], shared["admin_up"], shared["group_af"],
            shared["global_qos"]]
    if shared["profile_lists"]:
        rows += list(shared["profile_lists"])
    rows += [r for _, r in shared["queue"] + shared["pg"] + shared["bq"]]
    rows += [r for table in shared["tables"].values() for r in table.values()]
    if shared["watchdog"] is not None:
        rows.append(shared["watchdog"])
    return {id(r): _ENC(r) for r in rows}


_STRING_ROWS = Memo(_ENC)  # a row that is a string (CABLE_LENGTH's "5m"), encoded once
_STR = json.encoder.encode_basestring_ascii  # what _ENC writes for a string


def _filled(filled: Filled, encode: Callable[[Any], str], name: str = "") -> str:
    """A Filled row or table: its shape's JSON text (written by `encode`) with its values (strings
    only: _STR refuses others)."""
    return filled.shape.written(encode, _STR, "json:" + name).format(*map(_STR, filled.filled_with))


def _row(row: Any) -> str:
    if row.__class__ is Filled:
        return _filled(row, _ENC)
    return _STRING_ROWS[row] if row.__class__ is str else _ENC(row)


def _table(table: str, rows: dict[str, Any], memo: dict[int, str]) -> str:
    if type(rows) is Filled:  # PORT: the shape's text, compiled by this function, filled in
        return _filled(rows, lambda plain: _table(table, plain, {}), table)
    keys = sorted(rows)
    # every key of a table quoted as it is when all are plain ("Ethernet8|3", "default|10.0.0.1"):
    # one match for the table (the pattern is one character class) instead of one a key
    plain = _SAFE_KEY.fullmatch("".join(keys)) is not None
    out = []
    for k in keys:
        row = rows[k]
        text = memo.get(id(row))
        if text is None:
            text = _row(row)
        out.append(f'        "{k}": {text}' if plain else f"        {_ENC(k)}: {text}")
    return f'    "{table}": {{\n' + ",\n".join(out) + "\n    }"


def dumps(db: dict[str, Any], memo: dict[int, str] | None = None,
          tables_memo: tuple[set[int], dict[int, str]] | None = None) -> str:
    """config_db.json: tables and keys sorted and indented, each row on one line. json's C
    encoder writes the rows (with indent= it would fall back to pure Python); rows shared by
    every port and switch are encoded once (`memo`, from `shared_rows`); the text of a table
    several switches share (`tables_memo`: their ids, and the texts written so far) is
    formatted once; a Filled table or row is its shape's text filled in."""
    memo = memo or {}
    shared_ids, texts = tables_memo or (set(), {})
    tables = []
    for table in sorted(db):
        rows = db[table]
        if id(rows) not in shared_ids:
            tables.append(_table(table, rows, memo))
            continue
        text = texts.get(id(rows))
        if text is None:
            text = texts[id(rows)] = _table(table, rows, memo)
        tables.append(text)
    return "{\n" + ",\n".join(tables) + "\n}\n"


def policy_tables(ctx: Context) -> dict[str, Any]:
    """Route map FABRIC: permit the prefixes this fabric announces (switch loopbacks, host /31s
    or leaf subnets, all from the fabric's pools) and nothing else, in and out of every peer
    group; FRR drops eBGP routes that no policy permits."""
    eth = options(ctx)
    if eth.host_addressing == "p2p":
        host_len = 31
    else:
        host_len = leaf_subnet_prefix(ctx.fabric.plan.down)
    entries = [(eth.pools.loopbacks, 32), (eth.pools.hosts, host_len)]
    return {
        "PREFIX_SET": {POLICY: {"mode": "IPv4"}},
        "PREFIX": {f"{POLICY}|{10 * (k + 1)}|{net}|{plen}..{plen}": {"action": "permit"}
                   for k, (net, plen) in enumerate(entries)},
        "ROUTE_MAP_SET": {POLICY: {}},
        "ROUTE_MAP": {f"{POLICY}|10": {"route_operation": "permit", "match_prefix_set": POLICY}},
    }


def admin_up(version: str) -> str:
    """How the release spells an active peer: frrcfgd takes up/down from 202505 on."""
    return "up" if version >= FIRST_UP_DOWN_RELEASE else "true"


def structure(ctx: Context) -> dict[str, Any]:
    model = ctx.fabric.switch_model
    version = version_of(ctx.fabric.spec) or FIRST_UP_DOWN_RELEASE
    shared = shared_tables(qos_intent(ctx), model.sonic, policy_tables(ctx), admin_up(version))
    shared["release"] = version
    ports = port_table(model, ctx.fabric.plan.speed)
    switches = [(sw["name"], config_db(sw, shared, ports, model.sonic), sw) for sw in switch_configs(ctx)]
    del shared["port_shapes"], shared["neighbor_shapes"]  # config_db's caches: the rows hold their shapes
    return {"fabric": ctx.fabric.name, "shared": shared, "release": version, "switches": switches}


def render(data: dict[str, Any]) -> Iterable[tuple[str, bytes]]:
    memo = shared_rows(data["shared"])
    tables_memo: tuple[set[int], dict[int, str]] = (shared_tables_ids(data["shared"]), {})
    for name, db, _ in data["switches"]:
        yield f"{data['fabric']}/switches/{name}/config_db.json", dumps(db, memo, tables_memo).encode()


TARGET = Target("sonic", lambda ctx: ctx.fabric.spec.kind == "roce" and ctx.fabric.spec.platform == "sonic",
                structure, render, every_other("switches"))
