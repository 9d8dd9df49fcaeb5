"""Inventory format version 1 as pydantic v2 models (frozen, extra keys forbidden).

Only shape and single-field rules live here; checks that need the catalog or other
parts of the inventory (unknown group, model valid for the kind, sizes) are in
`validate.py`, where they can be reported with their positions.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    model_validator,
)
from pydantic_core import PydanticCustomError

from fabgen.spec.catalog import NODES
from fabgen.spec.platforms import KINDS, PLATFORMS, platforms_of

NAME_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$"
NAME_RULE = "use letters, digits and '-', at most 63, starting and ending with a letter or digit"

# Names become file names, hostnames and config text: a DNS label, nothing else.
Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
# RDMA and netdev names (mlx5_0, ibp24s0, enp1s0f0np0): a little wider than a DNS label.
DEVICE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
DeviceName = Annotated[str, StringConstraints(pattern=DEVICE_PATTERN)]
Kind = Literal["infiniband", "roce", "spectrum-x", "ethernet"]
Role = Literal["compute", "storage", "inband", "oob", "northsouth"]  # what a fabric carries (docs/cluster.md)
# Free text: printable only. No C0/C1 controls, no bidi overrides or isolates (text that reads
# differently than it is stored), no zero-width characters, no line or paragraph separators,
# no spaces but U+0020 (a no-break or ideographic space looks like one and is not), no soft hyphen.
# No braces either: the deploy playbooks pass switch configs through Ansible's template module,
# where '{{', '{%' and '{#' start Jinja, so no inventory text may bring one (docs/inventory.md).
_PRINTABLE = (r"\x00-\x1f\x7f-\xa0\xad\u1680\u180e\u2000-\u200f\u202a-\u202f\u205f-\u206f\u2028\u2029"
              r"\u3000\ufeff")
TEXT_PATTERN = rf"^[^{_PRINTABLE}{{}}]*$"
Text = Annotated[str, StringConstraints(max_length=200, pattern=TEXT_PATTERN)]
# Printable text that may hold braces: a format pattern (port_name), whose braces are Python
# format fields and whose results are checked against the names configs can hold (validate.py),
# and text only people read (a price list's note).
PRINTABLE_PATTERN = rf"^[^{_PRINTABLE}]*$"
FormatText = Annotated[str, StringConstraints(max_length=200, pattern=PRINTABLE_PATTERN)]
# A SONiC SKU or platform: the name of a folder of sonic-buildimage's device/ tree, which the
# switch opens by this name (so no '/', no '..'): letters, digits, '_', '.', '+', '-'.
SKU_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}$"
SkuName = Annotated[str, StringConstraints(pattern=SKU_PATTERN)]

MAX_NODES_PER_GROUP = 100_000
# NCCL's release (2.28, 2.28.3) or its package version (2.28.3-1, as `dpkg -l libnccl2` shows it)
NCCL_VERSION_PATTERN = r"^2\.[0-9]{1,2}(\.[0-9]{1,2}(-[0-9]{1,2})?)?$"


class Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


def _whole_number(value: Any) -> Any:
    """A Literal of numbers compares by equality, and Python has True == 1 and 2.0 == 2: even in
    strict mode `planes: true` would be one plane. Only an int (not a bool) may be one of them."""
    if isinstance(value, (bool, float)):
        raise PydanticCustomError("number_choice", "must be a whole number, not {value}", {"value": value})
    return value


# A choice among numbers (planes, tiers, version, an MTU): like `int` fields in strict mode, it
# takes no boolean and no fraction.
WholeNumber = BeforeValidator(_whole_number)


class NodeGroup(Strict):
    """A set of identical nodes."""

    name: Name = Field(description="group name, referenced by fabrics[].node_groups")
    model: str = Field(description=f"node model: a catalog key ({', '.join(NODES)}) or a node_models entry")
    count: int = Field(ge=1, le=MAX_NODES_PER_GROUP, description="number of nodes")
    bootstrap_interface: DeviceName | None = Field(
        default=None, description="NCCL_SOCKET_IFNAME: the node's bootstrap (management) netdev; default: NCCL's "
        "own choice minus loopback and container bridges")
    management: str | None = Field(
        default=None, description="IPv4 prefix of the nodes' management addresses (Ansible's ansible_host), in "
        "node order from the prefix's first host address")
    role: Literal["compute", "storage"] = Field(
        default="compute",
        description="compute: NICs in rails, NCCL runs here; storage: NICs on storage leaves (InfiniBand "
        "io_guids.conf)")
    hostname: str | None = Field(
        default=None, description="hostname pattern, n counts from 1 (default: '<name>{n:03d}')"
    )
    bonds: Annotated[Literal[1, 2], WholeNumber] = Field(
        default=1, description="on a northsouth fabric, the node's bonds: 1 (its two storage, else in-band, ports) "
        "or 2 (a role storage group, a support or storage server as NVIDIA's designs give: bond0 its two inband "
        "ports, bond1 its two storage ports)")
    tenants: Annotated[list[Literal["inband", "storage"]], Field(min_length=1, max_length=2)] | None = Field(
        default=None, description="on a northsouth fabric, the tenants a server's one bond carries (a role storage "
        "group with bonds: 1): both (left out: in-band untagged, storage tagged), or one alone, untagged, its address "
        "on the bond itself (NVIDIA's storage servers: the storage VLAN alone, `access 500`)")
    rdma_links: Annotated[str, StringConstraints(max_length=1024)] | None = Field(
        default=None, description="the output of `rdma link show` (or `ibdev2netdev`) saved on one node of the group, "
        "relative to the inventory: its ports' netdev names, for the netplans, NIC scripts and Ansible files "
        "(without it, a model NVIDIA publishes no names for has placeholder interface names)")
    nccl_version: Annotated[str, StringConstraints(pattern=NCCL_VERSION_PATTERN)] = Field(
        default="2.28", description="NCCL release the nodes run, quoted (\"2.28\", \"2.28.3\" or the package's "
        "\"2.28.3-1\"): decides the forms nccl.env uses (2.20 and older need NCCL_IB_GID_INDEX on RoCE)")

    @property
    def hostname_pattern(self) -> str:
        return self.hostname if self.hostname is not None else self.name + "{n:03d}"


class Partition(Strict):
    """An InfiniBand partition (opensm partitions.conf rule)."""

    name: Name = Field(description="partition name")
    pkey: int = Field(ge=1, le=0x7FFE, description="partition key, 0x0001-0x7ffe (0x7fff is Default)")
    node_groups: list[str] | Literal["all"] = Field(default="all", description="members by node group, or all")
    membership: Literal["full", "limited", "both"] = Field(default="full", description="membership of the members")
    ipoib: bool = Field(default=True, description="IPoIB on this partition")
    mtu: Annotated[Literal[256, 512, 1024, 2048, 4096], WholeNumber] = Field(
        default=4096, description="partition MTU (bytes)")
    rate: int | None = Field(default=None, description="Gb/s; default: the fabric's link speed")
    service_level: int = Field(default=0, ge=0, le=15, description="service level of the partition")


class InfinibandOptions(Strict):
    """Subnet-manager intent for an InfiniBand fabric; every key has a default."""

    routing_engine: Literal["auto", "ftree", "updn", "ar_updn", "ar_ftree", "minhop"] = Field(
        default="auto", description="auto: ufm -> ar_updn, opensm -> ftree (updn as fallback)")
    sharp: bool | None = Field(default=None, description="SHARP in-network reductions (default: on with ufm)")
    adaptive_routing: bool | None = Field(default=None, description="default: on with ufm (upstream has none)")
    sm_priority: int = Field(default=15, ge=0, le=15, description="subnet-manager priority (0-15)")
    service_level: int = Field(default=0, ge=0, le=15, description="SL of NCCL traffic (NCCL_IB_SL)")
    qos: bool = Field(default=False, description="write qos-policy.conf and enable QoS in opensm.conf")
    guid_map: Annotated[str, StringConstraints(max_length=1024)] | None = Field(
        default=None, description="CSV of device,port,guid; relative to the inventory")
    partitions: list[Partition] = Field(default_factory=list)
    subnet_managers: list[Name] = Field(
        default_factory=list, max_length=4, description="hosts running the subnet manager (UFM or OpenSM servers), "
        "master first: the Ansible group subnet_manager that ansible/deploy-sm.yml installs the SM files on")


class Ecn(Strict):
    """ECN marking (WRED in ECN mode) on the RoCE queue. Defaults: NVIDIA Spectrum's RoCE values
    (docs/sources.md, "Open conflicts", lists the alternatives; one set is rendered on every switch)."""

    min_threshold_kbytes: int = Field(default=150, ge=1, le=1_000_000, description="start marking (KB of 1000 B)")
    max_threshold_kbytes: int = Field(default=1500, ge=1, le=1_000_000,
                                      description="mark with max probability (KB of 1000 B)")
    probability: int = Field(default=100, ge=1, le=100, description="mark probability at the max threshold (%)")


class PfcWatchdog(Strict):
    """PFC watchdog on every lossless port: a queue paused longer than detection_ms is drained."""

    enabled: bool = Field(default=True, description="PFC watchdog on")
    detection_ms: int = Field(default=200, ge=100, le=5000, description="a queue paused this long is stalled")
    restoration_ms: int = Field(default=200, ge=100, le=60000, description="the stalled queue is restored after this")
    poll_interval_ms: int = Field(default=100, ge=100, le=1000, description="how often the watchdog looks")
    action: Literal["drop"] = Field(default="drop", description="drop: the one action every target has")


class Qos(Strict):
    """The lossless RoCE intent (docs/sources.md); switches and hosts read the same values."""

    mode: Literal["lossless", "lossy"] = Field(
        default="lossless", description="lossless: PFC on the RoCE priority; lossy (Spectrum-X only): ECN alone")
    roce_dscp: int = Field(default=26, ge=0, le=63, description="DSCP of RoCE data")
    roce_priority: int = Field(default=3, ge=0, le=7, description="traffic class / PFC priority of RoCE: no-drop")
    cnp_dscp: int = Field(default=48, ge=0, le=63, description="DSCP of congestion notification packets")
    cnp_priority: int = Field(default=6, ge=0, le=7, description="traffic class of CNPs: strict priority, no PFC")
    roce_bandwidth_percent: int = Field(default=50, ge=1, le=99, description="DWRR share of the RoCE queue")
    lossless_buffer_percent: int | None = Field(
        default=None, ge=1, le=99,
        description="NVUE, lossless: share of the switch's shared buffer for the RoCE lossless traffic pool "
                    "(qos traffic-pool roce-lossless memory-percent; the rest to default-lossy); none leaves the "
                    "pools to Cumulus's RoCE profile. NVIDIA's Enterprise RA generator writes 90")
    ecn: Ecn = Field(default_factory=Ecn)
    pfc_watchdog: PfcWatchdog = Field(default_factory=PfcWatchdog)


class Pools(Strict):
    """IPv4 pools. Defaults hold a 65,536-NIC three-tier fabric; other Ethernet fabrics get their own by role.

    These defaults are the first compute fabric's; every other Ethernet fabric without pools gets
    its own by role and place (inventory/defaults.py; docs/guide/inventory.md, "Default address pools")."""

    loopbacks: str = Field(default="10.255.0.0/16", description="one /32 per switch")
    links: str = Field(default="10.0.0.0/13", description="one /31 per switch-to-switch link")
    hosts: str = Field(default="10.8.0.0/13", description="host-facing ports: a /31 per NIC, or a subnet per leaf")


class Asn(Strict):
    """The eBGP ASN plan: one ASN per leaf; spines by tier or by pod; cores by tier or by plane."""

    leaf: int = Field(default=4_200_010_000, ge=1, le=4_294_967_294, description="ASN of the first leaf (+1 each)")
    spine: int = Field(default=4_200_001_000, ge=1, le=4_294_967_294, description="ASN of the spines (first pod)")
    core: int = Field(default=4_200_000_000, ge=1, le=4_294_967_294, description="ASN of the cores (first plane)")
    spines: Literal["tier", "pod"] = Field(default="pod", description="one ASN for all spines, or one per pod")
    cores: Literal["tier", "plane"] = Field(default="tier", description="one ASN for all cores, or one per plane")
    host: int = Field(default=4_200_100_000, ge=1, le=4_294_967_294,
                      description="host_routing bgp: ASN of the first node (+1 each, in planned node order)")


ENV_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"


class EnvRef(Strict):
    """A secret, by reference: the name of an environment variable that holds it where the
    configs are deployed. fabgen never reads it, so no secret can reach its output or logs."""

    env: str = Field(pattern=ENV_PATTERN, description="environment variable name")


def _no_literal_secret(value: Any) -> Any:
    if isinstance(value, (str, int, float)):
        raise PydanticCustomError("secret_literal", "secrets are never written into the inventory: write "
                                  "{env: VARIABLE} and set that variable where the configs are deployed")
    return value


VRF_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,14}$"  # a Linux interface name (a VRF is a device on Cumulus)


class Tenant(Strict):
    """One tenant of an EVPN fabric (a north-south role, or the GPU tenant of host_addressing evpn): VLAN,
    layer-2 VNI, VRF and its layer-3 VNI."""

    vlan: int = Field(ge=2, le=4094, description="VLAN of the tenant's subnet: on a northsouth host bond tagged for "
                      "storage, untagged for inband (the VLAN a node PXE-boots on); with evpn the GPU ports' access "
                      "VLAN")
    vni: int = Field(ge=1, le=16_777_214, description="layer-2 VNI of that VLAN")
    vrf: Annotated[str, StringConstraints(pattern=VRF_PATTERN)] = Field(
        description="the role's VRF, a name of its own: none a switch gives its devices (default, mgmt, lo, eth0, "
        "swp1, bond3, vlan30, vxlan48, br_default, peerlink, Ethernet1, Vlan30, ...), a VRF being a device on "
        "Cumulus Linux")
    l3vni: int = Field(ge=1, le=16_777_214, description="layer-3 VNI of the VRF (symmetric routing)")
    # NVIDIA's generator maps each tenant VRF's layer-3 VNI to a VLAN of its own (NVIDIA/enterprise-ras,
    # net-configurator/output/2-4-5-800/default/configs/gl-plane1-01-config.sh at 2b4e3e2: `vrf GPU evpn
    # vlan 3003`; csl-01-config.sh at 993eed6a993b668e9ab80556cd973b548612c4a4: `vrf INBAND evpn vlan
    # 3002`, `vrf STORAGE evpn vlan 3005`; 2-8-9-400's core-01-config.sh at 2f46cb2: INBAND 3002, GPU 3003),
    # as northsouth.border.l3vni_vlan (EXIT's 3004) and oob_routed.l3vni_vlan (OOB's 3001)
    l3vni_vlan: int | None = Field(
        default=None, ge=2, le=4094, description="NVUE: the VLAN NVUE maps the VRF's layer-3 VNI to (`vrf <vrf> evpn "
        "vlan`; NVIDIA's GPU 3003, INBAND 3002, STORAGE 3005), none of the fabric's other VLANs; default none "
        "written, NVUE picks one. EOS maps a VRF's VNI without a VLAN of fabgen's (`vxlan vrf`): refused there")


TENANT_DEFAULTS: dict[str, dict[str, Any]] = {"storage": {"vlan": 20, "vni": 10020, "vrf": "STORAGE", "l3vni": 4020},
                                              "inband": {"vlan": 30, "vni": 10030, "vrf": "INBAND", "l3vni": 4030}}


# host_addressing evpn: the GPU tenant as NVIDIA's generator writes it for 2-4-5-800 (NVIDIA/enterprise-ras,
# net-configurator/output/2-4-5-800/default/configs/gl-plane1-01-config.sh at 2b4e3e2: `vlan 900 vni 245900`,
# `vrf GPU evpn vni 245003`), the same on every plane (each plane is a network of its own)
GPU_TENANT: dict[str, Any] = {"vlan": 900, "vni": 245900, "vrf": "GPU", "l3vni": 245003}


class GpuTenant(Tenant):
    """host_addressing evpn: the GPU tenant, with how its VLANs are cut (`vlans`)."""

    # plane: one VLAN a plane (NVIDIA's output at 2f46cb2: 2-8-9-800 gsl-plane1-01 `vlan 900 vni 289900`, one
    # 192.168.0.0/20); rail: one VLAN a rail of each plane, VLAN + rail and VNI + rail (NVIDIA's at 993eed6:
    # `gpu_vlan_mode = per_rail_per_plane`, 2-4-5-800 gl-plane1-01 VLANs 901-904 with VNIs 4901-4904, 2-8-9-400
    # core-01 901-908 with 4901-4908, a /24 a rail, one VRF GPU with L3VNI 5003)
    vlans: Literal["plane", "rail"] = Field(
        default="plane", description="plane: every GPU port of a plane in the one VLAN `vlan`, the plane's part "
        "of the hosts pool one subnet; rail: a VLAN a rail (rail r: VLAN `vlan` + r, VNI `vni` + r), the plane's "
        "part cut in equal subnets, one a rail, all in the one VRF (NVIDIA's later output, 993eed6)")


# The north-south fabric's way out, as NVIDIA's generator writes it (NVIDIA/enterprise-ras,
# net-configurator/output/2-4-5-800/default/configs/csl-01-config.sh at
# 993eed6a993b668e9ab80556cd973b548612c4a4: `vrf EXIT evpn vni 5004`, five `edge_uplink` ports
# swp61s0, swp62s0-swp62s3 in VRF EXIT, each an unnumbered eBGP neighbor of peer group `exit`,
# `remote-as external`, outbound route-map OUTBOUND_ERA_PREFIXES, no BFD; `multipaths ebgp 128`;
# 2-8-9-400/default/configs/core-01-config.sh at 2f46cb2fca8f4d9b432f9de62957e54aed8f64d9: VRF EXIT
# importing INBAND by `route-import from-vrf` with route-map EXIT_FILTER, INBAND importing EXIT with
# INBAND_FILTER)
BORDER_DEFAULTS: dict[str, Any] = {"vrf": "EXIT", "l3vni": 5004, "uplinks": 5, "ecmp": 128, "peer_group": "exit"}
LeakedTenant = Literal["inband", "storage"]
BORDER_LEAK: tuple[LeakedTenant, ...] = ("inband", "storage")


# a BGP peer group's name: a word NVUE, FRR and the emulation take (letters, digits, '_', '-')
PEER_GROUP_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,62}$"


class Border(Strict):
    """northsouth.border: the fabric's way out (docs/northsouth.md "The way out"): a border VRF on
    every leaf that holds nodes (the collapsed pair's two switches at 1-2 racks), its uplinks to the
    site's router by eBGP, and the tenants' routes leaked to and from it."""

    router: Name = Field(description="the site router's name: the far end of every border uplink (cabling.csv, "
                         "NetBox, port descriptions); not a switch's or a node's name")
    asn: int | None = Field(default=None, ge=1, le=4_294_967_294,
                            description="the site router's ASN, written as the border sessions' remote AS (none "
                            "the cluster's Ethernet fabrics use); left out, `remote-as external` (any ASN but the "
                            "fabric's), as NVIDIA's generator writes it")
    uplinks: int = Field(default=BORDER_DEFAULTS["uplinks"], ge=1, le=64,
                         description="border uplinks a leaf, on its highest ports at the fabric's speed that no "
                         "planned node or switch link takes, each an unnumbered eBGP session (default 5, NVIDIA's "
                         "csl-01 at 2-4-5-800)")
    speed: int | None = Field(
        default=None, ge=1, le=3200,
        description="Gb/s of each border uplink (NVUE): the uplinks then take whole cages of their own, the highest "
        "that no planned node or switch link takes, each split into as many ports as the switch runs at that speed "
        "(SN5600: 200 4x, 100 8x; NVIDIA's csl-01 at 2-4-5-800: 200, its 2-8-9-400 core-01: 100); default: the "
        "fabric's node ports' speed, on the highest free ports (docs/hardware.md, \"Port speeds\")")
    vrf: Annotated[str, StringConstraints(pattern=VRF_PATTERN)] = Field(
        default=BORDER_DEFAULTS["vrf"], description="the border VRF holding the uplinks (default NVIDIA's EXIT); a "
        "name of its own, as a tenant's VRF")
    l3vni: int = Field(default=BORDER_DEFAULTS["l3vni"], ge=1, le=16_777_214,
                       description="the border VRF's layer-3 VNI (default NVIDIA's 5004)")
    leak: list[LeakedTenant] = Field(
        default_factory=lambda: list(BORDER_LEAK), min_length=1, max_length=2,
        description="the tenants whose routes are leaked to and from the border VRF (`route-import from-vrf`, "
        "NVIDIA's EXIT_FILTER and <VRF>_FILTER route-maps and community 11:11; default both)")
    ecmp: int = Field(default=BORDER_DEFAULTS["ecmp"], ge=1, le=128,
                      description="eBGP paths kept for ECMP, in the border VRF (with multipaths both) and at least in "
                      "the default VRF (default NVIDIA's 128)")
    # NVIDIA/enterprise-ras net-configurator/output/2-8-9-800/default/configs/csl-01-config.sh at 993eed6 (and
    # 2-4-5-800's csl-01, 2-8-9-400's core-01 at 2f46cb2): `vrf default ... multipaths ebgp 128`, none in EXIT
    multipaths: Literal["both", "default-only"] = Field(
        default="both", description="where `ecmp` is written: both (the border VRF and the default VRF, the "
        "default) or default-only (the default VRF alone; the border VRF keeps the release's own, as NVIDIA's "
        "csl-01 and core-01)")
    peer_group: Annotated[str, StringConstraints(pattern=PEER_GROUP_PATTERN)] = Field(
        default=BORDER_DEFAULTS["peer_group"], description="the uplinks' BGP peer group in the border VRF (default "
        "exit, NVIDIA's name at 993eed6; its 2-8-9-400 core-01 at 2f46cb2 names it underlay-esl-external)")
    inbound_filter: bool = Field(
        default=True, description="refuse the fabric's own prefixes from the site router (route-map "
        "INBOUND_ERA_PREFIXES on the uplinks' sessions, the default); false writes no inbound route-map, as "
        "NVIDIA's generator, on a collapsed pair only (one ASN: BGP's loop check does the filter's work)")
    # NVIDIA/enterprise-ras net-configurator/output/2-4-5-800/default/configs/csl-01-config.sh at
    # 993eed6a993b668e9ab80556cd973b548612c4a4: `vrf EXIT loopback ip address 172.16.1.183/32`, `vrf EXIT
    # router bgp router-id 172.16.1.183`, `route-map EXIT_FILTER rule 10 action deny` matching prefix list
    # EXIT_LOCAL_IF (that /32); `vrf EXIT evpn vlan 3004`; 2-8-9-400/default/configs/core-01-config.sh at
    # 2f46cb2fca8f4d9b432f9de62957e54aed8f64d9 the same (172.16.176.6/32)
    loopback: bool = Field(
        default=False, description="each border switch gives the border VRF a loopback of its own (a /32 from the "
        "loopbacks pool, from its top down after the tenant VRFs' loopbacks of the same leaf), the VRF's BGP "
        "router-id, and EXIT_FILTER's rule 10 denying it (prefix list <VRF>_LOCAL_IF), as NVIDIA's csl-01 and "
        "core-01; default off: the VRF has no address and takes the switch's router-id")
    l3vni_vlan: int | None = Field(
        default=None, ge=2, le=4094, description="the VLAN NVUE maps the border VRF's layer-3 VNI to (`vrf <vrf> "
        "evpn vlan`; NVIDIA's 3004); default none written, NVUE picks one")


# A MAC address as NVUE's object model takes it (`system global anycast-mac`: six colon-separated hex pairs);
# unicast only (the first octet's low bit clear), so that no switch answers as a multicast group
MAC_PATTERN = r"^[0-9A-Fa-f][02468ACEace](:[0-9A-Fa-f]{2}){5}$"


class NorthSouth(Strict):
    """Role northsouth (docs/northsouth.md): storage and in-band as two tenants of one EVPN fabric."""

    storage: Tenant = Field(default_factory=lambda: Tenant(**TENANT_DEFAULTS["storage"]),
                            description="storage's VLAN, VNI, VRF and layer-3 VNI (default 20, 10020, STORAGE, 4020; "
                            "given, all four, and l3vni_vlan if wanted)")
    inband: Tenant = Field(default_factory=lambda: Tenant(**TENANT_DEFAULTS["inband"]),
                           description="in-band's VLAN, VNI, VRF and layer-3 VNI (default 30, 10030, INBAND, 4030; "
                           "given, all four, and l3vni_vlan if wanted)")
    vrf_loopbacks: bool = Field(
        default=False, description="NVUE: each leaf gives each tenant VRF a loopback of its own (a /32 from the "
        "loopbacks pool, from its top down), the VRF's BGP router-id, and the VRF's l2vpn-evpn address family, as "
        "NVIDIA's generator writes its core pair (csl-01, core-01); default off")
    dscp: bool = Field(
        default=False, description="NVUE: VXLAN copies each packet's DSCP into the outer header and keeps the "
        "inner one at the far end (`nve vxlan encapsulation dscp action copy`, `decapsulation dscp action "
        "preserve`), as the GPU overlay always does and NVIDIA's generator writes on 2-8-9-800's csl-01; default off "
        "(2-4-5-800's csl-01 writes neither)")
    border: Border | None = Field(default=None, description="the fabric's way out to the site's router (NVUE "
                                  "only): border VRF, uplinks by eBGP, route leaking; absent, none")
    segment_mac: Annotated[str, StringConstraints(pattern=MAC_PATTERN)] | None = Field(
        default=None, description="NVUE: the Ethernet segments' system MAC on every node bond (NVIDIA's generator: "
        "44:38:39:FF:00:AA on 2-8-9-400's core pair, 44:38:39:FF:00:AC on 2-4-5-800's); default fabgen's "
        "02:fa:bc:00:00:00, locally administered")
    segment_local_id: Literal["place", "port"] = Field(
        default="place", description="NVUE: each segment's local id: place (the node's place in the fabric + 1, "
        "the default) or port (the leaf port's cage x 10 + its subport, swp1s0 10, as NVIDIA's generator numbers "
        "them; where each node's two legs sit on the same port of both leaves, not on striped racks)")


# BFD timers every platform fabgen writes accepts: NVUE 5.13/5.14 peer-group timers take
# 50-60000 ms and a multiplier of 2-255, 5.15+ profiles 10-4294967 ms and 1-255 (NVIDIA's object
# model, the `nvueschema` package); AVD's eos_cli_config_gen schema takes an EOS multiplier of
# 3-50 (router_bfd); EOS's own interval range is not in a source readable here, so the NVUE
# 5.13/5.14 range (50-60000 ms) stands for it.
BFD_INTERVAL_MS = (50, 60000)
BFD_MULTIPLIER = (3, 50)
BFD_CLASSES = ("leaf_spine", "spine_core", "leaf_host", "overlay", "border", "oob_uplink", "oob_overlay")
# The routed out-of-band network's sessions (oob_design: routed) as NVIDIA's generator times them
# (NVIDIA/enterprise-ras net-configurator/output/2-8-9-400/default/configs/oob-switch-01-config.sh at
# 993eed6a993b668e9ab80556cd973b548612c4a4: `router bfd profile underlay` 300 ms x 3 on the uplinks,
# `profile overlay` 1000 ms x 3 on the loopback EVPN sessions)
OOB_OVERLAY_BFD_MS = 1000


class BfdTimers(Strict):
    """One session class's BFD timers: transmit and receive interval alike, and the multiplier."""

    interval_ms: int = Field(default=300, ge=BFD_INTERVAL_MS[0], le=BFD_INTERVAL_MS[1],
                             description="transmit and minimum receive interval, in milliseconds")
    multiplier: int = Field(default=3, ge=BFD_MULTIPLIER[0], le=BFD_MULTIPLIER[1],
                            description="packets missed before the session is declared down")


def _bfd_class(value: Any) -> Any:
    """A class's value: true is fabgen's default timers, false no BFD (None), a mapping its timers."""
    if value is True:
        return {}
    if value is False:
        return None
    if value is None:
        raise PydanticCustomError("bfd_class", "write true, false or {interval_ms: ..., multiplier: ...}")
    return value


BfdClass = Annotated[BfdTimers | None, BeforeValidator(_bfd_class, json_schema_input_type=bool | BfdTimers)]


class BfdClasses(Strict):
    """BFD on the BGP sessions of each class: true (300 ms x 3), false (none), or the class's timers."""

    leaf_spine: BfdClass = Field(default_factory=BfdTimers, description="leaf-spine sessions: true (300 ms x 3, "
                                 "also where left out), false or {interval_ms, multiplier}")
    spine_core: BfdClass = Field(default_factory=BfdTimers, description="spine-core sessions of a three-tier fabric")
    leaf_host: BfdClass = Field(default_factory=BfdTimers, description="a leaf's sessions with the nodes "
                                "(host_routing bgp), on both ends")
    overlay: BfdClass = Field(default_factory=BfdTimers, description="the loopback-to-loopback EVPN sessions of "
                              "a northsouth fabric on EOS (multihop)")
    border: BfdClass = Field(default=None, description="northsouth.border: the border uplinks' eBGP sessions to "
                             "the site router: none where left out, as NVIDIA's generator writes its `exit` peer "
                             "group (csl-01-config.sh at 993eed6); true (300 ms x 3) or {interval_ms, multiplier}")
    oob_uplink: BfdClass = Field(default_factory=BfdTimers, description="a routed out-of-band network's uplink "
                                 "sessions (oob_design: routed) between its access switches and this north-south "
                                 "fabric's pair, on both ends: 300 ms x 3 where left out, as NVIDIA's `underlay` "
                                 "profile (oob-switch-01-config.sh at 993eed6)")
    oob_overlay: BfdClass = Field(default_factory=lambda: BfdTimers(interval_ms=OOB_OVERLAY_BFD_MS),
                                  description="a routed out-of-band network's loopback EVPN sessions (multihop), on "
                                  "both ends: 1000 ms x 3 where left out, as NVIDIA's `overlay` profile "
                                  "(oob-switch-01-config.sh at 993eed6); true is 300 ms x 3")
    offload: bool = Field(default=False, description="NVUE 5.15 and later: BFD packets sent and checked by the "
                          "switch's ASIC, not its CPU (`router bfd offload enabled`, as NVIDIA's generator writes "
                          "its core pairs: csl-01-config.sh at 993eed6), on every switch with a BFD session; "
                          "default off (the release's default)")


def _bfd(value: Any) -> Any:
    """`bfd: true|false` as it always was: every class on at the default timers, or none."""
    if isinstance(value, bool):
        return {c: value for c in BFD_CLASSES}
    if not isinstance(value, dict):
        raise PydanticCustomError("bfd", f"write true, false or a mapping of session class ({', '.join(BFD_CLASSES)}) "
                                  "to true, false or {interval_ms: ..., multiplier: ...}")
    return value


class EthernetOptions(Strict):
    """QoS, addressing and BGP intent of a RoCE or Spectrum-X fabric; every key has a default."""

    mtu: int = Field(default=9100, ge=1500, le=9216, description="switch port MTU")
    host_mtu: int = Field(default=9000, ge=1500, le=9216, description="host NIC MTU (at most the switch MTU)")
    gid_index: int | None = Field(default=None, ge=0, le=255,
                                  description="NCCL_IB_GID_INDEX when it must be pinned (default: NCCL picks RoCEv2)")
    qps_per_connection: int = Field(default=4, ge=1, le=128,
                                    description="NCCL_IB_QPS_PER_CONNECTION: QPs per connection, for ECMP entropy")
    qos: Qos = Field(default_factory=Qos)
    pools: Pools = Field(default_factory=Pools)
    host_addressing: Literal["p2p", "leaf-subnet", "evpn"] = Field(
        default="p2p", description="p2p: a routed /31 per NIC; leaf-subnet: the host ports of a leaf (one rail of a "
        "unit) share a subnet with the leaf as gateway; evpn: NVIDIA's EVPN-VXLAN overlay on a compute fabric "
        "(NVUE and EOS): every GPU port of a plane in one VLAN stretched over the plane's leaves (or one a rail, "
        "overlay.vlans), its subnet the plane's part of the hosts pool, routed in a GPU VRF with an anycast gateway "
        "(`overlay`)")
    overlay: GpuTenant = Field(default_factory=lambda: GpuTenant(**GPU_TENANT),
                               description="host_addressing evpn: the GPU VLAN, its VNI, the GPU VRF and its layer-3 "
                               "VNI (default NVIDIA's 900, 245900, GPU, 245003; given, all four), l3vni_vlan if "
                               "wanted, and `vlans`")
    asn: Asn = Field(default_factory=Asn)
    host_routing: Literal["static", "bgp"] = Field(
        default="static", description="storage and inband fabrics with p2p addressing: static (each port its own "
        "address and routing table) or bgp (each node also holds a service address, a /32 from the loopbacks pool, "
        "announced by eBGP over every port to its leaves: one address that survives a port or leaf failure)")
    bfd: Annotated[BfdClasses, BeforeValidator(_bfd, json_schema_input_type=bool | BfdClasses)] = Field(
        default_factory=BfdClasses, description="BFD on the BGP sessions: true (every session class at 300 ms x 3, "
        "the border uplinks' too), false (none), or a mapping of session class to true, false or {interval_ms, "
        "multiplier}; left out, every class at 300 ms x 3 but the border uplinks' (none, as NVIDIA's)")
    northsouth: NorthSouth = Field(default_factory=NorthSouth, description="role northsouth: the storage and "
                                   "in-band VLANs, VNIs and VRFs (the hosts pool is cut in two: storage, in-band)")
    adaptive_routing: bool | None = Field(
        default=None, description="Spectrum-X only: adaptive routing on every switch-to-switch port (default on)")
    multipath_aspath_ignore: bool | None = Field(
        default=None, description="NVUE: BGP takes paths through different ASes as equal for ECMP (`path-selection "
        "multipath aspath-ignore`, FRR's `bgp bestpath as-path multipath-relax`) on every switch; default on with "
        "host_addressing evpn (NVIDIA's GPU overlay writes it), off elsewhere")
    bgp_password: Annotated[EnvRef | None, BeforeValidator(_no_literal_secret)] = Field(
        default=None, description="BGP session password, as {env: VARIABLE}; rendered as a reference that the "
        "deploy playbooks fill from that variable")
    anycast_mac: Annotated[str, StringConstraints(pattern=MAC_PATTERN)] | None = Field(
        default=None, description="NVUE, EVPN fabrics (host_addressing evpn, role northsouth): the switch's anycast "
        "MAC, `system global anycast-mac` (NVIDIA's generator: 44:38:39:ff:00:ff); default: not written (the "
        "release's own). The anycast gateway's (VRR) MAC stays 00:00:5e:00:01:01 on every SVI")
    announce: Literal["network", "redistribute"] = Field(
        default="network", description="how each switch announces its loopback in the default VRF: network (a "
        "`network` statement, the default) or redistribute (NVUE: `redistribute connected` through route-map "
        "LOOPBACK_BGP matching `lo`, as NVIDIA's generator writes it); host subnets stay `network` statements")


USER_PATTERN = r"^[a-z_][a-z0-9_-]{0,31}$"
DOMAIN_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
Secret = Annotated[EnvRef, BeforeValidator(_no_literal_secret)]


# Banner text reaches EOS `banner login` (ended by a line `EOF`), NVUE `system message` (a quoted
# shell word in the script) and SONiC's BANNER_MESSAGE: letters, digits, spaces and punctuation
# that none of them interprets (no quotes, '$', '`', '\\', braces or '%'), at most 20 lines of 120.
BANNER_LINE = r"[A-Za-z0-9 .,:;!?#*=+_/()@&<>|~^\[\]-]{0,120}"
# the one brace a banner takes: `{hostname}`, replaced by each switch's name in Python (intent/switches.py
# `_named`), never by a template, as NVIDIA's generator names the switch in its post-login banner
HOSTNAME_TOKEN = "{hostname}"
BANNER_TEXT_LINE = r"(?:[A-Za-z0-9 .,:;!?#*=+_/()@&<>|~^\[\]-]|\{hostname\}){0,120}"
BANNER_PATTERN = rf"^{BANNER_TEXT_LINE}(\n{BANNER_TEXT_LINE}){{0,19}}$"
BannerText = Annotated[str, StringConstraints(pattern=BANNER_PATTERN, min_length=1, max_length=2420)]
SNMP_TEXT_PATTERN = rf"^{BANNER_LINE}$"
# An IANA time zone name (Etc/UTC, Europe/Berlin, America/Argentina/Buenos_Aires); checked
# against spec/timezones.py in validation.
TIMEZONE_PATTERN = r"^[A-Za-z][A-Za-z0-9_+-]{0,30}(/[A-Za-z0-9][A-Za-z0-9_+-]{0,30}){0,2}$"
# An LDAP distinguished name of plain attribute=value parts (dc=example,dc=com).
LDAP_DN_PATTERN = r"^[A-Za-z][A-Za-z0-9-]*=[A-Za-z0-9 ._-]+(,[A-Za-z][A-Za-z0-9-]*=[A-Za-z0-9 ._-]+)*$"
# An Ansible variable name, the key of a value kept in an Ansible Vault file: lower case, as
# Ansible's own variables are, so that the `nv set` scripts, which read the same secret from a
# shell variable of that name, never take PATH or HOME for it.
VAULT_PATTERN = r"^[a-z_][a-z0-9_]{0,63}$"


class VaultRef(Strict):
    """A secret kept in an Ansible Vault file: the name of the variable that holds it, which the
    deploy playbooks read (with --ask-vault-pass or a vault password file)."""

    vault: str = Field(pattern=VAULT_PATTERN, description="Ansible variable name in a vault-encrypted vars file")


def _secret_kind(value: Any) -> str:
    """Which reference a secret is, told by its key, so a bad one gets one message (its own), not
    one for each kind it might have been."""
    return "vault" if isinstance(value, dict) and "vault" in value else "env"


# A baseline secret: an environment variable or an Ansible Vault variable; never its value.
AnySecret = Annotated[Annotated[EnvRef, Tag("env")] | Annotated[VaultRef, Tag("vault")],
                      Discriminator(_secret_kind), BeforeValidator(_no_literal_secret)]


class User(Strict):
    """A local switch account, rendered where a full replace would otherwise remove it (EOS, NVUE).
    Its secrets are environment or Ansible Vault references: the deploy playbooks fill them, fabgen
    never sees them."""

    name: Annotated[str, StringConstraints(pattern=USER_PATTERN)] = Field(description="login name")
    role: Literal["admin", "read-only"] = Field(
        default="admin", description="admin: EOS network-admin (privilege 15), NVUE system-admin; read-only: EOS "
        "network-operator, NVUE nvue-monitor")
    password_hash: AnySecret = Field(description="the crypt(3) SHA-512 hash ($6$...) as {env: VARIABLE} or {vault: "
                                     "variable} (an Ansible Vault variable)")
    ssh_key: Secret | None = Field(default=None, description="{env: VARIABLE} holding one OpenSSH public key line "
                                   "(EOS; NVUE takes key and type apart, add it on the switch)")


class Management(Strict):
    """The switches' management plane: the out-of-band port, its VRF, a default route and services.
    A configuration applied by full replace must carry all of it, or the switch drops off the network."""

    prefix: str = Field(description="IPv4 prefix of the management network; switches take its host addresses "
                        "in switch order, skipping the gateway")
    gateway: str | None = Field(default=None, description="default gateway of the management VRF (default: the "
                                "prefix's last host address, with a warning)")
    vrf: Name | None = Field(default=None, description="management VRF (default: EOS MGMT; SONiC and NVUE "
                             "have one, named mgmt)")
    ntp: list[str] = Field(default_factory=list, max_length=8, description="NTP servers: addresses, or DNS names "
                           "where dns is set (DHCP hands out IPv4 addresses only)")
    dns: list[str] = Field(default_factory=list, max_length=3, description="DNS server addresses")
    syslog: list[str] = Field(default_factory=list, max_length=8, description="syslog server addresses")
    domain: Annotated[str, StringConstraints(pattern=DOMAIN_PATTERN, max_length=253)] | None = Field(
        default=None, description="DNS domain")
    users: list[User] = Field(default_factory=list, max_length=16, description="local accounts (EOS, NVUE)")




class Banner(Strict):
    """Login banners (NVUE system message, EOS banner, SONiC BANNER_MESSAGE)."""

    login: BannerText | None = Field(default=None, description="shown before login (NVUE pre-login, EOS banner "
                                     "login, SONiC login); {hostname} is each switch's name, in either banner "
                                     "(NVIDIA's post-login banner names the switch)")
    motd: BannerText | None = Field(default=None, description="shown after login (NVUE post-login, EOS banner "
                                    "motd, SONiC motd)")
    # both banners take {hostname}: the switch's name, as NVIDIA's post-login banner names it


class Aaa(Strict):
    """A remote AAA server group; local accounts stay as the fallback."""

    protocol: Literal["tacacs+", "radius", "ldap"] = Field(description="tacacs+ (NVUE, EOS, SONiC), radius (NVUE, "
                                                           "EOS, SONiC) or ldap (NVUE)")
    servers: list[str] = Field(min_length=1, max_length=4, description="server addresses, in order of preference")
    secret: AnySecret = Field(description="the shared key (TACACS+, RADIUS) or the LDAP bind password, as {env: "
                              "VARIABLE} or {vault: variable}")
    base_dn: Annotated[str, StringConstraints(pattern=LDAP_DN_PATTERN, max_length=200)] | None = Field(
        default=None, description="ldap: the search base (required for ldap)")
    bind_dn: Annotated[str, StringConstraints(pattern=LDAP_DN_PATTERN, max_length=200)] | None = Field(
        default=None, description="ldap: the account the switch binds as (required for ldap)")
    fallback_local: bool = Field(default=True, description="local accounts when no server answers (authentication "
                                 "order: remote, then local)")


class ControlPlane(Strict):
    """The control-plane ACL: who may reach the switch's management services."""

    allow: list[str] = Field(default_factory=list, max_length=16, description="IPv4 prefixes admitted to SSH, SNMP "
                             "and the API (and ICMP); everything else sent to the switch's management services is "
                             "dropped (at least one, unless builtin)")
    builtin: bool = Field(default=False, description="NVUE: bind Cumulus Linux's own control-plane ACLs "
                          "`acl-default-dos` and `acl-default-whitelist` (the management services from anywhere) "
                          "instead of fabgen's ACL of the allow prefixes, as NVIDIA's generator does; allow then "
                          "left out (default false: fabgen's ACL)")
    deploy_from: str | None = Field(default=None, description="the IPv4 prefix the deploy (Ansible) runs from; an "
                                    "ACL that does not admit it is refused (default: the fabric's management prefix)")


class SnmpUser(Strict):
    """An SNMPv3 user with authentication (SHA) and privacy (AES-128)."""

    name: Annotated[str, StringConstraints(pattern=USER_PATTERN)] = Field(description="SNMPv3 user name")
    auth: AnySecret = Field(description="SHA authentication passphrase, as {env: VARIABLE} or {vault: variable}")
    priv: AnySecret = Field(description="AES-128 privacy passphrase, as {env: VARIABLE} or {vault: variable}")


class Snmp(Strict):
    """SNMPv3 only (authPriv): no community strings."""

    users: list[SnmpUser] = Field(min_length=1, max_length=8)
    location: Annotated[str, StringConstraints(pattern=SNMP_TEXT_PATTERN, min_length=1, max_length=80)] | None = None
    contact: Annotated[str, StringConstraints(pattern=SNMP_TEXT_PATTERN, min_length=1, max_length=80)] | None = None


class Sflow(Strict):
    """sFlow sampling to collectors (NVUE, EOS, SONiC)."""

    collectors: list[str] = Field(min_length=1, max_length=2, description="collector addresses (UDP 6343)")
    sample_rate: int = Field(default=16384, ge=256, le=1_000_000, description="one packet in this many sampled")


class Telemetry(Strict):
    """Telemetry the switch exports."""

    wjh: bool | None = Field(default=None, description="NVUE (Spectrum): What Just Happened drop reports with the "
                             "forwarding triggers l2, l3 and tunnel, as NVIDIA's generator writes them (default on "
                             "NVUE with a baseline: on)")
    histograms: bool | None = Field(default=None, description="NVUE (Spectrum): ingress and egress buffer and "
                                    "counter histograms on every used switch port (default off)")
    histogram_settings: bool | None = Field(
        default=None, description="NVUE (Spectrum): the histograms' global settings as NVIDIA's generator writes them "
        "(csl-01-config.sh of 2-8-9-800 at 993eed6): counter bins from 3552, size 55008; buffer bins from 960, "
        "egress size 9830400, ingress 2457600; sample interval 1024; snapshots every 10 s into "
        "/var/run/cumulus/histogram_stats, 120 kept (default off: the release's own)")
    sflow: Sflow | None = None
    gnmi: bool | None = Field(default=None, description="streaming telemetry: EOS `management api gnmi`, SONiC "
                              "GNMI, NVUE gnmi-server (default off)")


class BaselineSettings(Strict):
    """The baseline's settings; every key left out is inherited (site, fabric, role)."""

    timezone: Annotated[str, StringConstraints(pattern=TIMEZONE_PATTERN)] | None = Field(
        default=None, description="IANA time zone (Etc/UTC); NVIDIA's generator writes Etc/Zulu")
    banner: Banner | None = None
    aaa: Aaa | None = None
    control_plane: ControlPlane | None = None
    snmp: Snmp | None = None
    telemetry: Telemetry | None = None
    api: bool | None = Field(default=None, description="the switch's HTTPS API: NVUE `system api`, EOS "
                             "`management api http-commands` in the management VRF (default on NVUE: on)")
    auto_save: bool | None = Field(default=None, description="NVUE: `system config auto-save` (default: on, as "
                                   "NVIDIA writes it)")
    builtin_roles: bool | None = Field(default=None, description="NVUE: write NVUE's own AAA classes (nvapply, "
                                       "nvshow, sudo) and roles (nvue-admin, nvue-monitor, system-admin) and, "
                                       "without aaa, the authentication order `local`, as NVIDIA's generator "
                                       "re-declares them (default: left to the release, which has the same)")
    ssh_server: bool | None = Field(default=None, description="NVUE: write `system ssh-server state enabled`, as "
                                    "NVIDIA's generator does (true only: the deploy runs over SSH; default: not "
                                    "written, the server at the release's default, on)")
    users: list[User] | None = Field(default=None, max_length=16, description="local accounts everywhere the "
                                     "baseline applies; a fabric's management.users replaces them there")
    ntp: list[str] | None = Field(default=None, max_length=8, description="NTP servers (addresses, or names with "
                                  "dns) of every fabric whose management block gives none; per fabric, not per role")
    dns: list[str] | None = Field(default=None, max_length=3, description="DNS server addresses of every fabric whose "
                                  "management block gives none")
    syslog: list[str] | None = Field(default=None, max_length=8, description="syslog server addresses of every fabric "
                                     "whose management block gives none")


SwitchRole = Literal["leaf", "spine", "core", "access"]


class Baseline(BaselineSettings):
    """The switch baseline every operator's security review asks for: one block of site defaults
    (top-level `baseline`), overridden key by key per fabric (`fabrics[].baseline`) and per switch
    role (`roles`) in either."""

    roles: dict[SwitchRole, BaselineSettings] = Field(default_factory=dict, description="per switch role (leaf, "
                                                      "spine, core, access: the out-of-band switches): keys that "
                                                      "replace the block's own for that role")


class Provisioning(Strict):
    """Zero-touch provisioning of the switches from one server on the management network:
    DHCP (dnsmasq) with a reservation per switch of the MAC map, and the files a static web
    server serves (docs/guide/bring-up.md)."""

    server: str = Field(description="IPv4 address of the provisioning server (DHCP and HTTP) inside a fabric's "
                        "management prefix, outside its switches' addresses")
    interface: DeviceName = Field(default="eth0", description="the server's interface on that management network "
                                  "(its netplan and dnsmasq's interface)")
    mac_map: Annotated[str, StringConstraints(max_length=1024)] = Field(
        description="CSV of switch,mac (each switch's management-port MAC); relative to the inventory")
    http_port: int = Field(default=80, ge=1, le=65535, description="the web server's TCP port")


def _management_mapping(value: Any) -> Any:
    """The version-1 form, a bare prefix, is the mapping with only `prefix`."""
    return {"prefix": value} if isinstance(value, str) else value


def _oob_topology(value: Any) -> Any:
    """An out-of-band network is one tier of access switches: its topology goes without saying."""
    if isinstance(value, dict) and value.get("role") == "oob" and "topology" not in value:
        return {**value, "topology": "fat-tree"}
    return value


# The routed out-of-band network (oob_design: routed) as NVIDIA's generator writes it: NVIDIA/enterprise-ras
# net-configurator/output/2-8-9-400/default/configs/oob-switch-01-config.sh at
# 993eed6a993b668e9ab80556cd973b548612c4a4 (`bridge domain br_default vlan 200 vni 4200`, `vrf OOB evpn vni
# 5001`, `vrf OOB evpn vlan 3001`) and 2-4-5-800/default/configs/csl-01-config.sh at the same commit (the
# pair's `service dhcp-relay OOB ... upstream-interface vlan3001_l3`)
OOB_ROUTED_DEFAULTS: dict[str, Any] = {"vrf": "OOB", "l3vni": 5001, "l3vni_vlan": 3001, "asn": 4_200_030_000}


class OobRouted(Strict):
    """role oob, oob_design routed: the access switches as EVPN VTEPs routed to a north-south pair
    (docs/cluster.md, "A routed out-of-band network")."""

    northsouth: Name | None = Field(default=None, description="the north-south fabric (NVUE, EVPN) whose first "
                                    "leaf pair takes every access switch's two uplinks (default: the cluster's "
                                    "only northsouth fabric)")
    vni: int | None = Field(default=None, ge=1, le=16_777_214, description="layer-2 VNI of oob_vlan (default 4000 "
                            "+ oob_vlan: NVIDIA's VLAN 200 on VNI 4200)")
    vrf: Annotated[str, StringConstraints(pattern=VRF_PATTERN)] = Field(
        default=OOB_ROUTED_DEFAULTS["vrf"], description="the VRF of the management VLAN's gateway on the access "
        "switches and the pair (default NVIDIA's OOB); a name of its own, as a tenant's VRF")
    l3vni: int = Field(default=OOB_ROUTED_DEFAULTS["l3vni"], ge=1, le=16_777_214,
                       description="the VRF's layer-3 VNI (default NVIDIA's 5001)")
    l3vni_vlan: int = Field(default=OOB_ROUTED_DEFAULTS["l3vni_vlan"], ge=2, le=4094,
                            description="the VLAN NVUE maps the layer-3 VNI to (`vrf <vrf> evpn vlan`; default "
                            "NVIDIA's 3001): its interface vlan<n>_l3 is the DHCP relay's upstream interface")
    uplink_speed: int | None = Field(
        default=None, ge=1, le=3200,
        description="Gb/s of the uplinks to the north-south pair, both ends: a speed the access switch's uplinks run "
        "(SN2201: 100) and the pair's cages break out to (SN5600: 100 8x); the pair's ends then take whole cages of "
        "their own below the border's, as NVIDIA's generator breaks a cage out 8 x 100G for them; default: the pair's "
        "ports at its node ports' speed (docs/hardware.md, \"Port speeds\")")
    loopbacks: Annotated[str, StringConstraints(max_length=43)] = Field(
        description="IPv4 prefix of the access switches' loopbacks (router-id, VTEP): one /32 each, in planned "
        "order, from its first address after the network's; outside every other pool")
    asn: int = Field(default=OOB_ROUTED_DEFAULTS["asn"], ge=1, le=4_294_967_294,
                     description="ASN of the first access switch (+1 each, in planned order; default 4200030000)")
    dhcp_server: Annotated[str, StringConstraints(max_length=15)] | None = Field(
        default=None, description="IPv4 address of the DHCP server the pair relays the management VLAN's "
        "requests to, in the VRF (default: provisioning.server)")
    # NVIDIA/enterprise-ras net-configurator/output/2-8-9-400/default/configs/oob-switch-01-config.sh at
    # 993eed6a993b668e9ab80556cd973b548612c4a4 (`vrf OOB loopback ip address 172.16.176.121/32`, `vrf OOB
    # router bgp router-id 172.16.176.121`; `redistribute connected route-map LOOPBACK_BGP`) and
    # 2-4-5-800/default/configs/csl-01-config.sh at the same commit (`vrf OOB loopback ip address
    # 172.16.1.151/32`; `route-map EVPN_OOB_OUT` outbound on the `overlay` group's l2vpn-evpn)
    vrf_loopbacks: bool = Field(
        default=False, description="the out-of-band VRF gets a loopback of its own on each switch of the pair and "
        "each access switch (a /32 of `loopbacks` from its top down: the pair's two, then each access switch in "
        "planned order), its BGP router-id, as NVIDIA's `vrf OOB loopback`; default off: the VRF takes the "
        "switch's router-id")
    announce: Literal["network", "redistribute"] = Field(
        default="network", description="how each access switch announces its loopback: network (a `network` "
        "statement, as every fabgen switch, the default) or redistribute (`redistribute connected` through "
        "route-map LOOPBACK_BGP admitting `lo` alone, NVIDIA's oob-switch-01)")
    evpn_filter: bool = Field(
        default=False, description="the pair sends the access switches only the management VLAN's type-2 routes "
        "(NVIDIA's route-map EVPN_OOB_OUT, outbound on the EVPN sessions to them: MAC/IP routes inside the "
        "management prefix permitted, other MAC/IP routes denied, every other EVPN route permitted); default "
        "off: they receive every type-2 route of the pair and import none of another VNI")


class TierCabling(Strict):
    """How one tier of a fabric is cabled: its length, its medium, or both (docs/hardware.md,
    "Cables and optics")."""

    length_m: int | None = Field(default=None, ge=1, le=10_000, description="the longest run of the tier in metres, "
                                 "patch panels included (default: node_leaf 30, leaf_spine 50, spine_core 100)")
    media: Literal["dac", "acc", "aoc", "mmf", "smf", "fr4", "utp"] | None = Field(
        default=None, description="dac, acc (active or linear active copper), aoc, mmf (multimode), smf (single-mode), "
        "fr4 (single-mode duplex LC), utp (RJ45); default: the cheapest the switch offers that reaches length_m")
    speed: int | None = Field(
        default=None, ge=1, le=3200,
        description="Gb/s of every port of the tier, each cage split into as many ports as its switch model runs "
        "at that speed (SN5600: 400 2x, 200 4x); node_leaf: the host ports, a speed the switch and the NICs run "
        "(default: the NICs' speed); leaf_spine (a collapsed pair: its peer links) and spine_core: a whole multiple "
        "of node_leaf's, on NVUE only where it differs from it (default: node_leaf's; spine_core: leaf_spine's). "
        "Links are counted at their speed: a leaf's uplink bandwidth is its uplinks x their speed; on an "
        "out-of-band network (NVUE) node_leaf alone, a speed its access ports run, written as each used access "
        "port's `link speed` (NVIDIA's SN2201: 1) "
        "(docs/hardware.md, \"Port speeds\")")


class Cabling(Strict):
    """The physical layer per tier: the BOM's cables and transceivers follow it."""

    node_leaf: TierCabling = Field(default_factory=TierCabling, description="nodes to leaves")
    leaf_spine: TierCabling = Field(default_factory=TierCabling, description="leaves to spines")
    spine_core: TierCabling = Field(default_factory=TierCabling, description="spines to cores")


class Fabric(Strict):
    """One fabric: a kind, a platform, a topology and the node groups attached to it."""

    @model_validator(mode="before")
    @classmethod
    def _defaults_by_role(cls, value: Any) -> Any:
        return _oob_topology(value)

    name: Name = Field(description="fabric name (at most 40 characters: it prefixes every switch name)")
    kind: Kind = Field(description="InfiniBand, RoCEv2 Ethernet, NVIDIA Spectrum-X, or ethernet (plain access "
                       "switches: the out-of-band network, role oob)")
    platform: str = Field(description="; ".join(f"{k}: {' | '.join(platforms_of(k))}" for k in KINDS))
    topology: Literal["rail-optimized", "fat-tree"] = Field(
        description="rail-optimized: NIC i of every node of a unit on leaf i; fat-tree: a node's NICs on one leaf "
        "(role oob: not needed, one tier of access switches)")
    switch_model: str = Field(description="switch model: a catalog key or a switch_models entry")
    role: Role = Field(default="compute", description="what the fabric carries: compute (NCCL over the rails), "
                       "storage, inband (in-band management), oob (BMCs) or northsouth (storage and in-band on one "
                       "EVPN fabric, each node's pair of storage ports bonded to a leaf pair: docs/northsouth.md); "
                       "it attaches its node groups' ports of that role, and a node group is on at most one fabric "
                       "per role")
    node_groups: list[str] = Field(min_length=1, description="every port of the fabric's role of these groups "
                                   "attaches")
    manages: list[str] | None = Field(
        default=None, description="role oob: the fabrics whose switches' management ports take an access port of "
        "this network (default: every other fabric)")
    oob_vlan: int = Field(default=10, ge=2, le=4094, description="role oob: the management VLAN of every access port")
    oob_design: Literal["layer2", "routed"] = Field(
        default="layer2", description="role oob: layer2 (each access switch bonds two uplinks to the site's "
        "management network and routes statically; the default) or routed (NVIDIA's: each access switch an EVPN "
        "VTEP with an unnumbered eBGP uplink to each switch of a north-south pair, the management VLAN on a VNI "
        "with an anycast gateway in a VRF, the pair relaying DHCP; NVUE only; oob_routed)")
    oob_routed: OobRouted | None = Field(default=None, description="role oob, oob_design routed: the VNI, VRF, "
                                         "loopbacks, ASNs and DHCP server of the routed design")
    scalable_unit: int | None = Field(
        default=None, ge=1, le=4096,
        description="rail-optimized only: nodes per scalable unit (default: the most a leaf takes at the ratio; a "
        "northsouth fabric of NVL72 trays: sized by racks as NVIDIA's, docs/northsouth.md); more than a leaf takes "
        "makes every rail of a unit a spine-leaf group of several leaves (NVIDIA's GB200 SuperPOD: 144 trays, 8 "
        "racks)",
    )
    oversubscription: float = Field(
        default=1, ge=1, le=64, description="leaf downlink:uplink bandwidth; 1 = non-blocking"
    )
    tiers: Annotated[Literal["auto", 1, 2, 3], WholeNumber] = Field(
        default="auto", description="auto | 1 | 2 | 3; 1 is one fat-tree switch with every port for NICs, and on a "
        "rail-optimized northsouth fabric the collapsed pair: two leaves joined by 20 iBGP peer links (one ASN), no "
        "spines, each node's two ports one on either leaf, as many planned nodes as a leaf has node ports at the "
        "ratio, its support and storage servers (role storage) on its own ports, no scalable_unit (NVIDIA's "
        "2-8-9-400 core pair; NVLink racks: at most two, the servers after their trays' ports as NVIDIA's csl-01/02, "
        "docs/northsouth.md)")
    pair: bool = Field(
        default=False, description="rail-optimized compute fabrics of roce or spectrum-x: each plane's rails split "
        "over two leaves joined by peer links, no spine (NVIDIA's 2-8-9-800 and 2-8-9-400-SP at their default "
        "size): odd rails on leaf01, even rails on leaf02, a node's ports on a leaf in rail order, as many routed "
        "unnumbered iBGP peer links (one ASN for the pair) as a leaf has node ports at the ratio; at most the "
        "nodes whose ports fill one leaf's node ports (docs/planes.md)")
    planned_nodes: int | None = Field(
        default=None, ge=1, le=2 * MAX_NODES_PER_GROUP,
        description="compute nodes the fabric is built for: spines, cores, ports, addresses and name widths are "
        "sized for it, and adding nodes up to it only adds (default: the nodes present)")
    planes: Annotated[Literal[1, 2, 4], WholeNumber] = Field(
        default=1, description="roce and spectrum-x: independent networks, each with its own switches, names, "
        "addresses and ASNs (`<name>-plane<p>`); every compute NIC is split into this many ports, port p on "
        "plane p (a ConnectX-8 800G: 2 x 400G or 4 x 200G)")
    infiniband: InfinibandOptions | None = Field(default=None, description="kind infiniband only")
    ethernet: EthernetOptions | None = Field(default=None, description="kinds roce and spectrum-x only")
    management: Annotated[Management | None, BeforeValidator(_management_mapping)] = Field(
        default=None, description="the switches' management plane: an IPv4 prefix, or a mapping with prefix, "
        "gateway, vrf, ntp, dns, syslog, domain and users")
    platform_version: str | None = Field(
        default=None, description="release of the switch OS the configs are written for (" + "; ".join(
            f"{n}: {p.versions[0]} to {p.versions[-1]}, default {p.default_version}"
            for n, p in PLATFORMS.items() if p.versions) + ")")
    cabling: Cabling = Field(default_factory=Cabling, description="length, medium or speed per tier: cabling.csv's "
                             "media, the BOM's cables and transceivers, each cage's breakout")
    baseline: Baseline | None = Field(default=None, description="the switch baseline for this fabric's switches: "
                                      "keys that replace the site's (top-level baseline) here")


class CustomNic(Strict):
    rdma: DeviceName = Field(description="RDMA device name, e.g. mlx5_0")
    netdev: DeviceName | None = Field(default=None, description="netdev name (default: the RDMA name); on a "
                                      "northsouth fabric's nodes not bond0 nor bond0.<tenant VLAN>, fabgen's names")
    label: Text | None = Field(default=None, description="physical port label")
    cage: Text | None = Field(default=None, description="node-side cage (for transceiver counts)")
    speed: int = Field(ge=10, le=3200, description="Gb/s")


class CustomPort(Strict):
    """A node port of another role than compute: storage, in-band management or the BMC."""

    role: Literal["storage", "inband", "oob"] = Field(description="storage, inband (in-band management) or oob "
                                                      "(the BMC port)")
    rdma: DeviceName = Field(description="RDMA device name (a BMC: any name for its port, e.g. bmc)")
    netdev: DeviceName | None = Field(default=None, description="netdev name (default: the RDMA name); on a "
                                      "northsouth fabric's nodes not bond0 nor bond0.<tenant VLAN>, fabgen's names")
    label: Text | None = Field(default=None, description="physical port label")
    cage: Text | None = Field(default=None, description="node-side cage (for transceiver counts; default: the "
                              "RDMA name, RJ45 for an oob port)")
    speed: int = Field(ge=1, le=3200, description="Gb/s")


class CustomNodeModel(Strict):
    """A node model declared inline, for hardware the catalog does not have."""

    @model_validator(mode="before")
    @classmethod
    def _no_gpus_without_nics(cls, value: Any) -> Any:
        """A model with no compute NICs (a storage server, a management host) has no GPUs to count."""
        if isinstance(value, dict) and "gpus" not in value and not value.get("nics"):
            return {**value, "gpus": 0}
        return value

    gpus: int = Field(ge=0, le=1024, description="GPUs per node (default 0 for a model without compute NICs)")
    nics: list[CustomNic] = Field(default_factory=list, max_length=64,
                                  description="compute NICs in rail order (none: a node on no compute fabric)")
    ports: list[CustomPort] = Field(default_factory=list, max_length=16, description="storage, in-band and BMC "
                                    "ports; a fabric of that role attaches them in this order (two: dual-homed)")
    vendor: Text = Field(default="custom", description="BOM text")
    part: Text = Field(default="", description="BOM part number (default: the key)")
    nic_model: Text = Field(default="compute NIC", description="BOM text for the NICs")
    transceiver: Text = Field(default="transceiver", description="BOM text: node-side, one per used cage")
    plane_rdma: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.{}-]{1,64}$")] | None = Field(
        default=None, description="RDMA (and netdev) name pattern of a NIC's ports when it is split for a "
        "multi-plane fabric: {k} = planes x rail + plane, {rail}, {plane} (0-based); e.g. 'mlx5_{k}'")
    nvlink_domain: int = Field(
        default=1, ge=1, le=576, description="nodes per NVLink domain (a rack of NVL72 trays: 18); scalable units, "
        "Slurm blocks and the accelerator label keep a domain whole")
    rack_units: int = Field(default=1, ge=1, le=60, description="height in rack units (NetBox's device type "
                            "u_height)")


BufferTable = dict[Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]{1,64}$")],
                   dict[Annotated[str, StringConstraints(pattern=r"^[a-z_]{1,32}$")],
                        Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_.-]{1,32}$")]]]


class CustomSonicSku(Strict):
    """What a SONiC image needs to load a config_db.json for a switch the catalog lacks: the SKU
    it is loaded against and that SKU's buffer pools and profiles, copied from its
    buffers_defaults template in sonic-buildimage (fabgen never computes buffer sizes)."""

    hwsku: SkuName = Field(description="DEVICE_METADATA hwsku, the SKU folder name in sonic-buildimage")
    platform: SkuName = Field(description="DEVICE_METADATA platform, e.g. x86_64-arista_7060x6_64pe_b")
    asic: Literal["broadcom", "mellanox", "barefoot", "marvell", "cisco-8000", "other"] = Field(
        description="switch ASIC vendor: mellanox and barefoot run SONiC's dynamic buffer model, the rest the "
        "traditional one")
    buffer_pools: BufferTable = Field(description="BUFFER_POOL rows of the SKU's buffers template")
    buffer_profiles: BufferTable = Field(description="BUFFER_PROFILE rows of the SKU's buffers template; must "
                                         "define ingress_lossy_profile, egress_lossy_profile, "
                                         "egress_lossless_profile")
    cable_lengths: dict[Literal["node-leaf", "leaf-spine", "spine-core"], Annotated[
        str, StringConstraints(pattern=r"^[0-9]{1,5}m$")]] = Field(
        default_factory=dict, description="CABLE_LENGTH per link tier (default SONiC's 5m, 40m, 300m); "
        "traditional model: lengths the SKU's pg_profile_lookup.ini lists")


class CustomSwitchModel(Strict):
    """A switch model declared inline."""

    kinds: list[Kind] = Field(min_length=1, description="fabric kinds it serves")
    platforms: list[str] = Field(min_length=1, description="platforms it runs")
    ports: int = Field(ge=2, le=1024, description="logical ports at `speed`")
    speed: int = Field(ge=1, le=3200, description="Gb/s per port (1: RJ45 access ports)")
    port_name: FormatText = Field(default="port{n}", description="format pattern over n (1-based) and i (0-based)")
    ports_per_cage: int = Field(default=1, ge=1, le=8, description="ports per cage (for transceiver counts)")
    vendor: Text = Field(default="custom", description="BOM text")
    part: Text = Field(default="", description="BOM part number (default: the key)")
    transceiver: Text = Field(default="transceiver", description="BOM text: one per used cage")
    sonic: CustomSonicSku | None = Field(default=None, description="platform sonic: the SKU (required there)")
    rack_units: int = Field(default=1, ge=1, le=60, description="height in rack units (NetBox's device type "
                            "u_height)")


class KubernetesOptions(Strict):
    """Topology labels for Kubernetes schedulers (OUT/kubernetes/)."""

    label_keys: Literal["topograph", "legacy"] = Field(
        default="topograph", description="topograph: the label keys of NVIDIA topograph 1.x "
        "(fabric.topograph.run/tier-N); legacy: those of topograph 0.x (network.topology.nvidia.com/leaf, "
        "spine, core) for consumers that still read them")


class Inventory(Strict):
    """The whole inventory (format version 1)."""

    version: Annotated[Literal[1], WholeNumber] = Field(description="inventory format version")
    cluster: Name = Field(description="cluster name, in file headers and the report")
    node_groups: list[NodeGroup] = Field(min_length=1)
    fabrics: list[Fabric] = Field(min_length=1)
    switch_models: dict[Name, CustomSwitchModel] = Field(default_factory=dict)
    node_models: dict[Name, CustomNodeModel] = Field(default_factory=dict)
    kubernetes: KubernetesOptions = Field(default_factory=KubernetesOptions,
                                          description="Kubernetes topology labels and Kueue objects")
    baseline: Baseline | None = Field(default=None, description="the switch baseline of every Ethernet fabric "
                                      "(site defaults): users, AAA, control-plane ACL, banners, timezone, SNMPv3, "
                                      "telemetry, API, auto-save")
    provisioning: Provisioning | None = Field(default=None, description="zero-touch provisioning: a DHCP server "
                                              "and the files a web server serves, from the MAC map")


SCHEMA_ID = "https://fabgen.dev/schema/inventory-v1.json"  # an identifier, not fetched by anything


def json_schema() -> dict[str, Any]:
    """The inventory's JSON Schema (draft 2020-12, as pydantic writes it), with `$schema` and
    `$id` so that editors and validators know its dialect and can refer to it (docs/reference/
    editors.md: the YAML language server reads it from a `# yaml-language-server: $schema=` line)."""
    schema = Inventory.model_json_schema()
    fabric = schema["$defs"]["Fabric"]
    # `topology` goes without saying on an out-of-band network (_oob_topology): required otherwise
    fabric["required"] = [k for k in fabric["required"] if k != "topology"]
    fabric["if"] = {"properties": {"role": {"const": "oob"}}, "required": ["role"]}
    fabric["else"] = {"required": ["topology"]}
    # `management: 10.0.0.0/24` is the prefix alone (_management_mapping)
    fabric["properties"]["management"]["anyOf"].append({"type": "string", "description": "the prefix alone"})
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **schema}
