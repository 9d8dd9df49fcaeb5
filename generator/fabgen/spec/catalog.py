"""Hardware catalog: switch and node models with their real port and device names.

Switch ports are described per *port mode* (the logical port speed a cage is run at):
a Quantum-2 QM9700 has 32 OSFP cages, each carrying two NDR 400G ports, or four
NDR200 ports with splitter cables; an SN5600 has 64 x 800G cages, each splittable
into 2 x 400G. A fabric runs at one link speed (its NICs' speed) and uses the mode of
that speed, so the radix of a switch is `cages x ports-per-cage` at that speed.

Port names are format patterns over these fields, so inline custom models use the
same machinery as the built-in ones:

    c     cage number, 1-based           n     logical port number, 1-based
    j     port within the cage, 1-based  i     logical port number, 0-based
    j0    port within the cage, 0-based  lane  first lane of the port, 0-based, switch-wide
    l     first lane of the port within the cage, 1-based (Arista breakout naming)
    pair, sub2   (j0 // 2 + 1) and (j0 % 2 + 1): NDR200 split naming on Quantum-2

Sources: Quantum-2 cages and split ports: NVIDIA QM97X0 user manual, "Interfaces";
SN5600 and Cumulus `swpNsM` split names: Cumulus Linux 5.14 "Switch Port Attributes";
Arista `EthernetN/L` names: EOS manual, "Ethernet ports"; SONiC names, lanes, aliases and
buffers: the SKUs' files in sonic-buildimage (spec/sonic_skus.py cites each); DGX H100 compute NICs: DGX H100 User
Guide, "Network Modules". The 2026 parts (Quantum-X800 Q3400, DGX B300, GB200/GB300 NVL72 compute trays)
are cited beside their entries and in docs/hardware.md, with what no public source gives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property

from fabgen.spec.platforms import KINDS, platforms_of
from fabgen.spec.sonic_skus import SN5600_O128, TH5_7060X6_O128, SonicSku

# ethernet: plain Ethernet access switches, the out-of-band network (docs/cluster.md)
PLATFORMS_BY_KIND = {kind: platforms_of(kind) for kind in KINDS}

# NVUE's breakout modes (Cumulus Linux 5.x `nv set interface <cage> link breakout`): NVIDIA's
# generator writes 2x, 4x and 8x on SN5600 cages (net-configurator/output/2-8-9-400/default/configs/
# core-01-config.sh, NVIDIA/enterprise-ras at 2f46cb2 and 993eed6); a mode of another split is not one.
NVUE_BREAKOUTS = (1, 2, 4, 8)


@dataclass(frozen=True)
class PortMode:
    """One way of running a switch's cages: logical port speed and how many per cage."""

    speed: int  # Gb/s per logical port
    per_cage: int
    name: str  # format pattern, see module docstring


@dataclass(frozen=True)
class SwitchModel:
    key: str
    vendor: str
    part: str
    description: str
    kinds: tuple[str, ...]
    platforms: tuple[str, ...]
    cages: int
    cage_type: str
    lanes_per_cage: int
    modes: tuple[PortMode, ...]  # the native (fastest) mode first
    transceiver: str  # one per used cage
    custom: bool = False
    sonic: SonicSku | None = None  # platform sonic: the SKU the config_db.json is loaded against
    # Ports apart from the endpoint ports, at their own speed: an access switch's uplinks (SN2201:
    # four 100G QSFP28 beside 48 x 1G RJ45). An out-of-band access switch bonds the first two
    # to the site's management network.
    uplinks: tuple[str, ...] = ()
    uplink_speed: int = 0
    # height in rack units: NetBox's device type needs it (u_height); the catalog entries cite theirs
    rack_units: int = 1

    @property
    def native(self) -> PortMode:
        return self.modes[0]

    def mode_for(self, speed: int) -> PortMode | None:
        for mode in self.modes:
            if mode.speed == speed:
                return mode
        return None

    def speeds(self) -> list[int]:
        return sorted((m.speed for m in self.modes), reverse=True)

    def nvue_mode(self, speed: int) -> PortMode | None:
        """The mode a cage runs `speed` in if NVUE writes it as a breakout (NVUE_BREAKOUTS); None
        where the switch has no such speed or splits a cage another way."""
        mode = self.mode_for(speed)
        return mode if mode is not None and mode.per_cage in NVUE_BREAKOUTS else None

    def nvue_speeds(self) -> str:
        """The speeds NVUE breaks this switch's cages out to, in the catalog's order ("800G, 400G")."""
        return ", ".join(f"{m.speed}G" for m in self.modes if m.per_cage in NVUE_BREAKOUTS)

    def radix(self, speed: int) -> int:
        mode = self.mode_for(speed)
        return 0 if mode is None else self.cages * mode.per_cage

    def port_names(self, speed: int) -> tuple[str, ...]:
        return _port_names(self, speed)

    def port_number(self, speed: int, name: str) -> int:
        """1-based logical port number of a port name (the InfiniBand port number)."""
        return self.port_numbers(speed)[name]

    def port_numbers(self, speed: int) -> dict[str, int]:
        """Port name -> 1-based port number at `speed`: one dict for loops over every port (a
        128k-GPU fabric looks up 2 million port names; a method call each cost 2.9 s)."""
        mode = self.mode_for(speed)
        assert mode is not None
        key = (self.key, speed, mode.name, self.cages, mode.per_cage)
        table = _INDEX_CACHE.get(key)
        if table is None:
            table = {n: i + 1 for i, n in enumerate(self.port_names(speed))}
            _INDEX_CACHE[key] = table
        return table

    def ports_by_cage(self, speeds: tuple[int, ...]) -> tuple[str, ...]:
        """Every port name, cage by cage, each cage split at its own speed (`speeds`, one a cage: a
        switch whose tiers run at different speeds, docs/hardware.md "Port speeds"; 0: a cage
        `breakout disabled`, without ports)."""
        out: list[str] = []
        for c, speed in enumerate(speeds):
            if not speed:  # a cage left unsplit beside a neighbour split a port a lane: no ports
                continue
            per = self.mode_for(speed).per_cage  # type: ignore[union-attr]
            out += self.port_names(speed)[c * per:(c + 1) * per]
        return tuple(out)

    def cage_map(self) -> dict[str, int]:
        """Port name -> its 1-based cage at any speed the model runs (a name means the same cage at
        every speed it appears at: `swp1s0` is cage 1 split 2x or 4x)."""
        out: dict[str, int] = {}
        for mode in self.modes:
            out.update(self.cages_by_port(mode.speed))
        return out

    def cages_by_port(self, speed: int) -> dict[str, int]:
        """Port name -> its 1-based cage at `speed` (transceiver and cable counts)."""
        mode = self.mode_for(speed)
        assert mode is not None
        return {n: (i - 1) // mode.per_cage + 1 for n, i in self.port_numbers(speed).items()}



# Keyed by everything that shapes the names, so inline models of the same name in two
# inventories rendered by one process never share an entry.
_NamesKey = tuple[str, int, str, int, int]  # model key, speed, mode pattern, cages, ports per cage
_NAME_CACHE: dict[_NamesKey, tuple[str, ...]] = {}
_INDEX_CACHE: dict[_NamesKey, dict[str, int]] = {}


def _port_names(model: SwitchModel, speed: int) -> tuple[str, ...]:
    mode = model.mode_for(speed)
    if mode is None:
        return ()
    key = (model.key, speed, mode.name, model.cages, mode.per_cage)
    cached = _NAME_CACHE.get(key)
    if cached is None:
        lanes_per_port = max(1, model.lanes_per_cage // mode.per_cage)
        names = []
        for i in range(model.cages * mode.per_cage):
            c, j0 = divmod(i, mode.per_cage)
            names.append(
                mode.name.format(
                    c=c + 1, j=j0 + 1, j0=j0, n=i + 1, i=i,
                    lane=c * model.lanes_per_cage + j0 * lanes_per_port,
                    l=j0 * lanes_per_port + 1, pair=j0 // 2 + 1, sub2=j0 % 2 + 1,
                )
            )
        cached = tuple(names)
        _NAME_CACHE[key] = cached
    return cached


ROLES = ("compute", "storage", "inband", "oob")  # what a node port is for (docs/cluster.md)


@dataclass(frozen=True)
class Nic:
    """One NIC port of a node: a compute port (in rail order) or a storage, in-band or
    out-of-band (BMC) port."""

    rdma: str  # RDMA device name, as NCCL_IB_HCA and ibv_devices show it (a BMC: its label)
    netdev: str  # default netdev name (InfiniBand mode)
    label: str  # physical port label on the chassis
    cage: str  # the node-side cage it leaves through (transceiver count)
    speed: int
    role: str = "compute"
    # False where no published table (nor the node group's rdma_links file) gives the port's
    # netdev: `netdev` is then the RDMA name, a placeholder no host has (netplans mark it, the
    # host playbook refuses it, validate warns)
    netdev_known: bool = True


@dataclass(frozen=True)
class NodeModel:
    key: str
    vendor: str
    part: str
    description: str
    gpus: int
    nic_model: str
    transceiver: str  # node-side, one per used cage
    nics: tuple[Nic, ...] = field(default_factory=tuple)
    custom: bool = False
    # Nodes per NVLink domain: 1 for a DGX (its own domain), 18 for an NVL72 rack of compute
    # trays. Units, Slurm blocks and the accelerator label keep a domain whole.
    nvlink_domain: int = 1
    # RDMA name pattern of the ports a NIC splits into on a multi-plane Ethernet fabric
    # ({k} = planes x rail + plane, {rail}, {plane}); None: the model cannot run planes.
    plane_rdma: str | None = None
    # The ports of the other roles (storage, in-band, the BMC), in the order a fabric of that
    # role attaches them: a node with two ports of a role is dual-homed, port i to leaf i.
    ports: tuple[Nic, ...] = ()
    # (role, NIC text, node-side transceiver text) for the BOM lines of each other role's ports
    role_parts: tuple[tuple[str, str, str], ...] = ()
    # True where the other roles' RDMA devices are numbered after the compute ones (mlx5_8 after
    # mlx5_0-7), so that they follow the compute ports' count when the NICs split into planes
    ports_follow_planes: bool = False
    # RDMA name -> netdev, from the node group's rdma_links file (rdmalinks.py): every port it names
    # takes that netdev, plane ports included
    netdevs: tuple[tuple[str, str], ...] = ()
    # Where no pattern names the split ports: their RDMA names in k order (planes x rail + plane),
    # and the other roles' devices renamed by the split (PCI enumeration moves them), for the one
    # plane count `plane_counts` allows. Catalog only (the GB300 tray).
    plane_names: tuple[str, ...] = ()
    plane_moves: tuple[tuple[str, str], ...] = ()
    # The RDMA names a converged north-south fabric bonds where they are not the model's two storage
    # ports (the GB300 tray: its one BlueField-3's P1, storage, and P2, in-band); empty: `port_role`'s
    # pair. Catalog only.
    northsouth_ports: tuple[str, ...] = ()
    # The plane counts (beyond 1) the NICs split into: ConnectX-8 runs 2 x 400G on B300 and GB300,
    # 4 x 200G on B300 only (NVIDIA Network Operator, "Software Multiplane": numberOfPlanes 2 or 4,
    # "Quad-Plane (B300 only)")
    plane_counts: tuple[int, ...] = (2, 4)
    # height in rack units (NetBox's u_height); an NVL72 compute tray is 1U of its rack
    rack_units: int = 1
    # The form of the node's cages per role (spec/media.py picks the transceiver by it):
    # osfp-twin-flat (DGX H100/B200: two NICs behind a twin-port flat-top OSFP), osfp (one 400G
    # NIC per flat-top OSFP), osfp-800 (ConnectX-8), qsfp112 (BlueField-3 and ConnectX-7 cards),
    # rj45 (the BMC). A role without one (custom models): the model's own transceiver text.
    forms: tuple[tuple[str, str], ...] = ()
    # The NICs ship inside the system (a DGX, an NVL72 tray): the BOM shows them as included
    nics_included: bool = False

    def form(self, role: str) -> str:
        return dict(self.forms).get(self.port_role(role), "custom")

    def port_role(self, role: str) -> str:
        """The role of the ports a fabric of `role` attaches: a converged north-south fabric bonds
        the node's storage ports (the faster pair of a GB200 tray's two BlueField-3s), or its in-band
        ports where it has no storage ports (a head node) (docs/northsouth.md); a model naming its
        `northsouth_ports` (the GB300 tray's one BlueField-3) bonds those, described as this role's."""
        if role != "northsouth":
            return role
        return "storage" if any(p.role == "storage" for p in self.ports) else "inband"

    @property
    def splits(self) -> bool:
        """The NICs split into plane ports whose names the model knows."""
        return self.plane_rdma is not None or bool(self.plane_names)

    def can_split(self, planes: int) -> bool:
        return planes == 1 or (self.splits and planes in self.plane_counts)

    def role_ports(self, role: str) -> tuple[Nic, ...]:
        """The node's ports of one role, in attachment order."""
        if role == "compute":
            return self.nics
        if role == "northsouth" and self.northsouth_ports:
            return tuple(p for name in self.northsouth_ports for p in self.ports if p.rdma == name)
        role = self.port_role(role)
        return tuple(p for p in self.ports if p.role == role)

    def for_role(self, role: str) -> NodeModel:
        """The model as a fabric of `role` sees it: that role's ports in the place of the compute
        NICs, so a storage or in-band fabric is built, sized and addressed like a compute one."""
        if role == "compute":
            return self
        part = self.port_role(role)
        nic_model, transceiver = next(((n, t) for r, n, t in self.role_parts if r == part),
                                      (f"{part} port", "transceiver"))
        return replace(self, nics=self.role_ports(role), nic_model=nic_model, transceiver=transceiver)

    def plane_nics(self, planes: int) -> tuple[tuple[Nic, ...], ...]:
        """The node's ports on each plane, in rail order: NIC r's port p on plane p, at 1/planes
        of the NIC's speed, each its own RDMA device (its netdev: the rdma_links file's, else a
        placeholder of the same name)."""
        if planes == 1:
            return (self.nics,)
        assert self.splits
        known = dict(self.netdevs)
        out = []
        for p in range(planes):
            ports = []
            for r, nic in enumerate(self.nics):
                name = self.plane_names[planes * r + p] if self.plane_names else \
                    self.plane_rdma.format(k=planes * r + p, rail=r, plane=p)  # type: ignore[union-attr]  # a model names its plane ports one way or the other
                ports.append(Nic(name, known.get(name, name), f"{nic.label} plane {p + 1}", nic.cage,
                                 nic.speed // planes, netdev_known=name in known))
            out.append(tuple(ports))
        return tuple(out)

    def for_planes(self, planes: int) -> NodeModel:
        """The model on a compute fabric of `planes` planes: where the other roles' devices are
        numbered after the compute ones, they move up by the plane ports (DGX B300: the BlueField-3
        ports are mlx5_8-11 beside eight ConnectX-8, mlx5_16-19 beside sixteen split ports)."""
        if planes > 1 and self.plane_moves:
            moves = dict(self.plane_moves)
            return replace(self, ports=tuple(replace(n, rdma=moves[n.rdma], netdev=moves[n.rdma]
                                                     if not n.netdev_known else n.netdev)
                                             if n.rdma in moves else n for n in self.ports),
                           northsouth_ports=tuple(moves.get(n, n) for n in self.northsouth_ports))
        if planes == 1 or not self.ports_follow_planes:
            return self
        shift = len(self.nics) * (planes - 1)

        def moved(n: Nic) -> Nic:
            head, _, number = n.rdma.rpartition("_")
            if not number.isdigit() or n.role == "oob":
                return n
            name = f"{head}_{int(number) + shift}"
            return replace(n, rdma=name, netdev=name if not n.netdev_known else n.netdev)
        return replace(self, ports=tuple(moved(n) for n in self.ports))

    def with_netdevs(self, netdevs: dict[str, str]) -> NodeModel:
        """The model with the netdev names a node of the group reported (its rdma_links file)."""
        def named(n: Nic) -> Nic:
            return replace(n, netdev=netdevs[n.rdma], netdev_known=True) if n.rdma in netdevs else n
        return replace(self, nics=tuple(named(n) for n in self.nics), ports=tuple(named(n) for n in self.ports),
                       netdevs=tuple(sorted(netdevs.items())))

    @cached_property
    def cage_count(self) -> int:
        return len({n.cage for n in self.nics})

    @property
    def speed(self) -> int:
        return self.nics[0].speed


_QUANTUM2_MODES = (
    PortMode(400, 2, "IB1/{c}/{j}"),
    PortMode(200, 4, "IB1/{c}/{pair}/{sub2}"),
)

# rack_units (NetBox's u_height): QM9700/QM9790 1U, SN5600 2U, SN2201 1U and Q3400-RA 4U as their
# user manuals' "Specifications" give them; Arista 7060X5 and 7060X6 2RU (Arista's datasheets). No
# primary source was readable where these were entered: check against the manuals before racking.
SWITCHES: dict[str, SwitchModel] = {
    m.key: m
    for m in (
        SwitchModel(
            "qm9700", "NVIDIA", "MQM9700-NS2F", "Quantum-2 QM9700, 64 x NDR 400G on 32 OSFP, managed",
            ("infiniband",), ("ufm", "opensm"), 32, "OSFP", 8, _QUANTUM2_MODES,
            "MMA4Z00-NS (twin-port 2x400G SR8 OSFP, finned top)",
            rack_units=1,
        ),
        SwitchModel(
            "qm9790", "NVIDIA", "MQM9790-NS2F", "Quantum-2 QM9790, 64 x NDR 400G on 32 OSFP, externally managed",
            ("infiniband",), ("ufm", "opensm"), 32, "OSFP", 8, _QUANTUM2_MODES,
            "MMA4Z00-NS (twin-port 2x400G SR8 OSFP, finned top)",
            rack_units=1,
        ),
        SwitchModel(
            "sn5600", "NVIDIA", "MSN5600", "Spectrum-4 SN5600, 64 x 800GbE OSFP (128 x 400GbE split)",
            ("spectrum-x",), ("nvue",), 64, "OSFP", 8,
            # 8 x 100G: NVIDIA's generator splits SN5600 cages `link breakout 8x` for 100G uplinks
            # (net-configurator/output/2-4-5-800/default/configs/csl-01-config.sh, NVIDIA/enterprise-ras at 993eed6)
            (PortMode(800, 1, "swp{c}"), PortMode(400, 2, "swp{c}s{j0}"), PortMode(200, 4, "swp{c}s{j0}"),
             PortMode(100, 8, "swp{c}s{j0}")),
            "MMA4Z00-NS (twin-port 2x400G SR8 OSFP, finned top)",
            rack_units=2,
        ),
        SwitchModel(
            "arista-7060x5", "Arista", "DCS-7060PX5-64S", "Arista 7060X5, 64 x 400GbE OSFP (Tomahawk 4)",
            ("roce",), ("eos",), 64, "OSFP", 8,
            (
                PortMode(400, 1, "Ethernet{c}/1"), PortMode(200, 2, "Ethernet{c}/{l}"),
                PortMode(100, 4, "Ethernet{c}/{l}"),
            ),
            "OSFP-400G-SR8",
            rack_units=2,
        ),
        # SONiC SKUs (spec/sonic_skus.py): port names, lanes, aliases and buffers of the SKU
        SwitchModel(
            "arista-7060x6-64pe-b", "Arista", "DCS-7060X6-64PE-B",
            "Arista 7060X6-64PE-B, 64 x 800G OSFP (Broadcom Tomahawk 5), SONiC SKU Arista-7060X6-64PE-B-O128: "
            "128 x 400GbE", ("roce",), ("sonic",), 64, "OSFP", 8, (PortMode(400, 2, "Ethernet{lane}"),),
            "OSFP-800G-2SR4 (twin-port 2 x 400G SR4)", sonic=TH5_7060X6_O128,
            rack_units=2,
        ),
        SwitchModel(
            "sn5600-sonic", "NVIDIA", "MSN5600",
            "NVIDIA SN5600, 64 x 800G OSFP (Spectrum-4), SONiC SKU Mellanox-SN5600-O128: 128 x 400GbE",
            ("roce",), ("sonic",), 64, "OSFP", 8, (PortMode(400, 2, "Ethernet{lane}"),),
            "MMA4Z00-NS (twin-port 2x400G SR8 OSFP, finned top)", sonic=SN5600_O128,
            rack_units=2,
        ),
        # SN2201: 48 x 1GbE RJ45 (100M/1G) and 4 x 100GbE QSFP28, Cumulus Linux; NVIDIA's out-of-band
        # switch in DGX SuperPOD and NVL72 racks (SN2201 user manual, "Specifications"; Mission
        # Control north-south guide 2.3.0: "SN2201 (OOB) 48 1G Base-T"). Cumulus names the ports
        # swp1-swp52, the uplinks swp49-swp52.
        SwitchModel(
            "sn2201", "NVIDIA", "MSN2201", "Spectrum SN2201, 48 x 1GbE RJ45 + 4 x 100GbE QSFP28 (out-of-band)",
            ("ethernet",), ("nvue",), 48, "RJ45", 1, (PortMode(1, 1, "swp{c}"),),
            "none (RJ45 copper)", uplinks=("swp49", "swp50", "swp51", "swp52"), uplink_speed=100,
            rack_units=1,
        ),
        # Quantum-X800 Q3400-RA: 144 XDR 800G ports on 72 twin-port OSFP cages (NVIDIA Q3200-RA/Q3400-RA
        # XDR switch systems user manual; DGX SuperPOD B300 XDR RA-11339-001, "Compute fabric").
        # Names are the faceplate's cage/port ("{cage}/{port}"): the OS names of NVOS for InfiniBand
        # are not in a public source (docs/hardware.md); OpenSM and UFM address ports by number.
        SwitchModel(
            "q3400", "NVIDIA", "Q3400-RA", "Quantum-X800 Q3400-RA, 144 x XDR 800G on 72 twin-port OSFP",
            ("infiniband",), ("ufm", "opensm"), 72, "OSFP", 8, (PortMode(800, 2, "{c}/{j}"),),
            "twin-port 2 x 800G XDR OSFP transceiver (1.6T)",
            rack_units=4,
        ),
    )
}


def _dgx_nics() -> tuple[Nic, ...]:
    # (rdma, netdev, OSFP cage, port) by GPU = rail, from the DGX H100 User Guide table.
    rows = (
        ("mlx5_0", "ibp24s0", 4, 2), ("mlx5_3", "ibp64s0", 3, 2),
        ("mlx5_4", "ibp79s0", 3, 1), ("mlx5_5", "ibp94s0", 4, 1),
        ("mlx5_6", "ibp154s0", 1, 2), ("mlx5_9", "ibp192s0", 2, 2),
        ("mlx5_10", "ibp206s0", 2, 1), ("mlx5_11", "ibp220s0", 1, 1),
    )
    return tuple(Nic(r, d, f"OSFP{c}P{p}", f"OSFP{c}", 400) for r, d, c, p in rows)


def _tray_nics(speed: int) -> tuple[Nic, ...]:
    # the guide's table has an "Interface name" column it leaves empty: netdevs unknown
    rows = (("mlx5_0", "Left Bay OSFP P3"), ("mlx5_1", "Left Bay OSFP P4"),
            ("mlx5_4", "Right Bay OSFP P3"), ("mlx5_5", "Right Bay OSFP P4"))
    return tuple(Nic(r, r, label, label, speed, netdev_known=False) for r, label in rows)


BMC = Nic("bmc", "bmc", "BMC", "RJ45", 1, "oob")  # the RJ45 1GbE BMC port: addressed by the BMC, no host netdev
_BMC_PART = ("oob", "BMC (RJ45 1GbE)", "none (RJ45 copper)")


def _host_ports(storage: tuple[tuple[str, ...], ...], inband: tuple[tuple[str, ...], ...],
                speeds: tuple[int, int]) -> tuple[Nic, ...]:
    """Storage and in-band ports ((rdma, label) or (rdma, label, netdev) each: without a published
    netdev the RDMA name stands in, marked unknown), then the BMC."""
    def port(row: tuple[str, ...], speed: int, role: str) -> Nic:
        rdma, label, netdev = (*row, "")[:3]
        return Nic(rdma, netdev or rdma, label, label, speed, role, netdev_known=bool(netdev))
    out = [port(row, speeds[0], "storage") for row in storage]
    out += [port(row, speeds[1], "inband") for row in inband]
    return (*out, BMC)


# DGX H100 / B200: two dual-port cards in slot 1 and slot 2 (ConnectX-7 on H100, BlueField-3 on B200,
# 400G QSFP112 each). NVIDIA's BasePOD deployment guide ("DGX H200/H100 System Network Ports"):
# port 2 of slot 1 and slot 2 carry in-band management and Ethernet storage, port 1 of both storage
# (InfiniBand or Ethernet); the SuperPOD RAs: "each pair of in-band management and storage ports
# provide parallel pathways", the BMC port on the out-of-band network. RDMA and netdev names: DGX
# H100/H200 User Guide, "Network Port Mapping" (Table 5): Slot1 P1 mlx5_7 ibp170s0f0 (Ethernet
# enp170s0f0np0), Slot1 P2 mlx5_8 enp170s0f1np1, Slot2 P1 mlx5_1 ibp41s0f0 (enp41s0f0np0), Slot2
# P2 mlx5_2 enp41s0f1np1. Storage takes port 1 of both cards, in-band port 2 (the order fabgen has
# always cabled them in: mlx5_1 and mlx5_2 first).
_DGX_PORTS = _host_ports((("mlx5_1", "slot2 port1", "ibp41s0f0"), ("mlx5_7", "slot1 port1", "ibp170s0f0")),
                         (("mlx5_2", "slot2 port2", "ibp41s0f1"), ("mlx5_8", "slot1 port2", "ibp170s0f1")),
                         (400, 400))
# DGX B200: the same slots with BlueField-3; no published table of its names (the H100 one is not
# the B200's cards): the H100's RDMA names, netdevs unknown.
_B200_PORTS = _host_ports((("mlx5_1", "slot2 port1"), ("mlx5_7", "slot1 port1")),
                          (("mlx5_2", "slot2 port2"), ("mlx5_8", "slot1 port2")), (400, 400))
# DGX B300: BlueField-3 in slot 1 and slot 2 as on B200. No published table of RDMA or netdev names
# could be read (the DGX B300 User Guide's port table is an image): the eight ConnectX-8 take
# mlx5_0-7 in enumeration order, the BlueField-3 ports the next four, after the plane ports when
# the ConnectX-8 split (NodeModel.for_planes: mlx5_16-19 on two planes), so no name is ever both.
_B300_PORTS = _host_ports((("mlx5_8", "slot1 port1"), ("mlx5_10", "slot2 port1")),
                          (("mlx5_9", "slot1 port2"), ("mlx5_11", "slot2 port2")), (400, 400))
# GB200 compute tray: two BlueField-3 (Mission Control north-south guide 2.3.0, "Compute Tray
# Network Ports": Left Bay BF3 P1 mlx5_2, P2 mlx5_3, Right Bay BF3 P1 mlx5_6, P2 mlx5_7). NVIDIA's
# multi-node tuning guide ("Network Overview"): storage/external on the 400G ports, the in-band
# (internal) network on 200G ports.
_TRAY_PORTS = _host_ports((("mlx5_2", "Left Bay BF3 P1"), ("mlx5_6", "Right Bay BF3 P1")),
                          (("mlx5_3", "Left Bay BF3 P2"), ("mlx5_7", "Right Bay BF3 P2")), (400, 200))
# GB300 compute tray: ONE BlueField-3 B3240, dual-port QSFP112, 2 x 400G, each port to a different
# switch (NVIDIA ERA-00012, NVL72 Enterprise RA, "System Hardware & Components": "Dual-port QSFP112
# NVIDIA BlueField-3 B3240 DPU | 1"; NVIDIA/enterprise-ras net-configurator output 2-4-5-800 at
# 2f46cb2: each tray one north-south bond, one member on each of two switches). Its RDMA and netdev
# names: no primary source could be read. fabgen takes the first two of the GB200 tray's
# storage/in-band names, mlx5_2 and mlx5_3 (P1 and P2 of one card, the Left Bay BF3's): PCI
# enumeration in the guide's tray order (OSFP P3 00:03, P4 02:03, BF3 06:03, Right Bay 10:03,
# 12:03) gives the card those two, and the Right Bay ConnectX mlx5_4/mlx5_5 as the compute names
# already have them; netdevs unknown (check `ibdev2netdev`, give rdma_links, docs/cluster.md). P1
# is the storage port and P2 the in-band port of a design with separate fabrics (each then
# single-homed); the converged north-south fabric bonds the two (`northsouth_ports`).
_GB300_PORTS = (*_host_ports((("mlx5_2", "BF3 P1"),), (("mlx5_3", "BF3 P2"),), (400, 400)), *(
    # and two more RJ45 1GbE out-of-band ports beside the tray's BMC: NVIDIA's NVL72 Enterprise RA
    # (ERA-00012) counts "18 trays x 3 x 1G = 54 ports per rack" on its two in-rack SN2201
    # ("2 SN2201 OOB switches for integrated management access of rack components", "System
    # Hardware & Components"). What the other two are: the Grace host's own 1GbE management port
    # (the operating system's, beside the BMC's) and the BlueField-3's 1GbE out-of-band port (its
    # BMC and Arm's oob_net0: NVIDIA BlueField DPU BSP, "BlueField OOB Ethernet Interface", 1 Gb/s
    # only). No readable NVIDIA table names the tray's three faceplate labels: fabgen labels them
    # BMC, Host 1GbE and BF3 OOB, and cables them in that order (docs/hardware.md, "GB300
    # out-of-band ports").
    Nic("host-1g", "host-1g", "Host 1GbE", "RJ45", 1, "oob"),
    Nic("bf3-oob", "bf3-oob", "BF3 OOB", "RJ45", 1, "oob"),
))


# GB300 tray on a two-plane Spectrum-X fabric (NVL72 Enterprise RA, "Multi-Plane Topology Approach":
# each ConnectX-8 runs 2 x 400G, one port per plane; NVIDIA Network Operator: GB300 "Dual-plane"
# only). No public source gives the split ports' RDMA names: fabgen numbers the devices in PCI
# order of the guide's tray table (Left Bay OSFP P3 00:03, P4 02:03, BF3 06:03; Right Bay 10:03,
# 12:03), each ConnectX-8 two functions: rails 0-1 mlx5_0-3, the one BlueField-3 mlx5_4-5, rails
# 2-3 mlx5_6-9. Check `ibdev2netdev` on the first tray and give an rdma_links
# file (docs/cluster.md) or an inline model if it differs.
_GB300_PLANE_NAMES = tuple(f"mlx5_{i}" for i in (0, 1, 2, 3, 6, 7, 8, 9))
_GB300_PLANE_MOVES = (("mlx5_2", "mlx5_4"), ("mlx5_3", "mlx5_5"))


def _parts(card: str, inband: str = "QSFP112 transceiver") -> tuple[tuple[str, str, str], ...]:
    return (("storage", card, "400G QSFP112 transceiver"), ("inband", card, inband), _BMC_PART)


def _forms(compute: str) -> tuple[tuple[str, str], ...]:
    return (("compute", compute), ("storage", "qsfp112"), ("inband", "qsfp112"), ("oob", "rj45"))


# rack_units: DGX H100/H200 8U, DGX B200 10U (their user guides, "Specifications"); DGX B300 10U is
# assumed to be the B200's chassis height, not verified against a primary source; an NVL72 compute
# tray is 1U of its rack (the default).
NODES: dict[str, NodeModel] = {
    m.key: m
    for m in (
        NodeModel(
            "dgx-h100", "NVIDIA", "DGX H100", "DGX H100, 8 x H100, 8 x ConnectX-7 NDR 400G on 4 twin-port OSFP",
            8, "ConnectX-7 (single-port, network module)", "MMA4Z00-NS-FLT (twin-port 2x400G SR8 OSFP, flat top)",
            _dgx_nics(), ports=_DGX_PORTS, role_parts=_parts("ConnectX-7 dual-port QSFP112 (slot 1, slot 2)"),
            forms=_forms("osfp-twin-flat"), nics_included=True,
            rack_units=8,
        ),
        # DGX H200: the DGX H100's system with H200 GPUs (141 GB HBM3e each, 1,128 GB in all) and the
        # same networking: "Four OSFP ports serving eight single-port NVIDIA ConnectX-7 VPI, 2x
        # dual-port QSFP112 NVIDIA ConnectX-7 VPI, up to 400 Gb/s" (NVIDIA DGX BasePOD reference
        # architecture, "Core Components", "NVIDIA DGX H200 and H100 Systems",
        # docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/
        # latest/core-components.html). One user guide covers both systems (NVIDIA DGX H100/H200 User
        # Guide: "Network Modules", "Network Port Mapping"), so the H100's RDMA names, netdevs and
        # cages stand for the H200's.
        NodeModel(
            "dgx-h200", "NVIDIA", "DGX H200",
            "DGX H200, 8 x H200 (141 GB HBM3e), 8 x ConnectX-7 NDR 400G on 4 twin-port OSFP",
            8, "ConnectX-7 (single-port, network module)", "MMA4Z00-NS-FLT (twin-port 2x400G SR8 OSFP, flat top)",
            _dgx_nics(), ports=_DGX_PORTS, role_parts=_parts("ConnectX-7 dual-port QSFP112 (slot 1, slot 2)"),
            forms=_forms("osfp-twin-flat"), nics_included=True,
            rack_units=8,
        ),
        # DGX B200 keeps the DGX H100 compute layout: 8 single-port ConnectX-7 behind four
        # twin-port OSFP cages, storage on BlueField-3. Its rail order and device names follow
        # the H100 table; check `ibdev2netdev` on the first node and override inline if they differ.
        NodeModel(
            "dgx-b200", "NVIDIA", "DGX B200", "DGX B200, 8 x B200, 8 x ConnectX-7 400G on 4 twin-port OSFP",
            8, "ConnectX-7 (single-port)", "MMA4Z00-NS-FLT (twin-port 2x400G SR8 OSFP, flat top)",
            _dgx_nics(), ports=_B200_PORTS, role_parts=_parts("BlueField-3 dual-port QSFP112 (slot 1, slot 2)"),
            forms=_forms("osfp-twin-flat"), nics_included=True,
            rack_units=10,
        ),
        # DGX B300: eight ConnectX-8 SuperNICs at 800G (XDR InfiniBand, or 2 x 400G Ethernet) behind
        # eight OSFP cages, one NIC each (DGX B300 User Guide, "Network Ports"; RA-11339-001). The
        # guide's RDMA names are not in a public source fabgen could read: mlx5_0-7 in rail order
        # is ConnectX enumeration order, and the netdev defaults to the RDMA name as for any model
        # without a published table; check `ibdev2netdev` and declare a node_models entry if not.
        # On a multi-plane Ethernet fabric each ConnectX-8 runs 2 x 400G (or 4 x 200G), every port
        # its own PCI function and RDMA device, enumerated card by card: mlx5_{planes x rail + plane}.
        NodeModel(
            "dgx-b300", "NVIDIA", "DGX B300", "DGX B300, 8 x B300, 8 x ConnectX-8 800G on 8 OSFP",
            8, "ConnectX-8 SuperNIC (800G)", "800G OSFP transceiver (flat top; XDR or 2 x 400GbE)",
            tuple(Nic(f"mlx5_{i}", f"mlx5_{i}", f"OSFP{i + 1}", f"OSFP{i + 1}", 800, netdev_known=False)
                  for i in range(8)),
            plane_rdma="mlx5_{k}", ports=_B300_PORTS, ports_follow_planes=True,
            role_parts=_parts("BlueField-3 dual-port QSFP112 (slot 1, slot 2)"),
            forms=_forms("osfp-800"), nics_included=True,
            rack_units=10,
        ),
        # GB200 / GB300 NVL72 compute trays: 4 GPUs and 4 compute NICs per tray, 18 trays per rack,
        # the rack one NVLink domain (NVIDIA NVL72 Enterprise RA, "System Hardware & Components";
        # DGX GB200 User Guide, "Networking"). RDMA names and port labels of the GB200 tray:
        # Mission Control north-south network deployment guide 2.3.0, "Compute Tray Network
        # Ports" (Left Bay OSFP P3 mlx5_0, P4 mlx5_1; Right Bay OSFP P3 mlx5_4, P4 mlx5_5; mlx5_2,
        # 3, 6, 7 are the BlueField-3 storage/in-band ports). That guide covers GB200 and GB300
        # NVL72 SuperPODs; the GB300 tray carries ConnectX-8 at 800G in the same four ports and one
        # BlueField-3 B3240 where the GB200 tray has two (ERA-00012; `_GB300_PORTS`).
        NodeModel(
            "gb200-nvl72", "NVIDIA", "GB200 NVL72 compute tray",
            "GB200 NVL72 compute tray, 4 x B200, 4 x ConnectX-7 400G (18 per rack, one NVLink domain)",
            4, "ConnectX-7 (single-port OSFP)", "400G NDR OSFP transceiver (single-port, flat top)",
            _tray_nics(400), nvlink_domain=18, ports=_TRAY_PORTS, role_parts=_parts("BlueField-3 B3240 (2 per tray)"),
            forms=_forms("osfp"), nics_included=True,
        ),
        NodeModel(
            "gb300-nvl72", "NVIDIA", "GB300 NVL72 compute tray",
            "GB300 NVL72 compute tray, 4 x B300, 4 x ConnectX-8 800G (18 per rack, one NVLink domain)",
            4, "ConnectX-8 SuperNIC (800G)", "800G OSFP transceiver (flat top; XDR or 2 x 400GbE)",
            _tray_nics(800), nvlink_domain=18, ports=_GB300_PORTS,
            role_parts=(*_parts("BlueField-3 B3240 dual-port QSFP112 (1 per tray)", "400G QSFP112 transceiver")[:2],
                        ("oob", "BMC, host 1GbE and BF3 OOB (RJ45 1GbE, 3 per tray)", "none (RJ45 copper)")),
            northsouth_ports=("mlx5_2", "mlx5_3"),
            plane_names=_GB300_PLANE_NAMES, plane_moves=_GB300_PLANE_MOVES, plane_counts=(2,),
            forms=_forms("osfp-800"), nics_included=True,
        ),
    )
}


# a ConnectX port's name in InfiniBand mode
_IB_NETDEV = re.compile(r"^ibp(\d+)s(\d+)(?:f(\d+))?$")


def eth_netdev(netdev: str) -> str:
    """ibp24s0 (InfiniBand mode) -> enp24s0np0 (Ethernet mode), ibp170s0f1 -> enp170s0f1np1: systemd's
    name for a ConnectX port, the port number after `np` (DGX H100 User Guide, Table 5); other
    names as declared."""
    m = _IB_NETDEV.match(netdev)
    if not m:
        return netdev
    bus, slot, function = m.groups()
    return f"enp{bus}s{slot}" + (f"f{function}np{function}" if function is not None else "np0")
