"""Zero-touch provisioning with the real components, in network namespaces the test creates
(tests/dhcp_lab.py): the rendered dnsmasq.conf passes dnsmasq's own check and runs; the server
takes its address and routes from the rendered netplan.yaml; a real static web server serves the
rendered web root. The management network is laid out three ways: every prefix on the server's
VLAN with a router holding each gateway; each other prefix routed, its gateway relaying DHCP;
and fabgen's out-of-band network (the bundled b300-cluster), every fabric's prefix on the
server's link as its netplan says. Each mapped switch (Cumulus, EOS and SONiC alike) asks by
DHCP with its MAC from the map, as its ZTP client does, and must receive exactly its planned
address (the Ansible inventory's ansible_host), its name, its fabric's gateway, DNS, NTP and
domain, and its provisioning URL (option 239 on Cumulus, 67 on EOS and SONiC); it then fetches
that URL and must get the rendered file's bytes, and the config URL inside it must serve the
switch's rendered config once the web root is filled as provision.yml fills it. A MAC outside
the map gets no address. Every process and namespace is gone afterwards."""

from __future__ import annotations

import csv
import ipaddress
import json
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from dhcp_lab import DNSMASQ, ProvisioningLab, available, dnsmasq_test, hex_text

from conftest import IN_CI, INVENTORIES
from fabgen.emulate.lab import Lab
from fabgen.pipeline import render_to

DATA = Path(__file__).parent / "data" / "ztp"
REASON = available()
if REASON and IN_CI:
    raise RuntimeError(f"CI must run the ZTP lab: {REASON}")
needs_lab = pytest.mark.skipif(bool(REASON), reason=f"the ZTP lab {REASON}")
STRANGER = "02:5a:5a:00:00:01"  # a locally administered MAC no map holds
# what each platform's ZTP client reads its provisioning URL from (busybox udhcpc's names)
URL_OPTION = {"nvue": "opt239", "eos": "bootfile", "sonic": "bootfile"}


def _inventory() -> Path:
    """The test inventory with a provisioning block (tests/data/ztp/)."""
    found = sorted(p for p in DATA.glob("*.yaml") if "provisioning" in (yaml.safe_load(p.read_text()) or {}))
    assert found, f"no inventory with a provisioning block in {DATA}"
    return found[0]


@dataclass
class Plan:
    """What the render and the inventory say each switch must get."""

    out: Path
    server: str  # with its prefix length, from netplan.yaml
    interface: str
    port: int
    routes: list[dict[str, str]]
    macs: dict[str, str]  # switch -> MAC, from the map
    address: dict[str, str] = field(default_factory=dict)  # switch -> ansible_host
    platform: dict[str, str] = field(default_factory=dict)
    config: dict[str, str] = field(default_factory=dict)  # switch -> its rendered config (host_vars)
    management: dict[str, dict] = field(default_factory=dict)  # fabric -> its management block


def _plan(inv: Path, out: Path) -> Plan:
    doc = yaml.safe_load(inv.read_text())
    prov = doc["provisioning"]
    lines = [line for line in (inv.parent / prov["mac_map"]).read_text().splitlines()
             if line.strip() and not line.startswith("#")]  # the map's comments and blank lines
    macs = {r["switch"]: r["mac"].lower().replace("-", ":") for r in csv.DictReader(lines)}
    netplan = yaml.safe_load((out / "provisioning" / "netplan.yaml").read_text())["network"]["ethernets"]
    iface = prov.get("interface", "eth0")
    (server,) = netplan[iface]["addresses"]
    plan = Plan(out, server, iface, int(prov.get("http_port", 80)), netplan[iface].get("routes", []), macs)
    hosts = yaml.safe_load((out / "ansible" / "inventory.yml").read_text())["all"]["children"]
    for body in hosts.values():  # each host's variables are given once, in the first group that lists it
        plan.address.update({h: v["ansible_host"] for h, v in (body.get("hosts") or {}).items()
                             if v and "ansible_host" in v})
    for sw in macs:
        hv = json.loads((out / "ansible" / "host_vars" / f"{sw}.yml").read_text().split("---", 1)[1])
        plan.platform[sw] = hv["fabgen_platform"]
        plan.config[sw] = hv["fabgen_files"][0]["src"]  # the switch's config, as the deploy playbooks take it
    plan.management = {f["name"]: f["management"] for f in doc["fabrics"] if f.get("management")}
    return plan


def management(plan: Plan, sw: str) -> dict:
    """The inventory's management block whose prefix holds the switch's planned address (a
    plane's switches are in their fabric's block)."""
    (m,) = [m for m in plan.management.values()
            if ipaddress.ip_address(plan.address[sw]) in ipaddress.ip_network(m["prefix"])]
    return m


def expected(plan: Plan, sw: str) -> dict[str, str]:
    """What `sw`'s lease must carry, from the plan and the inventory alone."""
    m = management(plan, sw)
    port = "" if plan.port == 80 else f":{plan.port}"
    ext = {"nvue": ".sh", "eos": ".eos.sh", "sonic": ".ztp.json"}[plan.platform[sw]]
    want = {"ip": plan.address[sw], "hostname": sw, "router": m["gateway"],
            "subnet": str(ipaddress.ip_network(m["prefix"]).netmask),
            "url": f"http://{ipaddress.ip_interface(plan.server).ip}{port}/ztp/{sw}{ext}"}
    dns = [s for s in m.get("dns", []) if re.fullmatch(r"[0-9.]+", s)]  # DHCPv4 carries IPv4 addresses only
    if dns:
        want["dns"] = " ".join(dns)
    ntp = [s for s in m.get("ntp", []) if re.fullmatch(r"[0-9.]+", s)]  # and NTP by address only
    if ntp:
        want["ntpsrv"] = " ".join(ntp)
    if m.get("domain"):
        want["domain"] = m["domain"]
    return want


def received(platform: str, lease: dict[str, str]) -> dict[str, str]:
    """The same keys, as the switch's ZTP client got them; the provisioning option of another
    platform under its own name, so that a lease carrying it is not the expected one."""
    got = {k: lease[k] for k in ("ip", "hostname", "router", "subnet", "dns", "ntpsrv", "domain") if k in lease}
    raw = lease.get(URL_OPTION[platform])
    if raw is not None:
        got["url"] = hex_text(raw) if platform == "nvue" else raw
    for other in set(URL_OPTION.values()) - {URL_OPTION[platform]}:
        if other in lease:
            got[other] = lease[other]
    return got


@dataclass
class Run:
    plan: Plan
    leases: dict[str, dict[str, str] | None] = field(default_factory=dict)
    fetched: dict[str, bytes] = field(default_factory=dict)  # URL -> bytes
    stranger: dict[str, str] | None = None
    log: str = ""
    namespaces: list[str] = field(default_factory=list)  # the run's, to find none of them afterwards
    marks: list[str] = field(default_factory=list)  # what names the run's processes (its directory, its web root)


def _config_url(sw_platform: str, script: bytes) -> str:
    """The config URL a ZTP file names (the scripts' CONFIG_URL, ztp.json's url source)."""
    if sw_platform == "sonic":
        return json.loads(script)["ztp"]["configdb-json"]["url"]["source"]
    found = re.search(rb'^CONFIG_URL="([^"]+)"$', script, re.M)
    assert found, "the ZTP script names no CONFIG_URL"
    return found.group(1).decode()


def _fill_configs(out: Path, served: Path) -> None:
    """The web root as provision.yml leaves it: each switch's rendered config under configs/ (its
    src -> dest pairs read from the playbook; no secret to fill in this inventory's configs is
    needed for a byte comparison of what is served)."""
    play = yaml.safe_load((out / "ansible" / "provision.yml").read_text())[0]
    for item in play["vars"]["fabgen_switch_configs"]:
        dest = served / "www" / item["dest"]
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out / item["src"], dest)


def _network(p: ProvisioningLab, plan: Plan, routed: bool) -> None:
    """The management network beyond the server: the server's routes from its netplan, and
    either one VLAN for every prefix (a router holding every gateway on it) or a routed network
    (each other prefix a segment of its own behind its gateway, relaying DHCP)."""
    own = ipaddress.ip_interface(plan.server).network
    for r in plan.routes:
        assert ("via" in r) != (r.get("scope") == "link"), r  # netplan: through a gateway, or on the link
        p.route(r["to"], r.get("via"))
    gateway = {m["prefix"]: m["gateway"] for m in plan.management.values()}
    if not routed:
        p.gateways([f"{gw}/{ipaddress.ip_network(prefix).prefixlen}" for prefix, gw in sorted(gateway.items())])
        return
    via = {r["via"] for r in plan.routes if "via" in r}
    assert len(via) == 1, "every routed prefix through the own prefix's gateway"
    p.router(f"{via.pop()}/{own.prefixlen}", {r["to"]: gateway[r["to"]] for r in plan.routes if "via" in r})


def _lab_run(plan: Plan, served: Path, routed: bool, whole: bool = True) -> Run:
    """Every mapped switch asks and (when `whole`) fetches its files, then a stranger asks."""
    result = Run(plan)
    with Lab() as la:
        p = ProvisioningLab(la, served, plan.interface, plan.server, plan.port)
        p.start()
        result.marks = [str(la.dir), str(served)]
        _network(p, plan, routed)
        for sw, mac in sorted(plan.macs.items()):  # on its prefix's segment where routed, else on the VLAN
            p.client(sw, mac, p.segments.get(management(plan, sw)["prefix"], "br0"))
            lease = result.leases[sw] = p.ask(sw)
            if lease is None:
                continue
            url = received(plan.platform[sw], lease).get("url")
            if url and whole:
                body = result.fetched[url] = p.fetch(sw, url)
                config = _config_url(plan.platform[sw], body)
                result.fetched[config] = p.fetch(sw, config)
        if whole:
            p.client("stranger", STRANGER)
            result.stranger = p.ask("stranger", tries=2)
        result.log = p.log()
        result.namespaces = list(la.namespaces)
    return result


def left(namespaces: list[str], marks: list[str]) -> tuple[set[str], list[str]]:
    """Which of a run's namespaces still exist, and which processes still name the run's
    directory or its web root (other tests may run labs of their own meanwhile)."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30).stdout
    ps = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True, timeout=30).stdout
    return ({n.split()[0] for n in listed.splitlines() if n.strip()} & set(namespaces),
            [line for line in ps.splitlines() if any(m in line for m in marks) and "ps -ww" not in line])


def _render(case: str, d: Path) -> Plan:
    """A case's render: `ztp`, the test inventory (three fabrics, one platform each, no
    out-of-band network); `oob`, the bundled b300-cluster with the server on its out-of-band
    network, which manages every fabric (their prefixes on the server's link: netplan's
    `scope: link`) and a map of three of its switches (two planes of one fabric, and another)."""
    if case == "ztp":
        inv = _inventory()
    else:
        for name in ("b300-cluster.yaml", "b300-cluster-rdma-links.txt"):
            shutil.copy(INVENTORIES / name, d / name)
        inv = d / "b300-cluster.yaml"
        inv.write_text(inv.read_text() + "\nprovisioning:\n  server: 192.168.3.200\n  mac_map: macs.csv\n")
        (d / "macs.csv").write_text("switch,mac\nsx-plane1-su01-leaf1,02:00:00:00:00:01\n"
                                    "sx-plane2-spine01,02:00:00:00:00:02\nstorage-servers-leaf1,02:00:00:00:00:03\n")
    render_to(inv, d / "out")
    return _plan(inv, d / "out")


@pytest.fixture(scope="module")
def renders(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Plan]:
    """Each case rendered once per module, when a test first needs it."""
    done: dict[str, Plan] = {}

    def get(case: str) -> Plan:
        if case not in done:
            done[case] = _render(case, tmp_path_factory.mktemp(case))
        return done[case]
    return get


@pytest.fixture(scope="module")
def rendered(renders: Callable[[str], Plan]) -> Plan:
    return renders("ztp")


@pytest.fixture(scope="module", params=[("ztp", "one-vlan"), ("ztp", "routed"), ("oob", "one-vlan")],
                ids=["one-vlan", "routed", "oob"])
def lab_run(request: pytest.FixtureRequest, renders: Callable[[str], Plan],
            tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The whole bring-up once per management network: one VLAN carrying every fabric's prefix,
    routed prefixes on the server; each prefix routed with a DHCP relay on its gateway; and
    fabgen's out-of-band network, every prefix on the server's link as its netplan says."""
    case, network = request.param
    plan = renders(case)
    served = tmp_path_factory.mktemp("served") / "provisioning"
    shutil.copytree(plan.out / "provisioning", served)
    _fill_configs(plan.out, served)
    return _lab_run(plan, served, routed=network == "routed")


def test_the_inventory_maps_every_switch_kind(rendered: Plan) -> None:
    """The lab's inventory holds a Cumulus, an EOS and a SONiC switch in its MAC map, and a switch
    it leaves out."""
    assert set(rendered.platform.values()) == {"nvue", "eos", "sonic"}
    assert set(rendered.address) - set(rendered.macs), "every planned switch is mapped: none to leave out"


@pytest.mark.skipif(not Path(DNSMASQ).exists() and not IN_CI, reason="needs dnsmasq (`make test` installs it)")
def test_dnsmasq_checks_the_rendered_config_and_refuses_a_broken_one(rendered: Plan, tmp_path: Path) -> None:
    conf = rendered.out / "provisioning" / "dnsmasq.conf"
    done = dnsmasq_test(conf)
    assert done.returncode == 0, done.stderr
    broken = tmp_path / "dnsmasq.conf"
    broken.write_text(re.sub(r"^dhcp-range=set:(\S+?),", r"dhcp-range=set:\1,300.1.1.0,", conf.read_text(), count=1,
                             flags=re.M))
    assert dnsmasq_test(broken).returncode != 0


@needs_lab
def test_each_switch_gets_its_planned_lease(lab_run: Run) -> None:
    run = lab_run
    plan = run.plan
    wrong = {}
    for sw in plan.macs:
        lease = run.leases[sw]
        got = received(plan.platform[sw], lease) if lease else None
        if got != expected(plan, sw):
            wrong[sw] = (got, expected(plan, sw))
    assert not wrong, wrong


@needs_lab
def test_each_switch_fetches_its_rendered_files(lab_run: Run) -> None:
    """The URL from DHCP serves the rendered ZTP file byte for byte; the config URL inside it the
    switch's rendered config (as provision.yml installs it)."""
    run = lab_run
    plan = run.plan
    www = plan.out / "provisioning" / "www"
    for sw in plan.macs:
        url = expected(plan, sw)["url"]
        assert url in run.fetched, f"{sw} fetched nothing from {url} (its lease: {run.leases[sw]})"
        body = run.fetched[url]
        assert body == (www / url.split("/", 3)[3]).read_bytes(), sw
        config = _config_url(plan.platform[sw], body)
        assert run.fetched[config] == (plan.out / plan.config[sw]).read_bytes(), (sw, config)


@needs_lab
def test_a_mac_outside_the_map_gets_nothing(lab_run: Run) -> None:
    run = lab_run
    assert run.stranger is None
    assert re.search(rf"DHCPDISCOVER\(\S+\) {STRANGER} ignored", run.log), run.log[-2000:]
    assert "DHCPACK(" not in "".join(line for line in run.log.splitlines() if STRANGER in line)


@needs_lab
def test_the_lab_leaves_nothing_behind(lab_run: Run) -> None:
    assert lab_run.namespaces and lab_run.marks
    assert left(lab_run.namespaces, lab_run.marks) == (set(), [])


@needs_lab
def test_the_lease_check_finds_two_swapped_reservations(rendered: Plan, tmp_path: Path) -> None:
    """The check has teeth: a dnsmasq.conf where two switches of one management prefix swap
    their MACs (of two switch kinds where the prefix has them) answers each with the other's
    address, name and URL; both are found wrong, the others still get theirs."""
    served = tmp_path / "provisioning"
    shutil.copytree(rendered.out / "provisioning", served)
    sw_a, sw_b = _pair(rendered)
    a, b = rendered.macs[sw_a], rendered.macs[sw_b]
    conf = served / "dnsmasq.conf"
    conf.write_text(conf.read_text().replace(a, "SWAP").replace(b, a).replace("SWAP", b))
    run = _lab_run(rendered, served, routed=True, whole=False)
    leases = {sw: received(rendered.platform[sw], lease) if (lease := run.leases[sw]) else None
              for sw in rendered.macs}
    assert {sw for sw in rendered.macs if leases[sw] != expected(rendered, sw)} == {sw_a, sw_b}
    for one, other in ((sw_a, sw_b), (sw_b, sw_a)):
        got = run.leases[one] or {}
        assert (got.get("ip"), got.get("hostname")) == (rendered.address[other], other)


@needs_lab
def test_the_lease_check_finds_another_platform_s_option(rendered: Plan, tmp_path: Path) -> None:
    """A dnsmasq.conf that also sends an EOS switch a Cumulus option 239 (and a Cumulus switch an
    option 67): both leases are found wrong, the others still right."""
    served = tmp_path / "provisioning"
    shutil.copytree(rendered.out / "provisioning", served)
    eos = next(sw for sw in sorted(rendered.macs) if rendered.platform[sw] == "eos")
    nvue = next(sw for sw in sorted(rendered.macs) if rendered.platform[sw] == "nvue")
    conf = served / "dnsmasq.conf"
    conf.write_text(conf.read_text() + f'dhcp-option-force=tag:{eos},239,"http://192.0.2.1/x.sh"\n'
                    f'dhcp-option-force=tag:{nvue},option:bootfile-name,"http://192.0.2.1/x"\n')
    run = _lab_run(rendered, served, routed=True, whole=False)
    wrong = {sw for sw in rendered.macs
             if (received(rendered.platform[sw], run.leases[sw]) if run.leases[sw] else None) != expected(rendered, sw)}
    assert wrong == {eos, nvue}, wrong


def _pair(plan: Plan) -> tuple[str, str]:
    """Two mapped switches of one management prefix, of two kinds where there are."""
    by_net: dict[str, list[str]] = {}
    for sw in sorted(plan.macs):
        prefix = management(plan, sw)["prefix"]
        by_net.setdefault(prefix, []).append(sw)
    pairs = [(a, b) for group in by_net.values() for a in group for b in group if a < b]
    assert pairs, "no management prefix has two mapped switches"
    return min(pairs, key=lambda p: plan.platform[p[0]] == plan.platform[p[1]])


@needs_lab
def test_a_failing_run_leaves_nothing_behind(rendered: Plan, tmp_path: Path) -> None:
    """A run that fails with dnsmasq, the web server and a switch up: every process is stopped by
    its PID and every namespace removed all the same."""
    with pytest.raises(RuntimeError, match="on purpose"), Lab() as la:
        p = ProvisioningLab(la, rendered.out / "provisioning", rendered.interface, rendered.server, rendered.port)
        p.start()
        sw = sorted(rendered.macs)[0]
        p.client(sw, rendered.macs[sw])
        namespaces, marks = list(la.namespaces), [str(la.dir), str(rendered.out)]
        up = left(namespaces, marks)
        assert len(up[0]) == 3 and len(up[1]) == 2  # server, switch, client; dnsmasq, the web server
        raise RuntimeError("on purpose")
    assert left(namespaces, marks) == (set(), [])
