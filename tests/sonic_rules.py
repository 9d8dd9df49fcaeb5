"""What a SONiC image needs from a config_db.json beyond its YANG shape, as rules written from
SONiC's own sources. YANG says a file is well formed; these say whether the switch comes up
as a lossless RoCE BGP switch after `config reload`. Each rule names where it comes from
(sonic-net/sonic-buildimage unless another repository is named).

`problems(db, release, pg_lookup)` returns one line per broken rule; pg_lookup is the SKU's
pg_profile_lookup.ini as {(speed Mb/s, cable)} for the traditional buffer model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

BGP_TABLES = ("BGP_GLOBALS", "BGP_NEIGHBOR", "BGP_PEER_GROUP")
ENV_LOOKUP = re.compile(r"^\{\{ lookup\('ansible\.builtin\.env', '\w+'\) \}\}$")
DYNAMIC_PLATFORMS = re.compile(r"^x86_64-(mlnx|nvidia)_|bfn|wedge100bf|as9516")


def _meta(db: dict[str, Any]) -> dict[str, str]:
    return db.get("DEVICE_METADATA", {}).get("localhost", {})


def routing_mode(db: dict[str, Any], **_: Any) -> list[str]:
    """dockers/docker-fpm-frr/docker_init.sh: frrcfgd renders FRR's configuration from CONFIG_DB
    in mode `unified`, or in `separated` with frr_mgmt_framework_config; in `split` and
    `split-unified` nothing renders the BGP tables, so BGP never comes up."""
    if not any(t in db for t in BGP_TABLES):
        return []
    meta = _meta(db)
    mode = meta.get("docker_routing_config_mode", "separated")
    frrcfgd = meta.get("frr_mgmt_framework_config", "false") != "false"
    if mode == "unified" or (mode == "separated" and frrcfgd):
        return [] if frrcfgd else ["routing_mode: frr_mgmt_framework_config must be true for frrcfgd's tables"]
    return [f"routing_mode: docker_routing_config_mode {mode!r} does not render BGP_* tables into FRR"]


def sku_identity(db: dict[str, Any], **_: Any) -> list[str]:
    """sonic-utilities config/main.py (`config reload`) and sonic-cfggen find the SKU's files
    (port_config.ini, buffers, qos) from DEVICE_METADATA hwsku and platform."""
    meta = _meta(db)
    return [f"sku_identity: DEVICE_METADATA has no {k}" for k in ("hwsku", "platform") if not meta.get(k)]


def buffer_model_supported(db: dict[str, Any], **_: Any) -> list[str]:
    """dockers/docker-orchagent/buffermgrd.sh starts the dynamic model with
    /etc/sonic/asic_table.json, which only builds with SONIC_BUFFER_MODEL=dynamic make
    (platform/mellanox/rules.mk, platform/barefoot/rules.mk); elsewhere buffermgrd fails."""
    meta = _meta(db)
    if meta.get("buffer_model") == "dynamic" and not DYNAMIC_PLATFORMS.search(meta.get("platform", "")):
        return [f"buffer_model_supported: dynamic buffers on {meta.get('platform')!r}, whose SONiC build has no "
                "dynamic buffer calculator"]
    return []


def _lossless_ports(db: dict[str, Any]) -> list[str]:
    return [p for p, row in db.get("PORT_QOS_MAP", {}).items() if p != "global" and row.get("pfc_enable")]


def dynamic_tables(db: dict[str, Any], **_: Any) -> list[str]:
    """files/build_templates/buffers_config.j2 (dynamic_mode) writes
    DEFAULT_LOSSLESS_BUFFER_PARAMETER and LOSSLESS_TRAFFIC_PATTERN, which buffermgrdyn reads to
    size headroom, and gives lossless PGs the profile NULL (computed)."""
    if _meta(db).get("buffer_model") != "dynamic":
        return []
    out = [f"dynamic_tables: no {t}" for t in ("DEFAULT_LOSSLESS_BUFFER_PARAMETER", "LOSSLESS_TRAFFIC_PATTERN")
           if not db.get(t)]
    for port in _lossless_ports(db):
        pgs = db.get("PORT_QOS_MAP", {})[port]["pfc_enable"].split(",")
        for pg in pgs:
            if db.get("BUFFER_PG", {}).get(f"{port}|{pg}", {}).get("profile") != "NULL":
                out.append(f"dynamic_tables: {port}|{pg} is lossless but its BUFFER_PG profile is not NULL")
                break
    return out


def traditional_sizes(db: dict[str, Any], pg_lookup: frozenset | None = None, **_: Any) -> list[str]:
    """dockers/docker-orchagent/buffermgrd.sh runs the traditional buffermgrd with the SKU's
    pg_profile_lookup.ini: it sizes nothing itself, so every pool needs its size, and a lossless
    port whose speed and cable length have no row there gets no headroom profile."""
    if _meta(db).get("buffer_model", "traditional") != "traditional":
        return []
    out = [f"traditional_sizes: BUFFER_POOL {name} has no size" for name, row in db.get("BUFFER_POOL", {}).items()
           if "size" not in row]
    if pg_lookup is not None:
        cables = db.get("CABLE_LENGTH", {}).get("AZURE", {})
        for port in _lossless_ports(db):
            key = (int(db["PORT"][port]["speed"]), cables.get(port))
            if key not in pg_lookup:
                out.append(f"traditional_sizes: {port} at {key[0]} Mb/s and {key[1]} has no pg_profile_lookup row")
                break
    return out


def cable_length(db: dict[str, Any], **_: Any) -> list[str]:
    """files/build_templates/buffers_config.j2 writes CABLE_LENGTH for every port; buffermgrd
    (both models) computes a lossless port's headroom from it and skips a port without one."""
    cables = db.get("CABLE_LENGTH", {}).get("AZURE", {})
    missing = [p for p in _lossless_ports(db) if not re.fullmatch(r"\d+m", cables.get(p, ""))]
    return [f"cable_length: {missing[0]} (and {len(missing) - 1} more) lossless without CABLE_LENGTH"] if missing \
        else []


def port_identity(db: dict[str, Any], **_: Any) -> list[str]:
    """sonic-platform-daemons xcvrd maps ports to transceivers by PORT index (a port without one
    is skipped), the CLI and LLDP show alias; portsyncd programs lanes, each lane once."""
    out, seen = [], {}
    for name, row in db.get("PORT", {}).items():
        for key in ("lanes", "alias", "index"):
            if not row.get(key):
                out.append(f"port_identity: {name} has no {key}")
        for lane in row.get("lanes", "").split(","):
            if lane in seen:
                out.append(f"port_identity: lane {lane} of {name} is also {seen[lane]}'s")
            seen[lane] = name
    return out[:5]


def admin_status_form(db: dict[str, Any], release: str = "202505", **_: Any) -> list[str]:
    """src/sonic-frr-mgmt-framework/frrcfgd/frrcfgd.py hdl_admin_status takes up/down since
    PR 21697 (March 2025, release 202505); older frrcfgd takes only true/false and leaves a peer
    with any other value inactive."""
    allowed = {"up", "down"} if release >= "202505" else {"true", "false"}
    for table in ("BGP_NEIGHBOR", "BGP_PEER_GROUP_AF"):
        for key, row in db.get(table, {}).items():
            if "admin_status" in row and row["admin_status"] not in allowed:
                return [f"admin_status_form: {table} {key} admin_status {row['admin_status']!r} is not "
                        f"{'/'.join(sorted(allowed))} for release {release}"]
    return []


def ebgp_policy(db: dict[str, Any], **_: Any) -> list[str]:
    """FRR's bgpd drops eBGP routes in and out unless a policy permits them (bgp
    ebgp-requires-policy, on by default since FRR 7.4); frrcfgd applies route_map_in and
    route_map_out of BGP_PEER_GROUP_AF as `neighbor X route-map M in|out`."""
    if "BGP_PEER_GROUP" not in db:
        return []
    maps = db.get("ROUTE_MAP", {})
    permitting = {key.split("|")[0] for key, row in maps.items() if row.get("route_operation") == "permit"}
    sets = set(db.get("PREFIX_SET", {}))
    for key, row in maps.items():
        if row.get("match_prefix_set") and row["match_prefix_set"] not in sets:
            return [f"ebgp_policy: route map {key} matches prefix set {row['match_prefix_set']!r}, which is not "
                    "defined"]
    for key, row in db.get("BGP_PEER_GROUP_AF", {}).items():
        for direction in ("route_map_in", "route_map_out"):
            names = row.get(direction) or []
            if not names or any(n not in permitting for n in names):
                return [f"ebgp_policy: peer group {key} has no permitting {direction}: FRR drops its eBGP routes"]
    return []


def password_reference(db: dict[str, Any], **_: Any) -> list[str]:
    """frrcfgd.py renders auth_password as `neighbor X password <value> encrypted`: the value is
    the encrypted form, kept in the deploying machine's environment, never a literal here."""
    for table in ("BGP_PEER_GROUP", "BGP_NEIGHBOR"):
        for key, row in db.get(table, {}).items():
            if "auth_password" in row and not ENV_LOOKUP.match(row["auth_password"]):
                return [f"password_reference: {table} {key} auth_password is a literal"]
    return []


def global_dscp_map(db: dict[str, Any], **_: Any) -> list[str]:
    """files/build_templates/qos_config.j2 writes PORT_QOS_MAP|global with the DSCP map (used by
    tunnels and the CPU path); orchagent takes the switch-wide DSCP map from it."""
    if db.get("PORT_QOS_MAP") and not db["PORT_QOS_MAP"].get("global", {}).get("dscp_to_tc_map"):
        return ["global_dscp_map: PORT_QOS_MAP has no global DSCP map"]
    return []


RULES: tuple[Callable[..., list[str]], ...] = (
    routing_mode, sku_identity, buffer_model_supported, dynamic_tables, traditional_sizes, cable_length,
    port_identity, admin_status_form, ebgp_policy, password_reference, global_dscp_map)


def problems(db: dict[str, Any], release: str = "202505", pg_lookup: frozenset | None = None) -> list[str]:
    out: list[str] = []
    for rule in RULES:
        out += rule(db, release=release, pg_lookup=pg_lookup)
    return out
