"""A render's manifest.json, read as the untrusted input it is.

fabgen writes OUT/manifest.json and later trusts it twice: `render` replaces and deletes only
the files it lists, and `diff` reads a render folder through it. Anyone can edit it, so an
entry is honoured only when it is what fabgen itself writes: a relative path of plain name
characters, without `.` or `..` components, with a sha256 and a size. Files are opened without
following links and without blocking (a FIFO or a device never hangs a read), and only when
they are plain files of a bounded size. Anything else is refused with a message naming the
entry (ManifestError), so no crafted manifest makes fabgen delete or read outside OUT.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from fabgen.errors import printable

MANIFEST = "manifest.json"
# the temporary tree of an in-place render, beside the files of OUT
INPLACE_PREFIX = ".fabgen-new-"
# The characters of every path fabgen writes: names are DNS labels, device and netdev names
# (schema.NAME_PATTERN, DEVICE_PATTERN) and fixed file names; no component starts with a dot.
_COMPONENT = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,254}"
PATH_RE = re.compile(rf"^{_COMPONENT}(/{_COMPONENT}){{0,15}}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
MAX_MANIFEST_BYTES = 256 * 1024 * 1024  # 131,072 GPUs of four planes list ~40 MB of entries
MAX_FILE_BYTES = 1024 * 1024 * 1024  # fabgen's largest file at 131k GPUs is well under this
MAX_PATH = 1024


class ManifestError(Exception):
    """A manifest (or a file it lists) that is not what fabgen writes: one line naming the entry."""


@dataclass(frozen=True)
class Entry:
    path: str
    sha256: str
    size: int


@dataclass(frozen=True)
class Manifest:
    """The entries of a manifest fabgen would have written, in its order."""

    entries: tuple[Entry, ...]
    inventory_sha256: str

    def paths(self) -> list[str]:
        return [e.path for e in self.entries]


_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class Tree:
    """A directory read without following any link on the way: every directory on a file's path
    is opened relative to its parent with O_NOFOLLOW (openat), so a directory that is a link to
    elsewhere is refused, not read through. Close it when done (a context manager)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.fds: dict[str, int] = {"": os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))}

    def __enter__(self) -> Tree:
        return self

    def __exit__(self, *exc: object) -> None:
        for fd in self.fds.values():
            os.close(fd)
        self.fds.clear()

    def _dir(self, rel: str) -> int:
        fd = self.fds.get(rel)
        if fd is None:
            parent, _, name = rel.rpartition("/")
            try:
                fd = os.open(name, _FLAGS | os.O_DIRECTORY, dir_fd=self._dir(parent))
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise ManifestError(f"{printable(str(self.root / rel))} is a symbolic link or not a directory, "
                                        "so fabgen did not write what is under it") from None
                raise
            self.fds[rel] = fd
        return fd

    def read(self, rel: str, limit: int = MAX_FILE_BYTES, single: bool = False) -> bytes:
        """The bytes of the plain file at `rel` (single: refuse one with other hard links, whose
        content lives outside the tree too)."""
        parent, _, name = rel.rpartition("/")
        return open_plain(name, limit, dir_fd=self._dir(parent), shown=str(self.root / rel), single=single)


def open_plain(path: str | Path, limit: int = MAX_FILE_BYTES, dir_fd: int | None = None, shown: str = "",
               single: bool = False) -> bytes:
    """The bytes of a plain file, never through a link, never blocking on a FIFO, at most `limit`.

    Raises ManifestError for a link, a directory, a FIFO or device, or a file over the limit;
    OSError for what the system refuses (permissions)."""
    shown = printable(shown or os.fspath(path))
    try:
        fd = os.open(path, _FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ManifestError(f"{shown} is a symbolic link, not a file fabgen wrote") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ManifestError(f"{shown} is {_kind(st.st_mode)}, not a file fabgen wrote")
        if single and st.st_nlink > 1:
            raise ManifestError(f"{shown} has {st.st_nlink} hard links: fabgen writes files of one, so its content "
                                "is also somewhere fabgen did not write")
        if st.st_size > limit:
            raise ManifestError(f"{shown} is {st.st_size:,} bytes, more than the {limit:,} fabgen reads")
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise ManifestError(f"{shown} is more than the {limit:,} bytes fabgen reads")
        return data
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file"


def check_path(path: object) -> str | None:
    """Why `path` is not a path fabgen writes, or None."""
    if not isinstance(path, str):
        return "its path is not a string"
    if len(path) > MAX_PATH:
        return f"its path is longer than {MAX_PATH} characters"
    if path.startswith("/"):
        return "its path is absolute"
    if any(part in (".", "..") for part in path.split("/")):
        return "its path has a '.' or '..' component"
    if not PATH_RE.match(path):
        return "its path holds characters, empty parts or hidden names fabgen never writes"
    return None


def parse(data: bytes, where: str) -> Manifest:
    """The manifest in `data` (the bytes of `where`), or ManifestError naming the first bad entry."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ManifestError(f"{where}: not JSON ({str(exc)[:200]})") from None
    if not isinstance(doc, dict) or doc.get("generator") != "fabgen" or not isinstance(doc.get("files"), list):
        raise ManifestError(f"{where}: not a fabgen manifest (it needs generator: fabgen and a files list)")
    inventory = doc.get("inventory_sha256")
    if not isinstance(inventory, str) or not _SHA256.match(inventory):
        raise ManifestError(f"{where}: not a fabgen manifest (no inventory_sha256)")
    entries, seen = [], set()
    for i, e in enumerate(doc["files"]):
        shown = f"{where}: files[{i}]"
        if not isinstance(e, dict):
            raise ManifestError(f"{shown} is not an entry (path, sha256, bytes)")
        why = check_path(e.get("path"))
        if why:
            raise ManifestError(f"{shown} ({printable(repr(e.get('path')))[:200]}): {why}")
        path = e["path"]
        if path == MANIFEST or path in seen:
            raise ManifestError(f"{shown} ({path}): listed {'again' if path in seen else 'as a file it writes'}")
        sha, size = e.get("sha256"), e.get("bytes")
        if not isinstance(sha, str) or not _SHA256.match(sha):
            raise ManifestError(f"{shown} ({path}): no sha256 digest, so fabgen cannot tell it wrote that file")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise ManifestError(f"{shown} ({path}): no size in bytes")
        if size > MAX_FILE_BYTES:
            raise ManifestError(f"{shown} ({path}): {size:,} bytes, more than the {MAX_FILE_BYTES:,} fabgen writes in "
                                "one file")
        seen.add(path)
        entries.append(Entry(path, sha, size))
    return Manifest(tuple(entries), inventory)


def read(root: Path) -> Manifest | None:
    """ROOT's manifest, None when ROOT has no manifest.json; ManifestError when it has one that
    is not a plain file or not what fabgen writes."""
    path = Path(root) / MANIFEST
    try:
        data = open_plain(path, MAX_MANIFEST_BYTES)
    except FileNotFoundError:
        return None
    except ManifestError:
        if not os.path.lexists(path):
            return None
        raise
    return parse(data, printable(str(path)))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _entries(out: Path) -> tuple[list[str], list[str]]:
    """(files and links, directories) under OUT, relative, without following links."""
    files, dirs = [], []
    for root, dnames, fnames in os.walk(out):
        rel = os.path.relpath(root, out)
        for d in list(dnames):
            path = os.path.normpath(os.path.join(rel, d))
            if os.path.islink(os.path.join(root, d)):
                files.append(path)
                dnames.remove(d)
            else:
                dirs.append(path)
        files += [os.path.normpath(os.path.join(rel, f)) for f in fnames]
    return files, dirs


def unlisted(listed: dict[str, str], out: Path) -> list[str]:
    """Entries of OUT that its manifest (LISTED) does not list: the user's, never fabgen's to delete or
    read. A directory counts when nothing listed is inside it (fabgen makes no empty directories)."""
    files, dirs = _entries(out)
    # fabgen's own temporary tree of an in-place render (or one a killed render left) is not the user's
    files = [f for f in files if not f.split(os.sep)[0].startswith(INPLACE_PREFIX)]
    dirs = [d for d in dirs if not d.split(os.sep)[0].startswith(INPLACE_PREFIX)]
    inside = {os.path.dirname(p) for p in listed}
    parents = {d for p in inside for d in ancestors(p)}
    return sorted([f for f in files if f not in listed] + [d for d in dirs if d not in parents])


def ancestors(path: str) -> list[str]:
    out = []
    while path and path not in out:
        out.append(path)
        path = os.path.dirname(path)
    return out
