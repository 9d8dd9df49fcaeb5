"""Network namespaces, veth pairs and FRR daemons for one emulation, and their removal.

Hygiene (docs/emulate.md): every address lives in a namespace this run created (veth pairs are
created inside a namespace with their peer in another, never in the machine's own); every
daemon runs as FRR's user and is stopped by the PID it wrote; namespaces, the run directory and
the one kernel setting changed (the neighbour table's thresholds, shared by all namespaces)
are restored on exit, also on Ctrl-C, SIGTERM and failure; every command and wait is bounded.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabgen.emulate.model import Host

FRR_DIR = Path("/usr/lib/frr")
GC_THRESH = tuple(f"net.{v}.neigh.default.gc_thresh{k}" for v in ("ipv4", "ipv6") for k in (1, 2, 3))
NEIGHBOURS_PER_LINK = 4  # each veth end learns its peer's IPv4 and IPv6 (link-local) neighbours


class LabError(Exception):
    """The machine cannot run the emulation (not root, FRR or ip missing) or a step failed."""


def preflight() -> None:
    if os.geteuid() != 0:
        raise LabError("fabgen emulate creates network namespaces: run it as root (or in a VM or container "
                       "where you are)")
    for tool in ("ip", "sysctl"):
        if shutil.which(tool) is None and not Path(f"/usr/sbin/{tool}").exists():
            raise LabError(f"{tool} is not installed (Debian: iproute2, procps)")
    for daemon in ("zebra", "bgpd", "bfdd"):
        if not (FRR_DIR / daemon).exists():
            raise LabError(f"FRR's {daemon} is not in {FRR_DIR} (Debian: apt-get install frr)")
    if shutil.which("vtysh") is None:
        raise LabError("FRR's vtysh is not installed (Debian: apt-get install frr)")
    try:
        pwd.getpwnam("frr")
    except KeyError:
        raise LabError("there is no user frr (Debian's frr package creates it)") from None


def _daemon_of(command: str) -> str:
    """The FRR daemon that answers a show command (vtysh routes them so too)."""
    words = command.split()
    if words[1:2] == ["bgp"] or words[1:3] == ["ip", "bgp"]:
        return "bgpd"
    return "bfdd" if words[1:2] == ["bfd"] else "zebra"


def vty_query(path: Path, command: str, timeout: float = 20) -> str:
    """`command` on the FRR daemon listening at `path` (a vtysh-type vty socket), its text answer."""
    import socket

    deadline = time.monotonic() + timeout
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(path))
            for line in ("enable", command):  # vtysh's sessions run in enable mode: some show commands are there
                sock.sendall(line.encode() + b"\0")
                buf = bytearray()
                while not (len(buf) >= 4 and buf[-4:-1] == b"\0\0\0"):
                    if time.monotonic() > deadline:  # an answer that keeps coming is cut at the bound too
                        raise TimeoutError
                    sock.settimeout(max(0.05, deadline - time.monotonic()))
                    chunk = sock.recv(1 << 20)
                    if not chunk:
                        raise LabError(f"{path}: closed before answering {line!r}")
                    buf += chunk
                if buf[-1] != 0:
                    raise LabError(f"{path}: {line!r} failed (code {buf[-1]}): "
                                   f"{bytes(buf[:-4]).decode(errors='replace')[:300]}")
    except TimeoutError:
        raise LabError(f"{path}: no answer to {command!r} within {timeout:g} s") from None
    except OSError as exc:
        raise LabError(f"{path}: {exc.strerror or exc}") from None
    return bytes(buf[:-4]).decode(errors="replace")


def run(*args: str, timeout: float = 30, check: bool = True, inp: str | None = None) -> subprocess.CompletedProcess:
    try:
        done = subprocess.run(list(args), capture_output=True, text=True, timeout=timeout, input=inp)
    except subprocess.TimeoutExpired:
        raise LabError(f"{' '.join(args[:6])}: no answer within {timeout:g} s") from None
    if check and done.returncode != 0:
        raise LabError(f"{' '.join(args[:8])}: {done.stderr.strip()[:300] or done.returncode}")
    return done


class Lab:
    """One run's namespaces and daemons. Use as a context manager: leaving it removes everything."""

    def __init__(self) -> None:
        self.id = secrets.token_hex(3)
        self.namespaces: list[str] = []
        self.pids: list[int] = []
        self.dir = Path(tempfile.mkdtemp(prefix=f"fabgen-emulate-{self.id}-"))
        self.dir.chmod(0o711)  # FRR's user reaches its own directory inside, and nothing else
        self.sysctl: dict[str, str] = {}
        self._signals: dict[int, object] = {}
        self._children: list[subprocess.Popen] = []

    def __enter__(self) -> Lab:
        for sig in (signal.SIGTERM, signal.SIGHUP):
            self._signals[sig] = signal.signal(sig, self._interrupt)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _interrupt(self, signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # unwinds through __exit__, which removes everything

    def namespace(self, index: int) -> str:
        name = f"fabgen-{self.id}-{index}"
        run("ip", "netns", "add", name)
        self.namespaces.append(name)
        # one process for both settings (a process costs most in a VM without KVM)
        run("ip", "-n", name, "link", "set", "lo", "up")
        run("ip", "netns", "exec", name, "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1")
        return name

    def neighbours(self, links: int) -> None:
        """Raise the shared neighbour tables' thresholds for `links` links (restored on exit): the
        default 1,024 overflowed at 1,536 neighbours in trials, failing ARP at random, and BGP
        unnumbered's IPv6 link-local neighbours fill the IPv6 table alike."""
        need = links * NEIGHBOURS_PER_LINK + 1024
        for key, value in zip(GC_THRESH, (need // 4, need // 2, need) * 2):  # IPv4 (ARP) and IPv6 (ND) alike
            current = run("sysctl", "-n", key).stdout.strip()
            if int(current) < value:
                self.sysctl.setdefault(key, current)
                run("sysctl", "-qw", f"{key}={value}")

    def veth(self, ns_a: str, if_a: str, ns_z: str, if_z: str, alias_a: str = "", alias_z: str = "") -> None:
        """A cable: a veth pair created inside ns_a with its peer in ns_z (never in the host's own)."""
        run("ip", "-n", ns_a, "link", "add", if_a, "type", "veth", "peer", "name", if_z, "netns", ns_z)
        for ns, name, alias in ((ns_a, if_a, alias_a), (ns_z, if_z, alias_z)):
            if alias:
                run("ip", "-n", ns, "link", "set", name, "alias", alias[:120])
            run("ip", "-n", ns, "link", "set", name, "up")

    def daemon(self, ns: str, name: str, args: list[str]) -> int:
        """Start one FRR daemon in `ns` as user frr; its PID from the file it writes (bounded wait)."""
        pid_file = self.frr_dir(ns) / f"{name}.pid"
        run("ip", "netns", "exec", ns, str(FRR_DIR / name), "-d", "-u", "frr", "-g", "frr", "-i", str(pid_file),
            *args, timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                pid = int(pid_file.read_text().strip())
                self.pids.append(pid)
                return pid
            except (OSError, ValueError):
                time.sleep(0.05)
        raise LabError(f"{name} in {ns} wrote no PID file within 10 s")

    def process(self, ns: str, args: list[str], log: Path) -> int:
        """A foreground program (lldpd -d) in `ns`, its output to `log`; stopped by its PID on close."""
        with open(log, "w") as out:
            proc = subprocess.Popen(["ip", "netns", "exec", ns, *args], stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        self.pids.append(proc.pid)
        self._children.append(proc)
        return proc.pid

    def frr_dir(self, ns: str) -> Path:
        """The namespace's FRR directory (config, sockets, PID files), FRR's user's own."""
        d = self.dir / ns
        if not d.exists():
            d.mkdir()
            frr = pwd.getpwnam("frr")
            os.chown(d, frr.pw_uid, frr.pw_gid)
        return d

    def vtysh(self, d: Path, command: str, timeout: float = 20) -> str:
        """One show command, answered by the daemon it concerns over that daemon's vty socket, as
        vtysh asks it (the command and a NUL; the answer ends in three NULs and the return code).
        A vtysh process per question cost 20-50 ms of a core each; polling a few hundred routers
        every second with them took the cores the daemons needed (measured in benchmarks/)."""
        return vty_query(d / f"{_daemon_of(command)}.vty", command, timeout)

    def close(self) -> None:
        """Stop every daemon by its PID (TERM, then KILL after a bounded wait), delete every namespace,
        restore the kernel settings, remove the run directory. A daemon that was starting when the
        run was stopped is found by the PID file it wrote in the run's directory. A second Ctrl-C or
        SIGTERM while this runs is held back (every step is bounded): one interrupted mid-way left a
        run's 83 namespaces behind."""
        held: dict[int, Any] = {sig: signal.signal(sig, signal.SIG_IGN)
                                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        try:
            self._close()
        finally:  # the handlers from before the run (`__enter__` kept them), else those met here
            held.update(self._signals)
            for sig, handler in held.items():
                signal.signal(sig, handler)
            self._signals.clear()

    def _close(self) -> None:
        # Stopped, then looked for again: a daemon that was daemonizing when the run was stopped
        # (its `bgpd -d` parent killed mid-start) forks a child the first look can miss; one such
        # bgpd outlived an interrupted run in CI. Bounded: a few looks, each a bounded wait.
        for _ in range(CLOSE_LOOKS):
            self.pids += [pid for pid in _run_processes(self.dir) if pid not in self.pids]
            if not self.pids:
                break
            _stop_pids(self.pids)
            self.pids.clear()
            time.sleep(0.2)
        for child in self._children:  # reap the foreground programs we started
            try:
                child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self._children.clear()
        for ns in reversed(self.namespaces):
            run("ip", "netns", "delete", ns, check=False, timeout=30)
        self.namespaces.clear()
        for key, value in self.sysctl.items():
            run("sysctl", "-qw", f"{key}={value}", check=False)
        self.sysctl.clear()
        shutil.rmtree(self.dir, ignore_errors=True)


CLOSE_LOOKS = 4  # how many times close() looks for the run's processes before it gives up


def _stop_pids(pids: list[int]) -> None:
    """SIGTERM each, then SIGKILL any still alive after a bounded wait (5 s for all)."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + 5
    for pid in pids:
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.05)
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _run_processes(run_dir: Path) -> list[int]:
    """PIDs of this run's daemons, also one that was starting when the run was stopped and had not
    yet written its PID file: every process whose command line names the run's directory (each
    daemon is started with its config file there). Stopped one by one, by these PIDs."""
    mark = str(run_dir).encode()
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if mark in (entry / "cmdline").read_bytes():
                out.append(int(entry.name))
        except OSError:
            continue
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie of ours counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


@dataclass
class Built:
    """What a lab holds of the devices: namespaces, interface names, FRR run directories, and the
    `ip` commands queued per namespace (run by `flush`, one process each)."""

    ns: dict[str, str] = field(default_factory=dict)  # device -> namespace
    ifname: dict[tuple[str, str], str] = field(default_factory=dict)  # (device, vendor port) -> Linux name
    dirs: dict[str, Path] = field(default_factory=dict)  # device -> FRR run dir (vty sockets)
    batch: dict[str, list[str]] = field(default_factory=dict)  # namespace -> `ip -batch` lines to run
    done: set[tuple[str, str]] = field(default_factory=set)  # (namespace, loopback address) already added
    slow_bfd: bool = False  # BFD at frr.LAB_BFD_MS: more than BFD_DEFAULT_UP_TO routers

    def ip(self, ns: str, line: str) -> None:
        self.batch.setdefault(ns, []).append(line)

    def flush(self) -> None:
        """Run every namespace's queued `ip` commands, one process per namespace (`ip -batch`)."""
        for ns, lines in self.batch.items():
            if lines:
                run("ip", "-n", ns, "-batch", "-", inp="\n".join(lines) + "\n", timeout=120)
        self.batch.clear()


def daemons(la: Lab, b: Built, name: str, d: Path, conf: Path, bfd: bool) -> None:
    """zebra, bfdd where BFD runs, bgpd for one device, as FRR's user; its run directory into `b.dirs`."""
    frr = pwd.getpwnam("frr")
    os.chown(conf, frr.pw_uid, frr.pw_gid)
    ns = b.ns[name]
    zsock = str(d / "zserv.api")
    common = ["--vty_socket", str(d), "-f", str(conf)]
    la.daemon(ns, "zebra", [*common, "-z", zsock])
    if bfd:
        la.daemon(ns, "bfdd", [*common, "-z", zsock, "--bfdctl", str(d / "bfdd.sock")])
    la.daemon(ns, "bgpd", [*common, "-z", zsock, "-p", "179"])
    b.dirs[name] = d


def host_ip(b: Built, h: Host) -> None:
    """A host's ports of one fabric (a node on several emulated fabrics is one namespace: its
    loopback addresses are added once)."""
    ns = b.ns[h.name]
    for cidr in h.loopbacks:
        if (ns, cidr) not in b.done:
            b.done.add((ns, cidr))
            b.ip(ns, f"addr add {cidr} dev lo")
    for port in h.ports.values():
        if port.mtu:
            b.ip(ns, f"link set {port.name} mtu {min(port.mtu, 9000)}")
        for cidr in port.addresses:
            b.ip(ns, f"addr add {cidr} dev {port.name}")
    for port in h.ports.values():
        for route in port.routes:
            b.ip(ns, route_line(route, port.name))
        for rule in port.rules:
            b.ip(ns, f"rule add from {rule['from']} table {rule['table']}"
                 + (f" priority {rule['priority']}" if rule.get("priority") is not None else ""))


def route_line(route: dict, port: str) -> str:
    """A netplan route as networkd installs it: on the interface it is written under, in its table
    (the main table where it names none), with its scope, metric and on-link as written; nothing
    added and nothing left out, so a host reaches exactly what its netplan lets it reach (an
    unreachable route on no interface, as the kernel takes it)."""
    if route.get("type") == "unreachable":
        return f"route add unreachable {route['to']}" + (f" table {route['table']}" if "table" in route else "")
    line = f"route add {route['to']}" + (f" via {route['via']}" if "via" in route else "") + f" dev {port}"
    for key in ("scope", "table", "metric"):
        if route.get(key) is not None:
            line += f" {key} {route[key]}"
    return line + (" onlink" if route.get("on-link") is True else "")


@contextmanager
def lab() -> Iterator[Lab]:
    preflight()
    with Lab() as la:
        yield la
