"""`fabgen diff --base REF INVENTORY`: the inventory as it was at a git revision, side files included.

A pull request changes an inventory whose `guid_map` or `rdma_links` files sit beside it; a
review of the inventory alone (`git show REF:inventory.yaml > /tmp/base.yaml`) cannot find them,
since paths are relative to the inventory. Here only what the review reads is taken from REF:
the inventory at the same place in REF's tree, then the side files its REF version names
(SIDE_FILES), each written at its place in a temporary directory, so the render of the old side
reads REF's copies. Unpacking REF's whole tree, as this did first, took 25 s for 100,000 files on
an idle machine (minutes on a busy one) and failed on any absolute symbolic link in it, though
the review reads two or three of its files.

Everything from REF is untrusted and read through `git cat-file` alone (no checkout, no archive):
a side file's path must stay inside the repository once `..` is taken out (never absolute); a
symbolic link at REF is followed by git only while it stays in REF's tree (one pointing out is
refused, as are dangling links, loops, directories and submodules); the count and the size of the
files are bounded (MAX_FILES, MAX_FILE_BYTES, MAX_TOTAL_BYTES). REF is checked before git sees
it and passed as one argument after `--end-of-options` (never to a shell), so it cannot be read
as an option. Nothing is added to the repository (no work tree, no ref, no index), and the
directory is removed afterwards. Every failure is a BaseError: one line naming REF and the path.
"""

from __future__ import annotations

import posixpath
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/@{}~^-]{0,199}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # git's batch protocol is one path per line

MAX_FILES = 1_000  # the inventory and its side files: one guid_map per InfiniBand fabric, one rdma_links per node group
MAX_FILE_BYTES = 32 * 1024**2  # above each reader's own limit (inventory 8 MiB, GUID map 16 MiB): it says which
MAX_TOTAL_BYTES = 256 * 1024**2
GIT_TIMEOUT = 120  # seconds for one git command: reading a few blobs takes milliseconds

# Where an inventory names a file relative to itself: (list key, nested mapping keys..., file key);
# a top-level mapping (provisioning) is read as a list of one
SIDE_FILES = (("node_groups", "rdma_links"), ("fabrics", "infiniband", "guid_map"), ("provisioning", "mac_map"))

_LINK_ANSWERS = {  # git cat-file --follow-symlinks: why REF's path gives no file
    "symlink": "is a symbolic link out of the repository (to {}); fabgen follows links only inside it",
    "dangling": "is a symbolic link to nothing at that revision",
    "loop": "is a loop of symbolic links at that revision",
    "notdir": "goes through a file as if it were a directory at that revision",
}


class BaseError(ValueError):
    """The revision or the repository cannot give the base inventory: one line, exit 2."""


@contextmanager
def inventory_at(ref: str, inventory: Path) -> Iterator[Path]:
    """The path of INVENTORY as it was at REF, its side files beside it, in a temporary directory."""
    _check_ref(ref)
    git = _git_program()
    root = _toplevel(git, inventory)
    relative = _in_repository(inventory, root)
    commit = _commit(git, root, ref)
    budget = _Budget()
    inv = _blobs(git, root, commit, ref, {relative: relative}, budget)[relative]
    sides = _side_files(inv, relative, ref)
    files = {relative: inv, **_blobs(git, root, commit, ref, sides, budget)}
    with tempfile.TemporaryDirectory(prefix="fabgen-base-") as tmp:
        tree = Path(tmp)
        for rel, data in files.items():
            _write(tree, rel, data, ref)
        yield tree / relative


def _check_ref(ref: str) -> None:
    """A revision name git cannot mistake for an option, a range or a path (`REF:path`)."""
    if not _REF.fullmatch(ref) or ".." in ref:
        raise BaseError(f"--base {ref!r} is not a git revision name (a branch, tag or commit, not starting with '-')")


def _git_program() -> str:
    git = shutil.which("git")
    if git is None:
        raise BaseError("--base needs git, which is not installed (or not on PATH)")
    return git


def _git(git: str, args: list[str], cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """git with its output as bytes; a hang or a git that cannot start is a BaseError."""
    try:
        return subprocess.run([git, *args], cwd=cwd, input=stdin, capture_output=True, timeout=GIT_TIMEOUT,
                              stdin=None if stdin is not None else subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise BaseError(f"--base: git {args[0]} took more than {GIT_TIMEOUT} s in {cwd}") from None
    except OSError as exc:
        raise BaseError(f"--base: cannot run git ({exc.strerror or exc})") from None


def _first_line(res: subprocess.CompletedProcess) -> str:
    lines = res.stderr.decode(errors="replace").strip().splitlines()
    return lines[0][:200] if lines else f"exit {res.returncode}"


def _toplevel(git: str, inventory: Path) -> Path:
    """The work tree holding INVENTORY's folder."""
    where = inventory.absolute().parent
    top = _git(git, ["rev-parse", "--show-toplevel"], where)
    text = top.stdout.decode(errors="replace").strip()
    if top.returncode != 0 or not text:
        raise BaseError(f"{inventory} is not in a git work tree: --base compares with a revision of its repository")
    return Path(text).resolve()


def _in_repository(inventory: Path, root: Path) -> str:
    """INVENTORY's place in the repository: its folder resolved, its own name as given (a link in
    the work tree is looked up at REF as the link, as git stores it)."""
    folder = inventory.absolute().parent.resolve()
    try:
        rel = (folder.relative_to(root) / inventory.name).as_posix()
    except ValueError:
        raise BaseError(f"{inventory} is outside the git repository {root}") from None
    if _CONTROL.search(rel):
        raise BaseError(f"{inventory}: a path with control characters cannot be read from git")
    return rel


def _commit(git: str, root: Path, ref: str) -> str:
    """REF's commit; an unknown REF, or one naming a tree or a blob, is refused by name."""
    named = _git(git, ["rev-parse", "--verify", "--quiet", "--end-of-options", ref], root)
    if named.returncode != 0:
        raise BaseError(f"--base {ref}: no such revision in {root}")
    commit = _git(git, ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], root)
    if commit.returncode != 0:
        kind = _git(git, ["cat-file", "-t", named.stdout.decode().strip()], root).stdout.decode().strip()
        raise BaseError(f"--base {ref}: names a {kind or 'object'}, not a commit")
    return commit.stdout.decode().strip()


class _Budget:
    """Files and bytes still allowed from REF, shared by the inventory and its side files."""

    def __init__(self) -> None:
        self.files, self.bytes = MAX_FILES, MAX_TOTAL_BYTES

    def take(self, size: int, ref: str, what: str) -> None:
        if size > MAX_FILE_BYTES:
            raise BaseError(f"--base {ref}: {what}: {size:,} bytes, more than the {MAX_FILE_BYTES // 1024**2} MiB "
                            "fabgen reads from a revision")
        if self.files < 1 or self.bytes < size:
            raise BaseError(f"--base {ref}: {what}: more than {MAX_FILES:,} files or "
                            f"{MAX_TOTAL_BYTES // 1024**2} MiB from the revision")
        self.files, self.bytes = self.files - 1, self.bytes - size


def _blobs(git: str, root: Path, commit: str, ref: str, paths: dict[str, str], budget: _Budget) -> dict[str, bytes]:
    """The contents of PATHS (repository path -> how messages name it) at COMMIT: each checked
    (a file inside the tree, links followed by git only within it, within the budget) before any
    is read."""
    if not paths:
        return {}
    if len(paths) > MAX_FILES:
        raise BaseError(f"--base {ref}: the inventory names {len(paths):,} files, more than {MAX_FILES:,}")
    order = list(paths)
    ask = "".join(f"{commit}:{p}\n" for p in order).encode()
    check = _git(git, ["cat-file", "--batch-check", "--follow-symlinks"], root, ask)
    if check.returncode != 0:
        raise BaseError(f"--base {ref}: git cat-file failed: {_first_line(check)}")
    oids = []
    for path, (kind, detail) in zip(order, _answers(check.stdout)):
        what = paths[path]
        if kind in _LINK_ANSWERS:
            raise BaseError(f"--base {ref}: {what} {_LINK_ANSWERS[kind].format(detail)}")
        if kind == "missing":
            raise BaseError(f"--base {ref}: {what} did not exist at that revision")
        if kind != "blob":
            shown = {"tree": "a directory", "commit": "a submodule"}.get(kind, f"a {kind}")
            raise BaseError(f"--base {ref}: {what} is {shown} at that revision, not a file")
        oid, size = detail.split()
        budget.take(int(size), ref, what)
        oids.append(oid)
    got = _git(git, ["cat-file", "--batch"], root, "".join(f"{o}\n" for o in oids).encode())
    if got.returncode != 0:
        raise BaseError(f"--base {ref}: git cat-file failed: {_first_line(got)}")
    return dict(zip(order, _contents(got.stdout, len(oids), ref)))


def _answers(out: bytes) -> Iterator[tuple[str, str]]:
    """(kind, detail) per line asked of `cat-file --batch-check --follow-symlinks`: ('blob', 'oid size'),
    ('missing', ''), or a link answer with the text git gives after it (a link's target)."""
    at = 0
    while at < len(out):
        end = out.index(b"\n", at)
        head = out[at:end].decode(errors="replace")
        at = end + 1
        words = head.split(" ")
        if len(words) == 2 and words[0] in _LINK_ANSWERS and words[1].isdigit():
            size = int(words[1])
            yield words[0], out[at:at + size].decode(errors="replace")
            at += size + 1
        elif head.endswith((" missing", " ambiguous")):
            yield "missing", ""
        elif len(words) == 3:
            yield words[1], f"{words[0]} {words[2]}"
        else:
            yield "unreadable", ""


def _contents(out: bytes, count: int, ref: str) -> Iterator[bytes]:
    """The blobs of `cat-file --batch` (`<oid> blob <size>`, the bytes, a line break), in order."""
    at = 0
    for _ in range(count):
        end = out.find(b"\n", at)
        words = out[at:end].split() if end >= 0 else []
        if len(words) != 3 or words[1] != b"blob" or not words[2].isdigit():
            raise BaseError(f"--base {ref}: git cat-file gave an answer fabgen does not read")
        size = int(words[2])
        yield out[end + 1:end + 1 + size]
        at = end + 1 + size + 1


def _side_files(inventory: bytes, relative: str, ref: str) -> dict[str, str]:
    """The files REF's inventory names (SIDE_FILES), as repository paths -> how messages name them.
    An inventory that does not parse names none: its render reports why."""
    from fabgen.errors import InventoryError
    from fabgen.inventory.loader import load_text

    try:
        data: Any = load_text(inventory.decode("utf-8"), f"{relative}@{ref}").data
    except (UnicodeDecodeError, InventoryError, RecursionError):
        return {}
    folder = posixpath.dirname(relative)
    out: dict[str, str] = {}
    for key, value in _named(data):
        what = f"{relative} {key} {value!r}"
        out.setdefault(_inside(folder, value, ref, what), f"{what} ({relative}'s side file)")
    return out


def _named(data: Any) -> Iterator[tuple[str, str]]:
    """(where, value) for every SIDE_FILES key the inventory sets to a string."""
    if not isinstance(data, dict):
        return
    for top, *inner, key in SIDE_FILES:
        items = data.get(top)
        single = isinstance(items, dict)
        for i, item in enumerate([items] if single else items if isinstance(items, list) else ()):
            for k in inner:
                item = item.get(k) if isinstance(item, dict) else None
            value = item.get(key) if isinstance(item, dict) else None
            if isinstance(value, str):
                yield f"{top}{'' if single else f'[{i}]'}.{'.'.join([*inner, key])}", value


def _inside(folder: str, value: str, ref: str, what: str) -> str:
    """VALUE, relative to the inventory's FOLDER, as a path inside the repository: never absolute,
    never out of it through `..`, and `..` only before the first name (`../shared/guids.csv`), so
    that the place the render opens is the place read from REF."""
    if not value or _CONTROL.search(value):
        raise BaseError(f"--base {ref}: {what}: not a file name")
    if value.startswith(("/", "~")) or posixpath.isabs(value):
        raise BaseError(f"--base {ref}: {what}: an absolute path; --base reads only files of the repository, "
                        "named relative to the inventory")
    parts = [p for p in value.split("/") if p not in ("", ".")]
    ups = next((i for i, p in enumerate(parts) if p != ".."), len(parts))
    if ups == len(parts):
        raise BaseError(f"--base {ref}: {what}: names a folder, not a file")
    if ".." in parts[ups:]:
        raise BaseError(f"--base {ref}: {what}: '..' after a folder name; write the path without it")
    joined = posixpath.normpath(posixpath.join(folder, *parts)) if folder else posixpath.normpath("/".join(parts))
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        raise BaseError(f"--base {ref}: {what}: leads out of the repository")
    return joined


def _write(tree: Path, rel: str, data: bytes, ref: str) -> None:
    """One file of REF at its place under TREE (a new file: nothing is replaced or followed)."""
    target = tree / rel
    if not target.resolve().is_relative_to(tree.resolve()):  # _inside made sure; kept as a guard
        raise BaseError(f"--base {ref}: {rel} leads out of the repository")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("xb") as fh:
            fh.write(data)
    except OSError as exc:
        raise BaseError(f"--base {ref}: {rel}: cannot be written beside the inventory "
                        f"({exc.strerror or exc})") from None
