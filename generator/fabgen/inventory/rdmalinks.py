"""Read what a node says its ports are called: the output of `rdma link show` or `ibdev2netdev`.

NVIDIA publishes the RDMA and netdev names of some nodes (DGX H100), not of others (DGX B300,
the NVL72 compute trays, every custom server): there fabgen's netplans could only name a port
after its RDMA device, which no host has as an interface. A node group may give the output of
one of these commands, captured on one of its nodes, as a file beside the inventory
(`node_groups[].rdma_links`); every port of the group then takes the netdev it reports. Formats:

* iproute2 `rdma link show` (rdma/link.c, link_parse_cb): `link mlx5_0/1 state ACTIVE
  physical_state LINK_UP netdev ens6f0np0`; InfiniBand ports without IPoIB show no netdev;
  iproute2 before 2019 prefixed `0/1: ` and wrote `mlx5_0/1:`;
* `ibdev2netdev` (Mellanox mlnx-tools, ofed_scripts/ibdev2netdev): `mlx5_3 port 1 ==> ibp64s0
  (Up)`, and with -v `0000:40:00.0 mlx5_3 (MT4129 - ...) ... fw ... port 1 (ACTIVE) ==> ibp64s0 (Up)`.

Blank lines and `#` comments are skipped; any other line is a located error, as are a device
listed twice and names that are not device names (they reach netplans and scripts).
"""

from __future__ import annotations

import re
from pathlib import Path

from fabgen.errors import Problem

MAX_BYTES = 1024 * 1024  # a node has tens of RDMA devices: a few kB
_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}"
_RDMA_LINK = re.compile(rf"^(?:\d+/\d+:\s+)?(?:link\s+)?(?P<dev>{_NAME})/(?P<port>\d+):?\s(?P<rest>.*)$")
_NETDEV = re.compile(rf"\bnetdev\s+(?P<netdev>{_NAME})(?:\s|$)")
_IBDEV2NETDEV = re.compile(rf"^(?:\S+\s+)?(?P<dev>{_NAME})\s.*?\bport\s+(?P<port>\d+)\s+(?:\([A-Z_]+\)\s+)?"
                           rf"==>\s+(?P<netdev>{_NAME})\s+\(\w+\)\s*$")
_IBDEV2NETDEV_SHORT = re.compile(rf"^(?P<dev>{_NAME})\s+port\s+(?P<port>\d+)\s+==>\s+(?P<netdev>{_NAME})"
                                 r"(?:\s+\(\w+\))?\s*$")


def read_rdma_links(path: Path, shown: str) -> tuple[dict[str, str | None], list[Problem]]:
    """RDMA device -> its netdev (None: the file names the device without one)."""
    try:
        if len(str(path)) > 4096:
            raise OSError("the path is too long")
        if not path.is_file():
            what = "a directory" if path.is_dir() else "not a regular file" if path.exists() else "not found"
            return {}, [Problem(1, 1, "", f"the rdma_links file is {what}: give the saved output of `rdma link "
                                "show` (paths are relative to the inventory)", shown)]
        with path.open("rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            return {}, [Problem(1, 1, "", f"larger than {MAX_BYTES // 1024} KiB: an rdma_links file is one node's "
                                "`rdma link show`", shown)]
        text = raw.decode("utf-8-sig")  # a byte-order mark (a file saved by an editor) is accepted
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [Problem(1, 1, "", f"cannot read the rdma_links file: {getattr(exc, 'strerror', None) or exc}",
                            shown)]
    found: dict[str, str | None] = {}
    first: dict[str, int] = {}
    problems: list[Problem] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parsed = _parse(line.strip())
        if parsed is None:
            problems.append(Problem(lineno, 1, "", "not a line of `rdma link show` (link mlx5_0/1 state ACTIVE ... "
                                    "netdev ens6f0np0) or of `ibdev2netdev` (mlx5_0 port 1 ==> ens6f0np0 (Up))",
                                    shown))
            if len(problems) > 20:
                break
            continue
        dev, port, netdev = parsed
        if port != 1:
            continue  # fabgen's ports are each an RDMA device's port 1 (NCCL_IB_HCA mlx5_N:1)
        if dev in first:
            problems.append(Problem(lineno, 1, "", f"{dev} is listed again (first at line {first[dev]})", shown))
            continue
        first[dev] = lineno
        found[dev] = netdev
    if not found and not problems:
        problems.append(Problem(1, 1, "", "the rdma_links file lists no RDMA device", shown))
    return found, problems


def _parse(line: str) -> tuple[str, int, str | None] | None:
    """(RDMA device, port, netdev or None) of one line, None when it is no line of either command."""
    for rx in (_IBDEV2NETDEV_SHORT, _IBDEV2NETDEV):
        m = rx.match(line)
        if m:
            return m.group("dev"), int(m.group("port")), m.group("netdev")
    m = _RDMA_LINK.match(line)
    if m and re.search(r"\bstate\s+\w+", m.group("rest")):
        netdev = _NETDEV.search(m.group("rest"))
        if netdev is None and re.search(r"\bnetdev\b", m.group("rest")):
            return None  # a netdev that is not a name: refused, never taken as "none"
        return m.group("dev"), int(m.group("port")), netdev.group("netdev") if netdev else None
    return None
