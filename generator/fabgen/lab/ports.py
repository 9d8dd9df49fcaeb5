"""Each rendered port's name as the image booted in a lab expects it.

containerlab names a node's ports after the Linux interfaces it creates in the container, and
each kind maps them to the network OS's names its own way (containerlab's docs/manual/kinds/):
cEOS takes `eth1` as Ethernet1 and `eth1_1` as Ethernet1/1 (the underscore form); sonic-vs
takes `eth1` as Ethernet0, the first front-panel port, and netlab's sonic device numbers them
Ethernet{4 * (N - 1)}; Cumulus VX (`nvidia_cumulusvx`, a VM) takes `swpN` by its number alone, so
two breakout lanes of one cage (swp1s0, swp1s1) would be one port: a switch with breakout lanes
gets them numbered densely, cage by cage (swp1s0 -> swp1, swp1s1 -> swp2, swp2s0 -> swp3 for a
two-way breakout). A node's port is its netdev, which any Linux container takes as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from fabgen.emulate.read import BadInput

EOS = re.compile(r"Ethernet(\d+(?:/\d+){0,2})")
SONIC = re.compile(r"Ethernet(\d+)")
NVUE = re.compile(r"swp(\d+)(?:s(\d+))?")
SONIC_LANES = 4  # sonic-vs's front-panel ports: Ethernet0, Ethernet4, ... (eth1, eth2, ...)


def _match(pattern: re.Pattern[str], port: str, device: str, image: str, where: str) -> re.Match[str]:
    m = pattern.fullmatch(port)
    if m is None:
        raise BadInput(f"{where}: {device} {port}: not a port name {image} has")
    return m


def natural(port: str) -> tuple[int, ...]:
    """Ethernet1/10 after Ethernet1/2: the numbers of a port name, in order."""
    return tuple(int(n) for n in re.findall(r"\d+", port))


class Numbering:
    """One switch's ports as its lab image names them, from every port the plan cables on it (so
    a sample names each port as the whole fabric does)."""

    def __init__(self, platform: str, device: str, ports: Iterable[str], where: str) -> None:
        self.platform, self.device, self.where = platform, device, where  # where: the cabling.csv naming them
        self.ports = sorted(set(ports), key=natural)
        self.width, self.breakout = 1, False  # the widest breakout of a cage (Cumulus VX numbering)
        if platform == "nvue":
            lanes = [_match(NVUE, p, device, "Cumulus VX", where).group(2) for p in self.ports]
            self.breakout = any(x is not None for x in lanes)
            self.width = max((int(x) + 1 for x in lanes if x is not None), default=1)
        for p in self.ports:
            self.clab(p)  # every port checked once, before any file is written

    def clab(self, port: str) -> str:
        """The port's name in containerlab (the link endpoint)."""
        if self.platform == "eos":
            return "eth" + _match(EOS, port, self.device, "cEOS", self.where).group(1).replace("/", "_")
        if self.platform == "sonic":
            return f"eth{self.sonic_index(port) + 1}"
        return f"swp{self.vx_index(port)}"

    def sonic_index(self, port: str) -> int:
        n = int(_match(SONIC, port, self.device, "sonic-vs", self.where).group(1))
        if n % SONIC_LANES:
            raise BadInput(f"{self.where}: {self.device} {port}: sonic-vs has no such port (its ports are "
                           "Ethernet0, Ethernet4, ...)")
        return n // SONIC_LANES

    def vx_index(self, port: str) -> int:
        m = _match(NVUE, port, self.device, "Cumulus VX", self.where)
        cage, lane = int(m.group(1)), int(m.group(2) or 0)
        if cage < 1:
            raise BadInput(f"{self.where}: {self.device} {port}: Cumulus VX numbers its ports from swp1")
        return (cage - 1) * self.width + lane + 1 if self.breakout else cage

    def ifindex(self, port: str) -> int:
        """netlab's ifindex: what netlab numbers the port (sonic Ethernet{4 * ifindex}, cumulus
        swp{ifindex}, eos et{ifindex}: the port's place on the switch)."""
        if self.platform == "sonic":
            return self.sonic_index(port)
        if self.platform == "nvue":
            return self.vx_index(port)
        return self.ports.index(port) + 1
