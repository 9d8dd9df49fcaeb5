"""Write the rendered tree atomically, with a manifest.

The tree is written into a fresh temporary directory beside OUT, then swapped in with
renames: a render that dies half-way leaves the previous OUT untouched. fabgen deletes or
replaces only the files its own manifest lists: an OUT holding anything else (the
inventory, a .git, notes, links) is refused, with or without --force, which only allows
replacing files fabgen wrote that were edited since. Where OUT cannot be renamed (a mount
point, the current directory) the new tree is moved in entry by entry.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fabgen._version import __version__
from fabgen.errors import OutputError
from fabgen.rendered import manifest as manifests
from fabgen.rendered.manifest import ManifestError

MANIFEST = manifests.MANIFEST
INPLACE_PREFIX = manifests.INPLACE_PREFIX


def manifest(files: dict[str, bytes], inventory_sha256: str) -> bytes:
    return manifest_of({p: (hashlib.sha256(b).hexdigest(), len(b)) for p, b in files.items()}, inventory_sha256)


def manifest_of(digests: dict[str, tuple[str, int]], inventory_sha256: str) -> bytes:
    """The manifest from each file's (sha256, size)."""
    entries = [{"path": p, "sha256": digest, "bytes": size} for p, (digest, size) in sorted(digests.items())]
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


def _manifest(out: Path) -> dict[str, str] | None:
    """path -> sha256 of every file OUT's fabgen manifest lists (the manifest itself with no
    digest), None when OUT has no manifest.json. A manifest that is not what fabgen writes (an
    entry outside OUT, without a digest, a link as the manifest) is an OutputError naming the
    entry: fabgen then replaces nothing."""
    try:
        found = manifests.read(out)
    except ManifestError as exc:
        raise OutputError(f"{exc}; fabgen does not trust this manifest and replaces nothing in {out}: render "
                          "into a new or empty directory") from None
    except OSError as exc:
        raise OutputError(f"cannot read {out / MANIFEST} ({exc.strerror or exc})") from None
    if found is None:
        return None
    listed = {e.path: e.sha256 for e in found.entries}
    listed[MANIFEST] = ""
    return listed


def foreign(out: Path, listed: dict[str, str] | None = None) -> list[str]:
    """Entries of OUT that fabgen's manifest does not list: the user's, never fabgen's to delete."""
    return manifests.unlisted((_manifest(out) or {}) if listed is None else listed, out)


def edited(out: Path, listed: dict[str, str] | None = None) -> list[str]:
    """Files the manifest lists whose content changed since fabgen wrote them. A listed path
    that is not a plain file (a link, a FIFO, a directory) is an OutputError: fabgen never
    reads through it, nor replaces it."""
    listed = (_manifest(out) or {}) if listed is None else listed
    changed = []
    with manifests.Tree(out) as tree:
        for rel, digest in listed.items():
            if not digest:
                continue
            try:
                data = tree.read(rel)
            except FileNotFoundError:
                continue
            except ManifestError as exc:
                raise OutputError(f"{exc}: {MANIFEST} lists it, so fabgen replaces nothing in {out}") from None
            except OSError as exc:
                raise OutputError(f"cannot read {out / rel} ({exc.strerror or exc})") from None
            if hashlib.sha256(data).hexdigest() != digest:
                changed.append(rel)
    return sorted(changed)


def check_target(out: Path, force: bool = False) -> None:
    """Refuse an OUT that fabgen could only replace by deleting what it did not write: a link,
    a file, or a directory holding anything its manifest does not list (whatever --force says).
    Files fabgen wrote and someone edited are replaced only with --force."""
    if out.is_symlink():
        raise OutputError(f"{out} is a symbolic link (to {os.readlink(out)}); give the directory itself")
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out} exists and is not a directory; choose another output directory")
    for parent in out.absolute().parents:
        if parent.exists() and not parent.is_dir():
            raise OutputError(f"{parent} is a file, so {out} cannot be a directory; choose another output directory")
    if not out.is_dir():
        return
    listed = _manifest(out) or {}
    others = foreign(out, listed)
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        raise OutputError(f"{out} holds {len(others)} entr{'y' if len(others) == 1 else 'ies'} fabgen did not write "
                          f"({shown}); fabgen only replaces the files its manifest lists: render into a new or empty "
                          "directory")
    changed = edited(out, listed)  # also with --force: every listed path must be a plain file
    if changed and not force:
        raise OutputError(f"{', '.join(changed[:3])} in {out} changed since fabgen wrote "
                          f"{'them' if len(changed) > 1 else 'it'}; pass --force to replace "
                          f"{'them' if len(changed) > 1 else 'it'} with this render")


def in_place(out: Path) -> bool:
    """OUT cannot be swapped by rename: a mount point (a container's bind mount), or the current
    directory or one above it (the shell would be left in a deleted directory)."""
    if not out.is_dir():
        return False
    real = out.resolve()
    cwd = Path.cwd().resolve()
    return os.path.ismount(real) or real == cwd or real in cwd.parents


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

    Created before the work, so a foreign OUT is refused before any; nothing (not even a
    parent directory) is made until `begin`. The render writes each file as it is made
    (`write`, from both render processes) and `finish` swaps the tree in with
    renameat2(RENAME_EXCHANGE); `commit` does all three for files already in memory. Until
    `finish` OUT is untouched, and `abort` removes the temporary tree. fabgen never deletes
    outside OUT and its own temporary trees.
    """

    def __init__(self, out: Path, force: bool = False):
        self.out = Path(out)
        self.force = force
        check_target(self.out, force)
        self.tmp: Path | None = None

    def commit(self, files: dict[str, bytes]) -> None:
        """Write every file of `files` and swap the tree in."""
        with self.writing():
            self.begin()
            for rel, content in sorted(files.items()):
                self.write(rel, content)
            self.finish()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Around begin/write/finish: an OSError becomes an OutputError naming the file, and any
        failure removes the temporary tree (OUT is untouched until `finish` swaps it in)."""
        try:
            yield
        except OSError as exc:
            self.abort()
            where = exc.filename or self.out
            raise OutputError(f"cannot write {where}: {exc.strerror or exc}") from None
        except BaseException:
            self.abort()
            raise

    def begin(self) -> None:
        """Make the temporary tree beside OUT (inside it where OUT cannot be renamed)."""
        self.inplace = in_place(self.out)
        self.parent = self.out.resolve() if self.inplace else self.out.resolve().parent
        self.parent.mkdir(parents=True, exist_ok=True)
        prefix = INPLACE_PREFIX if self.inplace else f".{self.out.name}.fabgen-"
        self.tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=self.parent))
        self.base = os.fspath(self.tmp)
        self._made: set[str] = {""}

    def write(self, rel: str, content: bytes) -> tuple[str, int]:
        """Write one file into the temporary tree: (sha256, size), what the manifest lists. Safe
        to call from two processes at once (a directory made by the other is fine)."""
        d = os.path.dirname(rel)
        if d not in self._made:
            os.makedirs(os.path.join(self.base, d), exist_ok=True)
            self._made.add(d)
        _write_one(self.base, rel, content)
        return hashlib.sha256(content).hexdigest(), len(content)

    def finish(self) -> None:
        """Swap the written tree in: atomically where OUT can be renamed."""
        check_target(self.out, self.force)  # nothing foreign appeared meanwhile
        if self.inplace:
            self._swap_in_place()
            return
        tmp = self.tmp
        assert tmp is not None
        if self.out.exists():
            if not _exchange(tmp, self.out):  # no atomic exchange: two renames, a short gap
                old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.old-", dir=self.parent))
                os.rename(self.out, old / "tree")
                os.rename(tmp, self.out)
                tmp = old
            shutil.rmtree(tmp, ignore_errors=True)  # now holds the previous tree
        else:
            os.rename(tmp, self.out)
        self.tmp = None

    def _swap_in_place(self) -> None:
        """OUT stays (mount point, current directory): remove the files the old manifest lists
        and the directories they leave empty, then move the new tree's entries in. Not atomic:
        a render killed in between leaves OUT partly replaced, which the next render repairs."""
        assert self.tmp is not None
        listed = _manifest(self.out) or {}
        for rel in sorted(listed, key=lambda p: (p == MANIFEST, p)):  # the manifest last
            try:
                (self.out / rel).unlink()
            except FileNotFoundError:
                pass
        dirs = {a for rel in listed for a in manifests.ancestors(os.path.dirname(rel))}
        for d in sorted(dirs, key=len, reverse=True):
            try:
                (self.out / d).rmdir()
            except OSError:
                pass
        entries = sorted(os.listdir(self.tmp), key=lambda n: n == MANIFEST)  # the manifest last
        for name in entries:
            os.rename(self.tmp / name, self.out / name)
        self.tmp.rmdir()
        self.tmp = None

    def abort(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)


def write_tree(out: Path, files: dict[str, bytes], force: bool = False) -> None:
    """Write a whole tree into OUT atomically."""
    Staging(Path(out), force).commit(files)
