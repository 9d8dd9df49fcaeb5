"""`fabgen diff --base REF INVENTORY`: the inventory as it was at a git revision, side files included.

A pull request changes an inventory whose `guid_map` or `rdma_links` files sit beside it; a
review of the inventory alone (`git show REF:inventory.yaml > /tmp/base.yaml`) cannot find them,
since paths are relative to the inventory. Here the whole tree of REF is unpacked into a
temporary directory (`git archive`, read with tarfile's "data" filter: no absolute paths, no
`..`, no links out, no device files), and the inventory is read from the same relative place in
it, so its side files are REF's too. Nothing is added to the repository (no work tree, no ref),
and the directory is removed afterwards. REF is passed to git as one argument after checks
(never to a shell): an option-like or malformed revision is refused.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/@{}~^-]{0,199}$")


class BaseError(ValueError):
    """The revision or the repository cannot give the base inventory: one line, exit 2."""


def _git(args: list[str], cwd: Path, **kw) -> subprocess.CompletedProcess:
    git = shutil.which("git")
    if git is None:
        raise BaseError("--base needs git, which is not installed")
    kw.setdefault("stdout", subprocess.PIPE)
    return subprocess.run([git, *args], cwd=cwd, stderr=subprocess.PIPE, timeout=120, **kw)


@contextmanager
def inventory_at(ref: str, inventory: Path) -> Iterator[Path]:
    """The path of INVENTORY as it was at REF, in a temporary copy of REF's tree."""
    if not _REF.match(ref) or ".." in ref:
        raise BaseError(f"--base {ref!r} is not a git revision name")
    where = inventory.absolute().parent
    top = _git(["rev-parse", "--show-toplevel"], where, text=True)
    if top.returncode != 0:
        raise BaseError(f"{inventory} is not in a git repository: --base compares with a revision of its repository")
    root = Path(top.stdout.strip()).resolve()
    commit = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"], root, text=True)
    if commit.returncode != 0:
        raise BaseError(f"--base {ref}: no such revision in {root}")
    relative = inventory.absolute().resolve().relative_to(root)
    with tempfile.TemporaryDirectory(prefix="fabgen-base-") as tmp:
        tar = Path(tmp) / "tree.tar"
        with tar.open("wb") as fh:
            done = _git(["archive", "--format=tar", commit.stdout.strip()], root, stdout=fh)
        if done.returncode != 0:
            raise BaseError(f"--base {ref}: git archive failed: {done.stderr.decode(errors='replace').strip()[:200]}")
        tree = Path(tmp) / "tree"
        with tarfile.open(tar) as archive:
            archive.extractall(tree, filter="data")
        tar.unlink()
        base = tree / relative
        if not base.is_file():
            raise BaseError(f"--base {ref}: {relative.as_posix()} did not exist at that revision")
        yield base
