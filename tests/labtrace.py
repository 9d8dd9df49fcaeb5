"""What an emulation leaves on the machine, counted for this test run's own labs only.

This run's labs keep their run directories in a temporary directory of the run's own (`TMPDIR`
for the `fabgen emulate` processes the tests start, `tempfile.tempdir` for a lab run in the test's
process). A lab of another run on the same machine (a second checkout's tests, an operator's
`fabgen emulate`) keeps its directory in the machine's temporary directory, or in that run's own
directory there, for as long as it lives,
and its namespaces carry the same lab id (`fabgen-<id>-<n>`, emulate/lab.py): they are told apart
by that id and left out, so two runs on one machine never fail each other's before-and-after
comparison. Without another lab alive, which is CI's case, every namespace counts.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

SYSTEM_TMP = Path(tempfile.gettempdir())
# short: FRR's sockets live under the run directory and a socket path holds 107 bytes
LABS_TMP = Path(tempfile.mkdtemp(prefix="fl-", dir=SYSTEM_TMP))
LABS_TMP.chmod(0o711)  # FRR's user passes through to its run directory, as through the machine's
atexit.register(shutil.rmtree, LABS_TMP, True)

_LAB = re.compile(r"fabgen-([0-9a-f]{6})-")


def env() -> dict[str, str]:
    """The environment of a `fabgen emulate` process this run starts: its labs in LABS_TMP."""
    return {**os.environ, "TMPDIR": str(LABS_TMP)}


def _foreign_ids() -> set[str]:
    """Lab ids alive in the machine's temporary directory or in another test run's directory there
    (`fl-*`, as this module makes them): other runs' labs, never this run's."""
    ids = set()
    for p in (*SYSTEM_TMP.glob("fabgen-emulate-*"), *SYSTEM_TMP.glob("fl-*/fabgen-emulate-*")):
        if p.parent == LABS_TMP:
            continue
        parts = p.name.split("-")
        if len(parts) > 2:
            ids.add(parts[2])
    return ids


def namespaces() -> tuple[set[str], bool]:
    """This run's lab namespaces, and whether another run's lab was alive meanwhile. The machine's
    labs are listed between two listings of the live run directories: a lab makes its directory
    before its first namespace and removes it after its last, so a namespace of another run is
    always seen with its directory."""
    foreign = _foreign_ids()
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                            timeout=30).stdout.split("\n") if shutil.which("ip") else []
    foreign |= _foreign_ids()
    ours = set()
    for line in listed:
        name = line.split(" ")[0]
        m = _LAB.match(name)
        if m and m.group(1) not in foreign:
            ours.add(name)
    return ours, bool(foreign)


def mounts() -> list[str]:
    """The namespace mounts of this run's labs."""
    foreign = _foreign_ids()
    lines = Path("/proc/mounts").read_text().splitlines()
    foreign |= _foreign_ids()
    return sorted(line for line in lines
                  if (m := _LAB.search(line)) and m.group(1) not in foreign)


def run_dirs() -> list[str]:
    """This run's lab run directories still on disk (in LABS_TMP or, for an in-process lab whose
    tempdir was not redirected, nowhere else to look: the machine's are other runs')."""
    return sorted(p.name for p in LABS_TMP.glob("fabgen-emulate-*"))


def daemons_left() -> bool:
    """Whether a process of one of this run's labs is still running (each daemon's command line
    names its run directory, inside LABS_TMP)."""
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, timeout=30).stdout
    return f"{LABS_TMP}/fabgen-emulate-" in ps
