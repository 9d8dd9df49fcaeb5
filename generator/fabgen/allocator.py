"""How the C allocator serves a render: glibc's settings, chosen before the program starts.

A render of 131,072 GPUs of four planes spent 19 s of its 54 s of processor time in the
kernel, most of it page faults (4.4 million): glibc gives every large string (a file's
text, its bytes) its own mapping and returns it on free, so each file written faulted its
pages in afresh, and the heap grew by small pages. Three glibc tunables
(https://www.gnu.org/software/libc/manual/html_node/Memory-Allocation-Tunables.html)
change that for the program fabgen is:

- ``glibc.malloc.mmap_threshold`` and ``glibc.malloc.trim_threshold``: large blocks come
  from the heap and stay there, reused by the next file instead of mapped again;
- ``glibc.malloc.hugetlb=1`` (glibc 2.35 and later): the heap is advised to use transparent
  huge pages, one fault per 2 MiB instead of per 4 KiB, where the kernel allows them
  (``/sys/kernel/mm/transparent_hugepage/enabled`` set to ``madvise`` or ``always``).

Measured on the 2-core machine of benchmarks/ (sx-4plane, 131,072 GPUs, one run each,
same hour): kernel time 19.0 -> 9.9 s, wall 29.6 -> 25.2 s, main process peak 3.83 ->
3.86 GiB; the thresholds alone 19.0 -> 16.4 s. ``PYTHONMALLOC=malloc`` as well was slower
(user time 35 -> 46 s): Python's own allocator stays.

glibc reads tunables only when a program starts, so the command line starts itself again
once with them (:func:`restart`); a user's own ``GLIBC_TUNABLES``, even empty, is left as
it is, and the Python API (``fabgen.render``) changes nothing. The processes fabgen starts
(Graphviz, git) inherit the settings, which change only how fast they allocate.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping
from typing import Optional

TUNABLES = ":".join((
    "glibc.malloc.hugetlb=1",
    "glibc.malloc.mmap_threshold=268435456",  # 256 MiB: every file's text from the heap
    "glibc.malloc.trim_threshold=1073741824",  # 1 GiB: freed heap kept for the next file
))
_VARIABLE = "GLIBC_TUNABLES"
_STARTED = "FABGEN_ALLOCATOR"  # set in the restarted program: it never starts a third time,
# even where something between the two (a wrapper, a secure-execution loader) drops the tunables


def environment(environ: Mapping[str, str]) -> Optional[dict[str, str]]:
    """The environment to start fabgen in, or None when it is right as it is: off glibc (the
    tunables are glibc's), when the user set GLIBC_TUNABLES, and in the restarted program."""
    if _VARIABLE in environ or _STARTED in environ or not sys.platform.startswith("linux"):
        return None
    if platform.libc_ver()[0] != "glibc":
        return None
    return {**environ, _VARIABLE: TUNABLES, _STARTED: "1"}


# The commands whose work grows with the fabric; the others do not pay for a second start
# (70 ms: the interpreter and fabgen's command line imported twice).
COMMANDS = frozenset({"render", "diff"})


def restart(argv: list[str], execve=os.execve) -> None:
    """Start this command line again with the allocator's settings, if they are not set.

    Returns only when no restart is needed (another command, the settings there already,
    not glibc) or the start failed: the command then runs with the allocator as it is,
    slower at scale, with the same output."""
    environ = environment(os.environ)
    if environ is None or not argv[1:2] or argv[1] not in COMMANDS or not _restartable(argv):
        return
    try:
        execve(sys.executable, list(sys.orig_argv), environ)
    except (OSError, ValueError, TypeError):
        return


def _restartable(argv: list[str]) -> bool:
    """Whether starting the interpreter's own command line again runs this command again: an
    interpreter to start, a program not read from standard input (read already), and a
    command line that ends with this command's arguments (not a program that calls
    fabgen.cli.main with arguments of its own making)."""
    orig, tail = list(getattr(sys, "orig_argv", ())), argv[1:]
    return bool(sys.executable) and argv[0] != "-" and len(orig) > len(tail) and orig[-len(tail):] == tail
