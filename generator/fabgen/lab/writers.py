"""The lab's files: containerlab's topology, netlab's, NVIDIA Air's; every name and value through
a serializer (PyYAML, json), never pasted into text, and what the sample kept and left out said
at the top of each file (beside Air's JSON, which has no comments, in README.txt)."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from fabgen.errors import printable
from fabgen.lab.model import Lab, Node

CONFIGS = "configs"  # under containerlab/: each switch's startup config, at its path in the render
# containerlab's kinds (schemas/clab.schema.json's enum; docs/manual/kinds/): cEOS, sonic-vs, Cumulus VX
# (nvidia_cumulusvx: the container-based cvx kind is unmaintained and not in the schema), Linux
CLAB_KIND = {"eos": "arista_ceos", "sonic": "sonic-vs", "nvue": "nvidia_cumulusvx", "linux": "linux"}
# the image of each kind: the user's own, named by an environment variable containerlab expands
CLAB_IMAGE = {"eos": "${FABGEN_CEOS_IMAGE:=ceos:latest}", "sonic": "${FABGEN_SONIC_IMAGE:=docker-sonic-vs:latest}",
              "nvue": "${FABGEN_CUMULUS_IMAGE:=vrnetlab/nvidia_cumulusvx:latest}",
              "linux": "${FABGEN_HOST_IMAGE:=nicolaka/netshoot:latest}"}
NETLAB_DEVICE = {"eos": "eos", "sonic": "sonic", "nvue": "cumulus_nvue", "linux": "linux"}
# NVIDIA Air's images (its documentation's examples); Air has no EOS image
AIR_OS = {"nvue": "cumulus-vx-5.16.1", "sonic": "sonic-vs-202305", "linux": "generic/ubuntu2404"}
# netlab's node names (netsim/data/types.py, _id_validator): a letter or underscore first, at most
# MAX_NODE_ID_LENGTH (16 by default, raised in the topology's defaults.const to fabgen's 64)
NETLAB_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_-]{0,63}")
SONIC_CONFIG = "/etc/sonic/config_db.json"  # sonic-vs reads its config there (its kind takes no startup-config)


def _comment(lab: Lab, what: str) -> str:
    """The header: one line each, every character printable, so no note can end a comment early."""
    lines = [f"{what} of {lab.name}, written by fabgen lab from the render; the switches boot their rendered "
             "configs", *lab.notes]
    return "".join(f"# {printable(line).replace(chr(10), ' ').replace(chr(13), ' ')}\n" for line in lines)


def _yaml(doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=1000, allow_unicode=False)


def clab_port(node: Node, port: str) -> str:
    return node.ports.clab(port) if node.ports is not None else port


def containerlab(lab: Lab, files: dict[str, bytes]) -> dict[str, bytes]:
    """containerlab/<lab>.clab.yml and each switch's rendered config beside it, byte for byte."""
    out: dict[str, bytes] = {}
    nodes: dict[str, Any] = {}
    for name, n in sorted(lab.nodes.items()):
        node: dict[str, Any] = {"kind": CLAB_KIND[n.platform], "image": CLAB_IMAGE[n.platform]}
        if n.config:
            out[f"containerlab/{CONFIGS}/{n.config}"] = files[n.config]
            if n.platform == "sonic":
                node["binds"] = [f"{CONFIGS}/{n.config}:{SONIC_CONFIG}"]
            else:
                node["startup-config"] = f"{CONFIGS}/{n.config}"
        if n.exec:
            node["exec"] = list(n.exec)
        nodes[name] = node
    links = [{"endpoints": [f"{k.a}:{clab_port(lab.nodes[k.a], k.a_port)}",
                            f"{k.z}:{clab_port(lab.nodes[k.z], k.z_port)}"]} for k in lab.links]
    doc = {"name": lab.name, "topology": {"nodes": nodes, "links": links}}
    out[f"containerlab/{lab.name}.clab.yml"] = (_comment(lab, "containerlab topology") + _yaml(doc)).encode()
    return out


def netlab(lab: Lab) -> dict[str, bytes]:
    """netlab/topology.yml: the same nodes and links for netlab's containerlab provider, each
    port with the ifindex netlab numbers it by and the rendered name; the startup configs are
    containerlab's copies (../containerlab/configs/). No addresses of netlab's own on the links:
    the rendered configs hold them (start it with `netlab up --no-config`). A device name netlab
    does not take (one starting with a digit) gets README.txt saying so instead."""
    odd = sorted(n for n in lab.nodes if not NETLAB_NAME.fullmatch(n))
    if odd:
        why = (f"no netlab topology: netlab's node names start with a letter or an underscore, and "
               f"{len(odd)} device name(s) do not ({', '.join(odd[:5])}); use the containerlab topology")
        return {"netlab/README.txt": _comment(Lab(lab.name, notes=[*lab.notes, why]), "netlab").encode()}
    nodes: dict[str, Any] = {}
    for name, n in sorted(lab.nodes.items()):
        node: dict[str, Any] = {"device": NETLAB_DEVICE[n.platform]}
        clab: dict[str, Any] = {}
        if n.config:
            path = f"../containerlab/{CONFIGS}/{n.config}"
            if n.platform == "sonic":
                clab["binds"] = [f"{path}:{SONIC_CONFIG}"]
            else:
                clab["startup-config"] = path
        if n.exec:
            clab["exec"] = list(n.exec)
        if clab:
            node["clab"] = clab
        nodes[name] = node
    host_index: dict[str, list[str]] = {}
    for k in lab.links:
        for dev, port in ((k.a, k.a_port), (k.z, k.z_port)):
            if lab.nodes[dev].ports is None and port not in host_index.setdefault(dev, []):
                host_index[dev].append(port)

    def end(dev: str, port: str) -> dict[str, Any]:
        numbering = lab.nodes[dev].ports
        index = numbering.ifindex(port) if numbering is not None else host_index[dev].index(port) + 1
        return {"node": dev, "ifindex": index, "ifname": port}

    doc = {"provider": "clab", "defaults": {"const": {"MAX_NODE_ID_LENGTH": 64}},
           "addressing": {"p2p": {"ipv4": False, "ipv6": False}, "lan": {"ipv4": False, "ipv6": False}},
           "nodes": nodes,
           "links": [{"interfaces": [end(k.a, k.a_port), end(k.z, k.z_port)]} for k in lab.links]}
    return {"netlab/topology.yml": (_comment(lab, "netlab topology") + _yaml(doc)).encode()}


def air(lab: Lab) -> dict[str, bytes]:
    """air/topology.json in Air's JSON import format (nodes by name with their image, links as
    pairs of node and interface), and README.txt with what the sample kept. Air keeps Cumulus
    breakout names (swp1s0) and names each interface as the file does; EOS switches, which Air
    has no image for, are left out with their links."""
    kept = {name for name, n in lab.nodes.items() if n.platform in AIR_OS}
    gone = sorted(set(lab.nodes) - kept)
    if not any(lab.nodes[n].platform != "linux" for n in kept):
        notes = [*lab.notes, "no Air topology: NVIDIA Air has no image for the lab's switches (EOS); use the "
                 "containerlab or netlab topology"]
        return {"air/README.txt": _comment(Lab(lab.name, notes=notes), "NVIDIA Air").encode()}
    nodes = {name: {"os": AIR_OS[lab.nodes[name].platform]} for name in sorted(kept)}

    def port(dev: str, p: str) -> str:
        n = lab.nodes[dev]
        return f"eth{n.ports.sonic_index(p) + 1}" if n.platform == "sonic" and n.ports is not None else p

    links = [[{"node": k.a, "interface": port(k.a, k.a_port)}, {"node": k.z, "interface": port(k.z, k.z_port)}]
             for k in lab.links if k.a in kept and k.z in kept]
    doc = {"format": "JSON", "title": lab.name, "content": {"nodes": nodes, "links": links, "oob": False}}
    notes = list(lab.notes)
    if gone:
        notes.append(f"left out of Air, which has no image for their platform: {len(gone)} device(s) "
                     f"({', '.join(gone[:5])}{' ...' if len(gone) > 5 else ''}) and their links")
    readme = _comment(Lab(lab.name, notes=notes), "NVIDIA Air topology (topology.json)")
    return {"air/topology.json": (json.dumps(doc, indent=2, sort_keys=False) + "\n").encode(),
            "air/README.txt": readme.encode()}
