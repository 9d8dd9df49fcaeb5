"""A provisioning network for the rendered zero-touch files: the provisioning server in one network
namespace (its port named as the render's provisioning.interface, holding the server's address),
running the rendered dnsmasq.conf (dnsmasq's own `--test` first) and a static web server on the
render's web root; a management switch (a bridge in a namespace of its own); one namespace per
switch to provision, its management port `eth0` with the switch's MAC from the map, asking by
DHCP with busybox udhcpc as a switch's ZTP client does, and fetching its URL by HTTP.

Built on fabgen's own namespace lab (fabgen.emulate.lab): every address is inside a namespace
this run created, nothing is added to the machine's own; every process is stopped by its PID and
every namespace removed when the lab closes, also on failure; every wait is bounded."""

from __future__ import annotations

import ipaddress
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from fabgen.emulate.lab import Lab, LabError, run

BUSYBOX = shutil.which("busybox") or "/bin/busybox"
DNSMASQ = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"

# What a switch's ZTP client asks for: the address, mask, gateway, DNS, NTP, host and domain
# names, the boot file name (option 67, EOS and SONiC) and Cumulus's provisioning URL (239).
OPTIONS = ("subnet", "router", "dns", "hostname", "domain", "ntpsrv", "bootfile", "239")

# udhcpc runs this at each DHCP event with the lease's options in its environment (busybox's
# names: ip, subnet, router, dns, ntpsrv, hostname, domain, bootfile for option 67, opt239 in
# hex); on a lease it writes those, and nothing else of its environment, to $DHCP_ENV.
LEASE_KEYS = ("ip", "subnet", "router", "dns", "ntpsrv", "hostname", "domain", "bootfile", "opt239")
SCRIPT = """#!/bin/sh
case "$1" in
  bound|renew)
    for key in KEYS; do
      eval "value=\\$$key"
      printf '%s=%s\\n' "$key" "$value"
    done > "$DHCP_ENV" ;;
esac
exit 0
""".replace("KEYS", " ".join(LEASE_KEYS))

FETCH = "import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1], timeout=5).read())"


def available() -> str:
    """Why this machine cannot run the lab ('' when it can)."""
    if os.geteuid() != 0:
        return "needs root for network namespaces"
    for tool, path in (("ip", shutil.which("ip") or "/usr/sbin/ip"), ("dnsmasq", DNSMASQ), ("busybox", BUSYBOX)):
        if not Path(path).exists():
            return f"needs {tool} (`make test` installs it)"
    if run("ip", "netns", "list", check=False).returncode != 0:
        return "needs `ip netns`, which does not work here"
    return ""


def dnsmasq_test(conf: Path) -> subprocess.CompletedProcess:
    """dnsmasq's own syntax check of a configuration (`dnsmasq --test`), nothing started."""
    return subprocess.run([DNSMASQ, "--test", f"--conf-file={conf}"], capture_output=True, text=True, timeout=30)


def hex_text(value: str) -> str:
    """An option busybox does not know, given in hex (opt239=687474...), as text."""
    return bytes.fromhex(value).decode()


class ProvisioningLab:
    """The server, the management switch and the switches' namespaces of one lab run."""

    def __init__(self, la: Lab, root: Path, interface: str, server: str, port: int) -> None:
        self.la = la
        self.root = root  # the render's provisioning folder: dnsmasq.conf, www/
        self.interface = interface
        self.server = ipaddress.ip_interface(server)  # the server's address with its prefix length
        self.port = port
        self.script = la.dir / "udhcpc.sh"
        self.script.write_text(SCRIPT)
        self.script.chmod(0o755)
        self.clients: dict[str, str] = {}  # switch -> its namespace
        self.segments: dict[str, str] = {}  # a routed management prefix -> its bridge (router)
        self.dnsmasq_log = la.dir / "dnsmasq.log"
        self._next = 0

    def _namespace(self) -> str:
        ns = self.la.namespace(self._next)
        self._next += 1
        return ns

    def start(self) -> None:
        """The server and the management switch; dnsmasq (after its own check) and the web server."""
        conf = self.root / "dnsmasq.conf"
        checked = dnsmasq_test(conf)
        if checked.returncode != 0:
            raise LabError(f"dnsmasq --test refused {conf.name}: {checked.stderr.strip()[:300]}")
        self.srv = self._namespace()
        self.sw = self._namespace()
        run("ip", "-n", self.sw, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", self.sw, "link", "set", "br0", "up")
        self.la.veth(self.srv, self.interface, self.sw, "srv")
        run("ip", "-n", self.sw, "link", "set", "srv", "master", "br0")
        run("ip", "-n", self.srv, "addr", "add", str(self.server), "dev", self.interface)
        pid_file = self.la.dir / "dnsmasq.pid"
        # the PID, lease and log files in the run's directory (root's), given on the command line
        # as a test must (the rendered file names none); --user=root: dnsmasq keeps writing them
        self.la.process(self.srv, [DNSMASQ, "--keep-in-foreground", f"--conf-file={conf}",
                                   f"--pid-file={pid_file}", f"--dhcp-leasefile={self.la.dir / 'dnsmasq.leases'}",
                                   "--user=root", f"--log-facility={self.dnsmasq_log}"],
                        self.la.dir / "dnsmasq.out")
        http_log = self.la.dir / "http.log"
        self.la.process(self.srv, [sys.executable, "-u", "-m", "http.server", "--directory", str(self.root / "www"),
                                   "--bind", str(self.server.ip), str(self.port)], http_log)
        self._wait(lambda: pid_file.exists() and "DHCP" in _text(self.dnsmasq_log), "dnsmasq to start",
                   self.dnsmasq_log)
        self._wait(lambda: "Serving HTTP" in _text(http_log), "the web server to listen", http_log)

    def _wait(self, ready: object, what: str, log: Path, limit: float = 10) -> None:
        deadline = time.monotonic() + limit
        while not ready():  # type: ignore[operator]
            if time.monotonic() > deadline:
                raise LabError(f"the lab: waited {limit:g} s for {what}: {_text(log)[-500:]}")
            time.sleep(0.05)

    def route(self, prefix: str, via: str | None) -> None:
        """A route of the server's own (its netplan's routes), inside its namespace: through a
        gateway, or on its link (`via` None: netplan's `scope: link`)."""
        if via is None:
            run("ip", "-n", self.srv, "route", "add", prefix, "dev", self.interface, "scope", "link")
        else:
            run("ip", "-n", self.srv, "route", "add", prefix, "via", via)

    def gateways(self, addresses: list[str]) -> None:
        """One management VLAN for every prefix (fabgen's out-of-band network): a router on the
        server's link holding each prefix's gateway (with its prefix length), no relay; the
        server answers the other prefixes' broadcasts itself (dnsmasq's shared-network)."""
        self.rt = self._namespace()
        self.la.veth(self.rt, "up0", self.sw, "rt0")
        run("ip", "-n", self.sw, "link", "set", "rt0", "master", "br0")
        for address in addresses:
            run("ip", "-n", self.rt, "addr", "add", address, "dev", "up0")

    def router(self, gateway: str, segments: dict[str, str]) -> None:
        """The routed management network: a router holding `gateway` (the server's own prefix's
        gateway, with its prefix length) and, for each other management prefix, its gateway
        address on a segment of its own (a bridge `seg<k>` of the management switch), relaying
        DHCP to the server as a routed OOB's gateways do (dnsmasq as a relay: `dhcp-relay=<its
        address on the segment>,<server>`, so the server picks the range by the relay's address)."""
        self.rt = self._namespace()
        self.la.veth(self.rt, "up0", self.sw, "rt0")
        run("ip", "-n", self.sw, "link", "set", "rt0", "master", "br0")
        run("ip", "-n", self.rt, "addr", "add", gateway, "dev", "up0")
        relays = []
        for k, (prefix, gw) in enumerate(sorted(segments.items()), 1):
            seg = f"seg{k}"
            run("ip", "-n", self.sw, "link", "add", seg, "type", "bridge")
            run("ip", "-n", self.sw, "link", "set", seg, "up")
            self.la.veth(self.rt, f"down{k}", self.sw, f"rt{k}")
            run("ip", "-n", self.sw, "link", "set", f"rt{k}", "master", seg)
            length = ipaddress.ip_network(prefix).prefixlen
            run("ip", "-n", self.rt, "addr", "add", f"{gw}/{length}", "dev", f"down{k}")
            self.segments[prefix] = seg
            relays.append(f"--dhcp-relay={gw},{self.server.ip}")
        log = self.la.dir / "relay.log"
        pid_file = self.la.dir / "relay.pid"
        self.la.process(self.rt, [DNSMASQ, "--keep-in-foreground", "--port=0", "--conf-file=/dev/null",
                                  f"--pid-file={pid_file}", "--user=root", f"--log-facility={log}", *relays],
                        self.la.dir / "relay.out")
        self._wait(lambda: pid_file.exists() and "started" in _text(log), "the DHCP relay to start", log)

    def client(self, switch: str, mac: str, segment: str = "br0") -> str:
        """A switch's namespace: its management port eth0 with `mac`, plugged into the management
        switch's `segment` (the server's own, or a routed prefix's from `router`)."""
        ns = self._namespace()
        port = f"c{len(self.clients)}"
        run("ip", "-n", self.sw, "link", "add", port, "type", "veth", "peer", "name", "eth0", "address", mac,
            "netns", ns)
        run("ip", "-n", self.sw, "link", "set", port, "master", segment)
        run("ip", "-n", self.sw, "link", "set", port, "up")
        run("ip", "-n", ns, "link", "set", "eth0", "up")
        self.clients[switch] = ns
        return ns

    def ask(self, switch: str, tries: int = 3) -> dict[str, str] | None:
        """The switch asks by DHCP (udhcpc: `tries` discovers a second apart, then gives up): the
        lease's options as udhcpc names them, or None when no server answered. On a lease its
        address goes on eth0 (as the switch's ZTP does) so that it can fetch its URL."""
        ns = self.clients[switch]
        out = self.la.dir / f"{switch}.env"
        args = [BUSYBOX, "udhcpc", "-f", "-q", "-n", "-t", str(tries), "-T", "1", "-A", "1", "-i", "eth0",
                "-s", str(self.script)]
        for opt in OPTIONS:
            args += ["-O", opt]
        done = run("ip", "netns", "exec", ns, "env", f"DHCP_ENV={out}", *args, timeout=tries * 2 + 10, check=False)
        if done.returncode != 0 or not out.exists():
            return None
        env = {k: v for k, _, v in (line.partition("=") for line in out.read_text().splitlines()) if v}
        prefix = ipaddress.ip_network(f"0.0.0.0/{env['subnet']}").prefixlen
        run("ip", "-n", ns, "addr", "add", f"{env['ip']}/{prefix}", "dev", "eth0")
        if env.get("router"):  # the lease's gateway: the way to a server in another prefix
            run("ip", "-n", ns, "route", "add", "default", "via", env["router"].split()[0])
        return env

    def fetch(self, switch: str, url: str) -> bytes:
        """What the switch gets from `url`: an HTTP GET from inside its namespace, bounded (Python's
        urllib: the static busybox's wget crashes resolving even an address literal)."""
        done = subprocess.run(["ip", "netns", "exec", self.clients[switch], sys.executable, "-c", FETCH, url],
                              capture_output=True, timeout=20)
        if done.returncode != 0:
            raise LabError(f"{switch}: GET {url} failed: {done.stderr.decode(errors='replace').strip()[:300]}")
        return done.stdout

    def log(self) -> str:
        return _text(self.dnsmasq_log)


def _text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
