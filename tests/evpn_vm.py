"""`fabgen emulate` of a northsouth fabric inside a small virtual machine, for machines whose own
kernel lacks what the EVPN lab needs (bonding, 802.1Q, VRF, a VLAN-filtering bridge: the test
machines' kernel is built without them).

The VM runs Debian's stock kernel (package linux-image-amd64) under QEMU (qemu-system-x86, TCG:
no KVM needed) with this machine's root filesystem shared read-only over 9p: the same fabgen,
Python, FRR and iproute2 as the host, and the render to emulate (any path but /run). A tiny
initramfs (busybox-static and the kernel's 9p modules) mounts it and hands over to a guest script
that loads the modules the lab needs, gives the lab a tmpfs (/run), runs `fabgen emulate --format
json` and prints its verdict between markers on the serial console; the VM powers off. Nothing
is created on the host but the VM's work folder; the QEMU process ends with the VM or at the
timeout (killed by its PID). The console is written to the work folder as it comes, and fabgen
prints its stages there (--progress), so a run that hangs says where it was.
"""

from __future__ import annotations

import glob
import gzip
import io
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

QEMU = shutil.which("qemu-system-x86_64")
BUSYBOX = "/bin/busybox"
BOOT_MODULES = ("virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci",
                "9pnet", "9pnet_virtio", "netfs", "fscache", "9p")
LAB_MODULES = ("bonding", "8021q", "vrf", "macvlan", "vxlan", "veth", "bridge")
BEGIN, END = "FABGEN-VM-BEGIN", "FABGEN-VM-END"
KERNEL_LINE = re.compile(r"\[ *\d+\.\d+\] ")  # a kernel message on the console, e.g. "[  131.2] sysrq: ..."


def kernel() -> tuple[str, str] | None:
    """(vmlinuz path, version) of an installed stock kernel whose modules are on disk, newest first."""
    for path in sorted(glob.glob("/boot/vmlinuz-*"), reverse=True):
        version = path.removeprefix("/boot/vmlinuz-")
        if os.path.isdir(f"/lib/modules/{version}") and os.access(path, os.R_OK):
            return path, version
    return None


def missing() -> list[str]:
    """The Debian packages running the VM needs that this machine lacks (busybox-static: the
    initramfs's shell must be statically linked)."""
    out = [pkg for pkg in ("qemu-system-x86", "linux-image-amd64", "busybox-static")
           if subprocess.run(["dpkg", "-s", pkg], capture_output=True).returncode != 0]
    if kernel() is None and "linux-image-amd64" not in out:
        out.append("linux-image-amd64")
    return out


def _module(version: str, name: str) -> bytes:
    path = subprocess.run(["modinfo", "-k", version, "-n", name], capture_output=True, text=True,
                          check=True).stdout.strip()
    data = Path(path).read_bytes()
    if path.endswith(".xz"):
        import lzma
        return lzma.decompress(data)
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", path], capture_output=True, check=True).stdout
    return data


def _cpio(files: dict[str, tuple[bytes, int]]) -> bytes:
    """A newc cpio archive of `files` (path -> (content, mode)), directories implied."""
    out = io.BytesIO()
    dirs = sorted({str(Path(p).parent) for p in files if str(Path(p).parent) != "."}
                  | {str(q) for p in files for q in Path(p).parents if str(q) != "."})
    entries = [(d, b"", stat.S_IFDIR | 0o755) for d in dirs] + [(p, c, stat.S_IFREG | m) for p, (c, m) in
                                                                sorted(files.items())]
    entries.append(("TRAILER!!!", b"", 0))
    for ino, (name, data, mode) in enumerate(entries, 1):
        raw = name.encode() + b"\0"
        head = "070701" + "".join(f"{v:08x}" for v in (ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(raw), 0))
        out.write(head.encode() + raw)
        out.write(b"\0" * (-(110 + len(raw)) % 4))
        out.write(data)
        out.write(b"\0" * (-len(data) % 4))
    return out.getvalue()


INIT = """#!/bin/busybox sh
/bin/busybox mkdir -p /proc /dev /newroot
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t devtmpfs dev /dev
for m in {modules}; do /bin/busybox insmod /lib/modules/$m.ko 2>/dev/null; done
/bin/busybox mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /newroot || /bin/busybox poweroff -f
/bin/busybox umount /proc /dev
exec /bin/busybox switch_root /newroot {guest} "$@"
"""

GUEST = """#!/bin/sh
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev; mount -t tmpfs tmpfs /run
mkdir -p /run/netns /run/lab
for m in {modules}; do modprobe $m; done
ip link set lo up
cd {cwd}
# the fabgen the test imports (a worktree's, put first on PYTHONPATH), not the one installed in the venv
export PYTHONPATH={pythonpath}
echo "guest up after $(cut -d' ' -f1 /proc/uptime) s"
echo "guest fabgen: $({python} -c 'import fabgen; print(fabgen.__file__)')"
emulate() {{
    # fabgen's stages and any message on the console as they happen, through a pipe (on the console
    # itself, a terminal, they would be an animation); its own bound, below the VM's
    {{ TMPDIR=/run/lab HOME=/run/lab PYTHONDONTWRITEBYTECODE=1 timeout -s INT -k 60 {bound} \\
        {python} -m fabgen emulate "$@" --format json --progress 2>&1 > /run/lab/out.json
       echo $? > /run/lab/rc; }} | cat
}}
k=0
for render in "$@"; do
    # a render and its own arguments, joined by commas (render,--fabric,NAME)
    set -f; IFS=,; emulate $render; unset IFS; set +f
    echo "{begin} $k $(cat /run/lab/rc)"
    cat /run/lab/out.json
    echo "{end} $k"
    k=$((k + 1))
done
sleep 2  # the console drains before the kernel's own lines (power off) could mix in
echo o > /proc/sysrq-trigger
sleep 30
"""

# Seconds: the guest's own bound on each fabgen emulate (it is interrupted, cleans up and says
# where it was), then the VM's per render (QEMU killed). One render took 130 s with two idle
# cores, 600 s beside two busy ones.
GUEST_BOUND, VM_BOUND = 900, 1000


def emulate(renders: list[Path | tuple[Path, list[str]]], work: Path, timeout: float | None = None
            ) -> tuple[list[tuple[int, str]], str]:
    """([(fabgen's exit code, its stdout)] of `fabgen emulate RENDER [ARGS] --format json` for each
    render (a path, or a path and its own arguments such as ["--fabric", "gpu-plane1"]), the
    console), all in one VM boot. `work` (a folder the test owns, outside /run) holds the
    initramfs, the guest script and the console as it is written (console.txt), so a VM that never
    ends still says where it was."""
    path, version = kernel()  # type: ignore[misc]
    work.mkdir(parents=True, exist_ok=True)
    guest = work / "guest.sh"
    import fabgen

    package = Path(fabgen.__file__).resolve()
    guest.write_text(GUEST.format(modules=" ".join(LAB_MODULES), cwd=os.getcwd(), python=sys.executable,
                                  begin=BEGIN, end=END, bound=GUEST_BOUND,
                                  pythonpath=shlex.quote(str(package.parents[1]))))
    guest.chmod(0o755)
    # the kernel hands init's arguments after "--" on its command line to init; switch_root passes them on
    files = {"init": (INIT.format(modules=" ".join(BOOT_MODULES), guest=guest).encode(), 0o755),
             "bin/busybox": (Path(BUSYBOX).read_bytes(), 0o755)}  # type: ignore[arg-type]
    files.update({f"lib/modules/{m}.ko": (_module(version, m), 0o644) for m in BOOT_MODULES})
    initrd = work / "initrd.gz"
    initrd.write_bytes(gzip.compress(_cpio(files)))
    runs = [(r, []) if isinstance(r, Path) else r for r in renders]
    words = [[str(path.resolve()), *extra] for path, extra in runs]
    args = " ".join(",".join(w) for w in words)
    if any(c.isspace() or c == "," for w in words for word in w for c in word):
        raise ValueError(f"render paths and arguments with white space or commas cannot reach the VM's command "
                         f"line: {args}")
    log = work / "console.txt"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [QEMU, "-accel", "tcg,thread=multi", "-cpu", "max", "-m", "4096", "-smp", "2", "-kernel", path,  # type: ignore[list-item]
             "-initrd", str(initrd), "-append", f"console=ttyS0 quiet panic=-1 -- {args}", "-nographic",
             "-no-reboot", "-virtfs",
             "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            process.wait(timeout=timeout or VM_BOUND * len(renders))
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"the VM did not end within {timeout or VM_BOUND * len(renders):g} s; its console:\n"
                               f"{log.read_text(errors='replace')[-6000:]}") from None
        finally:  # also when the test is interrupted (Ctrl-C): QEMU was left running, orphaned
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)
    console = log.read_text(errors="replace")
    if f"guest fabgen: {package}" not in console:  # else the verdicts are another checkout's
        raise RuntimeError(f"the VM's fabgen is not this test's ({package}):\n{console[-6000:]}")
    verdicts = []
    for k in range(len(renders)):
        head, tail = f"{BEGIN} {k} ", f"{END} {k}"
        if head not in console or tail not in console:
            raise RuntimeError(f"the VM printed no verdict for {runs[k][0]}:\n{console[-6000:]}")
        body = console.split(head, 1)[1].split(tail, 1)[0]
        body = "".join(line for line in body.splitlines(keepends=True) if not KERNEL_LINE.match(line))
        code, _, out_text = body.partition("\n")
        verdicts.append((int(code.strip() or -1), out_text))
    return verdicts, console
