"""SONiC SKUs: the identity, port table and buffer settings a real SONiC image expects.

A config_db.json is loaded against one SKU (DEVICE_METADATA hwsku and platform): its PORT
table must be that SKU's port_config.ini (names, lanes, alias, index), and its buffers
must be the SKU's buffer templates, which SONiC renders per ASIC. Nothing here is
computed; every figure is copied from sonic-buildimage (sonic-net/sonic-buildimage, main,
2026), file by file as cited.

Buffer models (dockers/docker-orchagent/buffermgrd.sh): with `buffer_model: dynamic`,
buffermgrd starts with `-a /etc/sonic/asic_table.json`, which only the builds whose
platform sets SONIC_BUFFER_MODEL=dynamic generate (platform/mellanox/rules.mk,
platform/barefoot/rules.mk); elsewhere it must run the traditional model (`-l
pg_profile_lookup.ini`), which takes pool and profile sizes from config_db and derives each
lossless priority group's headroom from the SKU's pg_profile_lookup.ini by port speed and
cable length.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SonicSku:
    hwsku: str
    platform: str
    asic: str  # broadcom | mellanox | ...
    buffer_model: str  # dynamic | traditional
    first_lanes: tuple[int, ...]  # first SerDes lane of each cage, in cage order
    alias: str  # alias pattern over c (cage) and sub (a, b, ...)
    extra_ports: tuple[tuple[str, str, str, int, int], ...]  # (name, lanes, alias, index, Mb/s), admin down
    buffer_pools: dict[str, dict[str, str]]
    buffer_profiles: dict[str, dict[str, str]]
    lossy_queue_profile: str  # egress profile of the lossy queues
    cable_lengths: dict[str, str]  # link tier -> CABLE_LENGTH value
    default_cable: str
    pg_lookup: frozenset[tuple[int, str]] = field(default_factory=frozenset)  # traditional: (Mb/s, cable)
    dynamic_tables: dict[str, Any] = field(default_factory=dict)  # dynamic: the model's parameter tables
    sources: tuple[str, ...] = ()


# NVIDIA SN5600, Spectrum-4, 64 OSFP 800G cages run as 128 x 400G:
# device/mellanox/x86_64-nvidia_sn5600-r0/Mellanox-SN5600-O128/port_config.ini (Ethernet0 lanes
# 0-3 alias etp1a index 1 ... Ethernet508 etp64b; Ethernet512 lane 512 etp65 index 65 at 25G);
# buffers: Mellanox-SN5600-O128/buffers_dynamic.json.j2 (dynamic_mode) -> ACS-SN5600/
# buffers_defaults_t1.j2 (egress_lossless_pool_size 158229504) -> x86_64-mlnx_msn2700-r0/
# ACS-MSN2700/buffers_defaults_objects.j2 (pools without sizes in dynamic mode, the profiles,
# BUFFER_QUEUE 3-4 lossless and q_lossy_profile elsewhere, the profile lists);
# files/build_templates/buffers_config.j2 (DEFAULT_LOSSLESS_BUFFER_PARAMETER default_dynamic_th 0,
# LOSSLESS_TRAFFIC_PATTERN mtu 1024 small_packet_percentage 50, cable lengths by role:
# torrouter_server 5m, leafrouter_torrouter 40m, spinerouter_leafrouter 300m).
SN5600_O128 = SonicSku(
    hwsku="Mellanox-SN5600-O128", platform="x86_64-nvidia_sn5600-r0", asic="mellanox", buffer_model="dynamic",
    first_lanes=tuple(8 * c for c in range(64)), alias="etp{c}{sub}",
    extra_ports=(("Ethernet512", "512", "etp65", 65, 25000),),
    buffer_pools={
        "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"},
        "ingress_lossy_pool": {"type": "ingress", "mode": "dynamic"},
        "egress_lossless_pool": {"size": "158229504", "type": "egress", "mode": "dynamic"},
        "egress_lossy_pool": {"type": "egress", "mode": "dynamic"},
    },
    buffer_profiles={
        "ingress_lossless_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "7"},
        "ingress_lossy_profile": {"pool": "ingress_lossy_pool", "size": "0", "dynamic_th": "3"},
        "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"},
        "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "9216", "dynamic_th": "7"},
        "q_lossy_profile": {"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"},
    },
    lossy_queue_profile="q_lossy_profile",
    cable_lengths={"node-leaf": "5m", "leaf-spine": "40m", "spine-core": "300m"}, default_cable="5m",
    dynamic_tables={
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER": {"AZURE": {"default_dynamic_th": "0"}},
        "LOSSLESS_TRAFFIC_PATTERN": {"AZURE": {"mtu": "1024", "small_packet_percentage": "50"}},
    },
    sources=("device/mellanox/x86_64-nvidia_sn5600-r0/Mellanox-SN5600-O128/port_config.ini",
             "device/mellanox/x86_64-nvidia_sn5600-r0/ACS-SN5600/buffers_defaults_t1.j2",
             "device/mellanox/x86_64-mlnx_msn2700-r0/ACS-MSN2700/buffers_defaults_objects.j2",
             "files/build_templates/buffers_config.j2"),
)

# Arista 7060X6-64PE-B, Broadcom Tomahawk 5, 64 OSFP 800G cages run as 128 x 400G:
# device/arista/x86_64-arista_7060x6_64pe_b/Arista-7060X6-64PE-B-O128/port_config.ini (Ethernet0
# lanes 17-20 alias etp1a index 1, Ethernet4 21-24 etp1b, Ethernet8 1-4 etp2a, ...: the first lanes
# below, four lanes per port); buffers_defaults_t1.j2 of the same SKU (pools and profiles,
# default_cable 5m) and its pg_profile_lookup.ini (400G and 100G at 5m, 30m, 40m, 60m, 150m, 500m).
# The spine-core cable is 150m: SONiC's stock 300m has no row in this SKU's lookup, and
# buffermgrd gives a port whose speed and cable have no row no lossless headroom at all.
TH5_7060X6_O128 = SonicSku(
    hwsku="Arista-7060X6-64PE-B-O128", platform="x86_64-arista_7060x6_64pe_b", asic="broadcom",
    buffer_model="traditional",
    first_lanes=(17, 1, 9, 25, 57, 41, 33, 49, 89, 73, 65, 81, 121, 105, 97, 113, 153, 137, 129, 145, 185, 169, 161,
                 177, 217, 201, 193, 209, 249, 233, 225, 241, 273, 257, 265, 281, 313, 297, 289, 305, 345, 329, 321,
                 337, 377, 361, 353, 369, 409, 393, 385, 401, 441, 425, 417, 433, 473, 457, 449, 465, 505, 489, 481,
                 497),
    alias="etp{c}{sub}", extra_ports=(),
    buffer_pools={
        "ingress_lossless_pool": {"size": "164505640", "type": "ingress", "mode": "dynamic", "xoff": "22010624"},
        "egress_lossless_pool": {"size": "164505640", "type": "egress", "mode": "static"},
    },
    buffer_profiles={
        "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "static_th": "82434938"},
        "egress_lossy_profile": {"pool": "egress_lossless_pool", "size": "1778", "dynamic_th": "0"},
        "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "static_th": "82434938"},
    },
    lossy_queue_profile="egress_lossy_profile",
    cable_lengths={"node-leaf": "5m", "leaf-spine": "40m", "spine-core": "150m"}, default_cable="5m",
    pg_lookup=frozenset((speed, cable) for speed in (400000, 100000)
                        for cable in ("5m", "30m", "40m", "60m", "150m", "500m")),
    sources=("device/arista/x86_64-arista_7060x6_64pe_b/Arista-7060X6-64PE-B-O128/port_config.ini",
             "device/arista/x86_64-arista_7060x6_64pe_b/Arista-7060X6-64PE-B-O128/buffers_defaults_t1.j2",
             "device/arista/x86_64-arista_7060x6_64pe_b/Arista-7060X6-64PE-B-O128/pg_profile_lookup.ini"),
)

# ASICs whose SONiC builds run the dynamic buffer model (SONIC_BUFFER_MODEL=dynamic in
# platform/mellanox/rules.mk and platform/barefoot/rules.mk; buffermgrd.sh needs their
# /etc/sonic/asic_table.json)
DYNAMIC_BUFFER_ASICS = frozenset({"mellanox", "barefoot"})
