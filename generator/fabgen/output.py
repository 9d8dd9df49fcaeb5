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


def _write_one(base: str, rel: str, content: bytes) -> None:
    fd = os.open(os.path.join(base, rel), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


class Staging:
    """The temporary tree beside OUT that becomes OUT.

    Created before the render, so a foreign OUT is refused before any work, but nothing
    (not even a parent directory) is made until `commit`, which writes every file from a few
    threads (os.open/os.write release the GIL, so creation latency
    overlaps) and swaps the tree in with renameat2(RENAME_EXCHANGE); until then OUT is
    untouched, and `abort` removes the temporary tree. fabgen never deletes outside OUT
    and its own temporary trees.
    """

    def __init__(self, out: Path, force: bool = False):
        self.out = Path(out)
        self.force = force
        check_target(self.out, force)
        self.tmp: Path | None = None

    def commit(self, files: dict[str, bytes]) -> None:
        try:
            self.parent = self.out.resolve().parent
            self.parent.mkdir(parents=True, exist_ok=True)
            self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.fabgen-", dir=self.parent))
            base = os.fspath(self.tmp)
            for d in sorted({os.path.dirname(rel) for rel in files} - {""}):
                os.makedirs(os.path.join(base, d), exist_ok=True)
            with ThreadPoolExecutor(WRITERS) as pool:
                for _ in pool.map(lambda item: _write_one(base, *item), sorted(files.items()), chunksize=32):
                    pass
            check_target(self.out, self.force)  # nothing foreign appeared meanwhile
            tmp = self.tmp
            if self.out.exists():
                if not _exchange(tmp, self.out):  # no atomic exchange: two renames, a short gap
                    old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.old-", dir=self.parent))
                    os.rename(self.out, old / "tree")
                    os.rename(tmp, self.out)
                    tmp = old
                shutil.rmtree(tmp, ignore_errors=True)  # now holds the previous tree
            else:
                os.rename(tmp, self.out)
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


def write_tree(out: Path, files: dict[str, bytes], force: bool = False) -> None:
    """Write a whole tree into OUT atomically."""
    Staging(Path(out), force).commit(files)
