"""Zero-touch provisioning: a factory-fresh switch's way from power-on to its rendered config
(docs/guide/bring-up.md), written only when the inventory has a `provisioning` block.

Files under OUT/provisioning/ (and the playbook beside the others, OUT/ansible/provision.yml):
* dnsmasq.conf: DHCP only (`port=0`), on the server's interface; one static `dhcp-range` per
  management prefix served (tagged with the fabric's name: router, DNS and NTP by IPv4 address, domain),
  one `dhcp-host` per switch of the MAC map (its MAC, its planned management address, its name,
  tagged with the switch's name) and per switch its provisioning URL: option 239 for Cumulus
  Linux (its ZTP script), option 67 (bootfile-name) for EOS (a bootstrap script) and SONiC (its
  ztp.json). `dhcp-ignore=tag:!known`: a MAC outside the map gets no address at all.
  dnsmasq rather than ISC Kea: docs/decisions.md, "Provisioning by dnsmasq".
* netplan.yaml: the provisioning server's own address on its interface, and a route to every
  other served management prefix: on the link where the out-of-band VLAN carries it beside the
  server's own prefix, else through the own prefix's gateway (the relay path).
* www/: the web root, served as it is by any static server: ztp/<switch>.sh (Cumulus),
  ztp/<switch>.eos.sh (EOS), ztp/<switch>.ztp.json (SONiC). Each fetches configs/<switch>.<ext>
  from the same server; configs/ is filled by provision.yml (the rendered configs hold secret
  references, filled there by Ansible's template module), never by the render.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from typing import Any

from fabgen.context import Context
from fabgen.formats.templating import render as render_template
from fabgen.spec.platforms import PLATFORMS
from fabgen.targets.base import CLUSTER, Target

# what each platform's switch fetches: (its ZTP file under www/ztp/, its DHCP option as dnsmasq
# names it, its config's name under www/configs/ after the switch's name, the template of its ZTP
# file or None for SONiC's JSON)
ZTP = {
    "nvue": (".sh", "239", ".nvue.yaml", "provisioning/cumulus-ztp.sh.j2"),
    "eos": (".eos.sh", "option:bootfile-name", ".cfg", "provisioning/eos-ztp.sh.j2"),
    "sonic": (".ztp.json", "option:bootfile-name", ".config_db.json", None),
}
CONFIRM = "600s"  # NVUE's rollback timer, as deploy-nvue.yml uses it
LEASE = "12h"  # a reservation's lease: the switch keeps its planned address, renewed long before it ends


def _served(ctx: Context) -> bool:
    """Whether the context's switches are provisioned (inventory/check_provisioning.py decides)."""
    from fabgen.inventory.check_provisioning import provisioned

    return ctx.provisioning is not None and provisioned(ctx.fabric.spec) is None


def _network(name: str, spec: Any, site: Any) -> dict[str, Any]:
    """A fabric's management prefix as dnsmasq and netplan read it (`name`: the inventory's
    fabric, whose planes share the prefix and its gateway); its DNS and NTP servers as its
    switches take them (intent/baseline.py `services_of`: the management block's, else a baseline's)."""
    from fabgen.inventory.management import gateway_of, services_of

    m = spec.management
    servers = services_of(m, site, spec.baseline)
    net = ipaddress.IPv4Network(m.prefix)
    return {"tag": name, "prefix": str(net), "network": str(net.network_address), "netmask": str(net.netmask),
            "prefixlen": net.prefixlen, "gateway": str(ipaddress.IPv4Address(gateway_of(m))),
            "dns": [s for s in servers["dns"] if _is_address(s)], "ntp": [s for s in servers["ntp"] if _is_address(s)],
            "domain": m.domain}


def _is_address(text: str) -> bool:
    """Whether a DNS or NTP server can go into DHCPv4's options, which hold IPv4 addresses only
    (RFC 2132, 3.8 Domain Name Server Option and 8.3 Network Time Protocol Servers Option): an
    NTP server given by name, or an IPv6 server, reaches the switch's config only."""
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _links(contexts: list[Context]) -> dict[str, str]:
    """fabric -> the out-of-band network its switches' management ports are cabled to (one VLAN
    carrying every managed fabric's prefix: topology/oob.py); the network itself is its own."""
    links: dict[str, str] = {}
    served = list(dict.fromkeys(ctx.fabric.inventory_name for ctx in contexts if ctx.fabric.spec.role != "oob"))
    for ctx in contexts:
        spec = ctx.fabric.spec
        if spec.role == "oob":
            links.update({name: spec.name for name in (spec.manages if spec.manages is not None else served)})
            links[spec.name] = spec.name
    return links


def structure(contexts: list[Context], structured: list | None = None) -> dict[str, Any]:
    """The DHCP server's networks and reservations and each mapped switch's files, in the order of
    the plan (fabrics, then switches). A served prefix on the server's own link (the out-of-band
    VLAN that carries the server's prefix and the fabric's management ports) is reached directly
    (dnsmasq's shared-network, an on-link route: a DHCP reply to a switch of that prefix must not
    be sent to a gateway); any other through its own prefix's gateway, its DHCP relayed."""
    if not contexts or contexts[0].provisioning is None:
        return {"provisioning": None}
    p, macs = contexts[0].provisioning, contexts[0].macs
    port = "" if p.http_port == 80 else f":{p.http_port}"
    base = f"http://{p.server}{port}"
    networks: dict[str, dict[str, Any]] = {}
    switches: list[dict[str, Any]] = []
    own = None
    server = ipaddress.IPv4Address(p.server)
    links = _links(contexts)
    for ctx in contexts:
        spec, name = ctx.fabric.spec, ctx.fabric.inventory_name
        if spec.management is not None and server in ipaddress.IPv4Network(spec.management.prefix):
            own = own or {**_network(name, spec, ctx.baseline), "link": links.get(name)}
        if not _served(ctx):
            continue
        network = networks.setdefault(name, {**_network(name, spec, ctx.baseline), "link": links.get(name)})
        platform = spec.platform
        script, option, config, _ = ZTP[platform]
        for s in ctx.fabric.switches:
            if s.name not in macs:
                continue
            switches.append({
                "name": s.name, "fabric": name, "platform": platform, "mac": macs[s.name],
                "address": ctx.allocation.management[s.name], "prefixlen": network["prefixlen"],
                "option": option, "script": f"ztp/{s.name}{script}", "url": f"{base}/ztp/{s.name}{script}",
                "config": f"configs/{s.name}{config}", "config_url": f"{base}/configs/{s.name}{config}",
                "src": f"{ctx.fabric.name}/switches/{s.name}{PLATFORMS[platform].config_file}"})
    assert own is not None  # validation: the server is inside one management prefix
    for n in networks.values():
        n["shared"] = n["prefix"] != own["prefix"]  # a subnet dnsmasq has no address in: told to answer it
        n["on_link"] = n["shared"] and own["link"] is not None and n["link"] == own["link"]
    routes = [{"to": n["prefix"], "on_link": n["on_link"], "via": own["gateway"]} for n in networks.values()
              if n["prefix"] != own["prefix"]]
    return {"provisioning": {"cluster": contexts[0].cluster, "server": p.server, "interface": p.interface,
                             "http_port": p.http_port, "base": base, "own": own, "routes": routes,
                             "networks": list(networks.values()), "switches": switches, "confirm": CONFIRM,
                             "lease": LEASE}}


def _ztp_json(sw: dict[str, Any]) -> bytes:
    """SONiC ZTP's JSON: one configdb-json section whose url object names the rendered config_db
    (sonic-net/SONiC doc/ztp/ztp.md, "configdb-json" and "url object"); clear-config loads it in
    place of the factory config (`config reload`), save-config keeps it (`config save`): the keys
    sonic-net/sonic-ztp's src/usr/lib/ztp/plugins/configdb-json reads."""
    doc = {"ztp": {"configdb-json": {"url": {"source": sw["config_url"], "destination": "/etc/sonic/config_db.json"},
                                     "clear-config": True, "save-config": True}}}
    return (json.dumps(doc, indent=2) + "\n").encode()


def render(data: dict[str, Any]) -> Iterable[tuple[str, bytes]]:
    d = data["provisioning"]
    if d is None:
        return
    yield "provisioning/dnsmasq.conf", render_template("provisioning/dnsmasq.conf.j2", d=d).encode()
    yield "provisioning/netplan.yaml", render_template("provisioning/netplan.yaml.j2", d=d).encode()
    for sw in d["switches"]:
        template = ZTP[sw["platform"]][3]
        text = render_template(template, d=d, sw=sw).encode() if template else _ztp_json(sw)
        yield f"provisioning/www/{sw['script']}", text
    yield "ansible/provision.yml", render_template("provisioning/provision.yml.j2", d=d).encode()


TARGET = Target("provisioning", lambda ctx: True, structure, render, scope=CLUSTER)
