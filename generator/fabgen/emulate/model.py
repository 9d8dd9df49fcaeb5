"""What the emulation builds, in neutral terms: routers (switches) and hosts read from a render.

The translators (eos.py, nvue.py, sonic.py) turn each rendered switch config into a `Router`;
frr.py writes FRR's config from it; lab.py builds namespaces, links and daemons. Nothing here
comes from the inventory or the structured config: only from the files a render wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# fabgen's deepest YAML (an NVUE tree) nests about 12 levels; libyaml's composer recurses in C and
# a document nested 100,000 deep ends the process (a segmentation fault), so depth is counted on
# the event stream first. fabgen writes no anchors or aliases: an alias (a "billion laughs"
# document expands through them) is refused the same way.
MAX_YAML_DEPTH = 64


class TranslateError(Exception):
    """A rendered file holds a line or key the translator does not know: one line, file:line."""


def _line(event: yaml.Event) -> int:
    """The line an event starts on, from 1."""
    return event.start_mark.line + 1  # type: ignore[union-attr]  # stubs allow None; both parsers mark every event


def load_yaml(text: str | bytes, where: str = "YAML") -> Any:
    """yaml.safe_load with libyaml's parser where PyYAML has it (the emulation reads every node's
    netplan of the fabric, and the pure-Python parser took 10 of 13 s of that at 4,096 GPUs),
    after its events are checked: nesting at most MAX_YAML_DEPTH, no alias. TranslateError
    naming `where` and the line for anything else, never a parser's exception."""
    try:
        depth = 0
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise TranslateError(f"{where}:{_line(event)}: nested more than {MAX_YAML_DEPTH} "
                                         "levels deep, deeper than fabgen writes")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise TranslateError(f"{where}:{_line(event)}: a YAML anchor or alias, which fabgen never "
                                     "writes")
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise TranslateError(f"{where}{line}: not YAML as fabgen writes it "
                             f"({getattr(exc, 'problem', None) or 'unreadable'})") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise TranslateError(f"{where}: not UTF-8 YAML ({str(exc)[:100]})") from None


@dataclass
class Neighbor:
    """One BGP session: to an address, or unnumbered on an interface (its vendor port name)."""

    peer: str  # an IPv4 address, or a port name for an unnumbered session
    remote_as: str  # a number, or 'external' / 'internal'
    group: str = ""
    unnumbered: bool = False
    bfd: bool = False


@dataclass
class Router:
    """One switch as its rendered config describes its routing."""

    name: str
    platform: str
    asn: int = 0
    router_id: str = ""
    loopbacks: list[str] = field(default_factory=list)  # CIDRs on the loopback
    routed: dict[str, list[str]] = field(default_factory=dict)  # port -> CIDRs (routed ports)
    unnumbered: list[str] = field(default_factory=list)  # ports running BGP unnumbered (IPv6 link-local)
    vlans: dict[str, list[str]] = field(default_factory=dict)  # SVI name -> CIDRs
    members: dict[str, str] = field(default_factory=dict)  # access port -> SVI name
    groups: dict[str, Neighbor] = field(default_factory=dict)  # peer group -> its settings (peer = '')
    neighbors: list[Neighbor] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    multipath: int = 1
    route_maps: dict[str, tuple[str, str]] = field(default_factory=dict)  # group -> (map in, map out)
    prefix_lists: dict[str, list[tuple[int, str, str, int, int]]] = field(default_factory=dict)
    # name -> (seq, action, prefix, ge, le); route map name -> [(seq, action, prefix list)]
    maps: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    ignored: set[str] = field(default_factory=set)  # what the translator knowingly left out (QoS, management)


@dataclass
class HostPort:
    """A host port as its netplan says: interface name, addresses, routes and rules."""

    name: str
    addresses: list[str]
    routes: list[dict] = field(default_factory=list)
    rules: list[dict] = field(default_factory=list)
    mtu: int = 0
    plane: str = ""  # the fabric (plane) whose addresses.csv gives the port: an unbound ping to it stays there


@dataclass
class Host:
    name: str
    ports: dict[str, HostPort] = field(default_factory=dict)  # interface name -> port
    loopbacks: list[str] = field(default_factory=list)  # lo addresses (BGP to the host)
    frr: str = ""  # its rendered frr.conf, run unmodified
