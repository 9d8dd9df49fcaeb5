"""Write the rendered tree atomically, with a manifest.

The tree is written into a fresh temporary directory beside OUT, then swapped in with
renames: a render that dies half-way leaves the previous OUT untouched. fabgen only
replaces an OUT it created itself (it has fabgen's manifest), an empty directory, or
anything with --force; it never deletes outside OUT.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import ctypes
import ctypes.util

from fabgen import __version__
from fabgen.errors import OutputError

MANIFEST = "manifest.json"


def manifest(files: dict[str, bytes], inventory_sha256: str) -> bytes:
    entries = [{"path": p, "sha256": hashlib.sha256(b).hexdigest(), "bytes": len(b)} for p, b in sorted(files.items())]
    doc = {"generator": "fabgen", "fabgen_version": __version__, "inventory_sha256": inventory_sha256,
           "files": entries}
    return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()


_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2); False where the system cannot."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    rc = fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0


def _ours(out: Path) -> bool:
    try:
        doc = json.loads((out / MANIFEST).read_text())
        return isinstance(doc, dict) and doc.get("generator") == "fabgen"
    except (OSError, ValueError):
        return False


def check_target(out: Path, force: bool = False) -> None:
    """Refuse an OUT that is a file or a non-empty directory fabgen did not create."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise OutputError(f"{out} exists and is not a directory; choose another output directory")
    if out.is_dir() and not force and any(out.iterdir()) and not _ours(out):
        raise OutputError(f"{out} is a non-empty directory that fabgen did not create; "
                          "choose an empty or new directory, or pass --force to replace it")


WRITERS = 4  # threads: file creation waits on the kernel, not on Python


def _write_files(root: Path, files: dict[str, bytes]) -> None:
    """Create every file under root. Directories first, then the files from a few threads
    (os.open/os.write release the GIL, so creation latency overlaps)."""
    base = os.fspath(root)
    dirs = sorted({os.path.dirname(rel) for rel in files} - {""})
    for d in dirs:
        os.makedirs(os.path.join(base, d), exist_ok=True)

    def one(item: tuple[str, bytes]) -> None:
        rel, content = item
        fd = os.open(os.path.join(base, rel), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)

    items = sorted(files.items())
    if len(items) < 64:
        for item in items:
            one(item)
        return
    with ThreadPoolExecutor(WRITERS) as pool:
        for _ in pool.map(one, items, chunksize=32):
            pass


def write_tree(out: Path, files: dict[str, bytes], force: bool = False) -> None:
    out = Path(out)
    check_target(out, force)
    parent = out.resolve().parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.fabgen-", dir=parent))
    try:
        _write_files(tmp, files)
        if out.exists():
            if not _exchange(tmp, out):  # no atomic exchange: two renames, a short gap
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=parent))
                os.rename(out, old / "tree")
                os.rename(tmp, out)
                tmp = old
        else:
            os.rename(tmp, out)
            return
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(tmp, ignore_errors=True)  # now holds the previous tree
