"""Hostile input, fourth round: `fabgen diff --base REF`, whose revision, tree and side files are
untrusted, and two reviews that said too little (two different clusters, a moved out-of-band
prefix). Every case runs the real command line in a process of its own on a git repository the
test makes, bounded by a timeout (never a timed assertion). A refusal is exit 2 and one line naming
the revision or the path, no traceback, and nothing written: the repository (its .git included)
and the temporary folder are as they were, and nothing is printed on stdout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_hostile import snapshot  # every entry under a folder, links not followed

from conftest import INVENTORIES, git

SMALL = INVENTORIES / "roce-2node.yaml"
TIMEOUT = 60  # the bound for every case: a hang is a failure, not a slow pass
MIB = 1024 * 1024


def fabgen(*args: object, tmp: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The command line, its temporary files in `tmp` (so a test sees whatever it leaves behind)."""
    tmp.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "fabgen", *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT, env={**os.environ, "COLUMNS": "200", "TMPDIR": str(tmp), **(env or {})})


def repo_with(tmp_path: Path, files: dict[str, str | bytes], links: dict[str, str] | None = None) -> Path:
    """A repository of one commit on `main` holding `files` and the symbolic links `links` (path -> target)."""
    repo = tmp_path / "repo"
    for rel, data in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_bytes(data.encode() if isinstance(data, str) else data)
    for rel, target in (links or {}).items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).symlink_to(target)
    repo.mkdir(exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    return repo


def refused_untouched(tmp_path: Path, repo: Path | None, args: list[object], *words: str,
                      env: dict[str, str] | None = None) -> str:
    """Run `fabgen diff ARGS`: exit 2, one line holding `words`, no traceback, nothing written."""
    before = snapshot(repo) if repo else {}
    tmp = tmp_path / "tmpdir"
    res = fabgen("diff", *args, tmp=tmp, env=env)
    assert res.returncode == 2, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fabgen: "), res.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert res.stdout == ""
    assert list(tmp.iterdir()) == [], "a temporary file was left behind"
    if repo:
        assert snapshot(repo) == before, "the repository changed"
    return lines[0]


def with_side_file(key: str, value: str) -> str:
    """roce-2node with a side file: a node group's rdma_links or (on ib-3tier) the fabric's guid_map."""
    if key == "rdma_links":
        text = SMALL.read_text()
        return text.replace('    hostname: "gpu{n:02d}"\n', f'    hostname: "gpu{{n:02d}}"\n    rdma_links: {value}\n',
                            1)
    text = (INVENTORIES / "ib-3tier.yaml").read_text()
    return text.replace("      qos: true\n", f"      qos: true\n      guid_map: {value}\n", 1)


# 1. Only what the inventory needs is read from REF.

def test_a_revision_of_100000_files_is_reviewed_within_the_bound(tmp_path: Path) -> None:
    """100,000 files beside a small inventory (written straight into git's object store by
    fast-import): --base reads the inventory and nothing else, so the review takes the time of the
    review (it unpacked the whole tree before: 25 s here, over a minute on a CI runner)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    inventory = SMALL.read_bytes()
    stream = [b"blob\nmark :1\ndata %d\n%s\n" % (len(inventory), inventory)]
    stream += [b"blob\nmark :%d\ndata %d\n%s\n" % (i + 2, len(b"%d\n" % i), b"%d\n" % i) for i in range(100_000)]
    stream.append(b"commit refs/heads/main\ncommitter t <t@t> 0 +0000\ndata 5\nbulk\nM 100644 :1 site/inventory.yaml\n")
    stream += [b"M 100644 :%d data/d%03d/f%06d.txt\n" % (i + 2, i % 1000, i) for i in range(100_000)]
    subprocess.run(["git", "fast-import", "--quiet"], input=b"".join(stream), cwd=repo, check=True, timeout=TIMEOUT,
                   capture_output=True)
    (repo / "site").mkdir()
    (repo / "site" / "inventory.yaml").write_text(SMALL.read_text().replace("count: 2", "count: 1"))
    tmp = tmp_path / "tmpdir"
    res = fabgen("diff", "--base", "main", repo / "site" / "inventory.yaml", "--no-files", tmp=tmp)
    assert res.returncode == 0, res.stderr[-2000:]
    assert re.search(r"inventory\.yaml@main .*: .*removes 1 device", res.stdout.splitlines()[0]), res.stdout[:500]
    assert list(tmp.iterdir()) == []


def test_links_the_inventory_does_not_name_are_never_read(tmp_path: Path) -> None:
    """An absolute link and one out of the repository elsewhere in the tree (a traceback before: the
    whole tree was unpacked); a side file reached through a link inside the repository is read
    from REF (the working tree's copy differs, and the review shows it)."""
    rdma = (INVENTORIES / "b300-cluster-rdma-links.txt").read_text()
    repo = repo_with(tmp_path, {"site/cluster.yaml": (INVENTORIES / "b300-cluster.yaml").read_text(),
                                "shared/rdma.txt": rdma},
                     {"docs/passwd": "/etc/passwd", "docs/up": "../../..",
                      "site/b300-cluster-rdma-links.txt": "../shared/rdma.txt"})
    (repo / "shared" / "rdma.txt").write_text(rdma.replace("netdev enp3s0f0np0", "netdev enp3s0f0np9"))
    tmp = tmp_path / "tmpdir"
    res = fabgen("diff", "--base", "main", repo / "site" / "cluster.yaml", "--no-files", "--exit-code", tmp=tmp)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert "cluster.yaml@main" in res.stdout and "gpu[001-064] (64)" in res.stdout, res.stdout[:2000]
    assert list(tmp.iterdir()) == []


# 2. The inventory and its side files stay inside the repository.

def test_an_inventory_linked_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside" / "inventory.yaml"
    outside.parent.mkdir()
    outside.write_text(SMALL.read_text())
    for name, target in (("absolute", str(outside)), ("relative", "../../../outside/inventory.yaml")):
        repo = repo_with(tmp_path / name, {"README": "x\n"}, {"site/inventory.yaml": target})
        refused_untouched(tmp_path / name, repo, ["--base", "main", repo / "site" / "inventory.yaml"],
                          "--base main: site/inventory.yaml is a symbolic link out of the repository",
                          "fabgen follows links only inside it")


@pytest.mark.parametrize("key,value,links,words", [
    ("guid_map", "../../guids.csv", {}, ["guid_map '../../guids.csv'", "leads out of the repository"]),
    ("rdma_links", "../../../etc/passwd", {}, ["rdma_links '../../../etc/passwd'", "leads out of the repository"]),
    ("rdma_links", "maps/../../../x.txt", {}, ["'..' after a folder name"]),
    ("rdma_links", "/etc/passwd", {}, ["rdma_links '/etc/passwd'", "an absolute path"]),
    ("guid_map", "guids.csv", {"site/guids.csv": "/etc/passwd"},
     ["site/inventory.yaml fabrics[0].infiniband.guid_map 'guids.csv'", "symbolic link out of the repository",
      "/etc/passwd"]),
    ("rdma_links", "links.txt", {"site/links.txt": "../../outside.txt"},
     ["rdma_links 'links.txt'", "symbolic link out of the repository (to ../outside.txt)"]),
    ("rdma_links", "links.txt", {"site/links.txt": "nowhere.txt"}, ["a symbolic link to nothing"]),
    ("rdma_links", "links.txt", {"site/links.txt": "links.txt"}, ["a loop of symbolic links"]),
    ("guid_map", "maps", {}, ["guid_map 'maps'", "is a directory at that revision"]),
    ("rdma_links", "absent.txt", {}, ["rdma_links 'absent.txt'", "did not exist at that revision"]),
])
def test_a_side_file_out_of_the_repository_is_refused(tmp_path: Path, key: str, value: str, links: dict[str, str],
                                                      words: list[str]) -> None:
    repo = repo_with(tmp_path, {"site/inventory.yaml": with_side_file(key, value), "site/maps/x.csv": "a\n",
                                "outside.txt": "x\n"}, links)
    refused_untouched(tmp_path, repo, ["--base", "main", repo / "site" / "inventory.yaml"], "--base main: ", *words)


def test_side_files_are_bounded_in_size_and_count(tmp_path: Path) -> None:
    big = repo_with(tmp_path / "big", {"site/inventory.yaml": with_side_file("guid_map", "guids.csv"),
                                       "site/guids.csv": b"device,port,guid\n" + b"0" * (33 * MIB)})
    refused_untouched(tmp_path / "big", big, ["--base", "main", big / "site" / "inventory.yaml"],
                      "guid_map 'guids.csv'", "more than the 32 MiB fabgen reads from a revision")
    groups = "".join(f"  - name: g{i}\n    model: dgx-h100\n    count: 1\n    rdma_links: r{i}.txt\n"
                     for i in range(1001))
    many = repo_with(tmp_path / "many", {"site/inventory.yaml": SMALL.read_text().replace(
        "node_groups:\n", "node_groups:\n" + groups, 1)})
    refused_untouched(tmp_path / "many", many, ["--base", "main", many / "site" / "inventory.yaml"],
                      "names 1,001 files, more than 1,000")


# 3. The revision is untrusted; every failure is one line naming it.

@pytest.mark.parametrize("ref,words", [
    ("--output={out}", ["not a git revision name", "not starting with '-'"]),
    ("-h", ["not a git revision name"]),
    ("main\n", ["not a git revision name"]),
    ("main\x1b[2J", ["not a git revision name", "\\x1b"]),
    ("main\nfabgen: wrote 0 files", ["not a git revision name", "\\n"]),
    ("main..HEAD", ["not a git revision name"]),
    ("nope", ["--base nope: no such revision in "]),
    ("main^{tree}", ["--base main^{tree}: names a tree, not a commit"]),
    ("blobtag", ["--base blobtag: names a blob, not a commit"]),
    ("first", ["--base first: site/inventory.yaml did not exist at that revision"]),
])
def test_a_revision_that_cannot_give_the_inventory_is_one_line(tmp_path: Path, ref: str, words: list[str]) -> None:
    repo = repo_with(tmp_path, {"README": "x\n"})
    git(repo, "tag", "first")
    (repo / "site").mkdir()
    (repo / "site" / "inventory.yaml").write_text(SMALL.read_text())
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "inventory")
    oid = subprocess.run(["git", "rev-parse", "HEAD:README"], cwd=repo, capture_output=True, text=True,
                         check=True).stdout.strip()
    git(repo, "tag", "blobtag", oid)
    out = tmp_path / "x"
    refused_untouched(tmp_path, repo, ["--base", ref.replace("{out}", str(out)), repo / "site" / "inventory.yaml"],
                      *words)
    assert not out.exists()


def test_no_git_or_no_repository_is_one_line(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "inventory.yaml").write_text(SMALL.read_text())
    refused_untouched(tmp_path, None, ["--base", "main", plain / "inventory.yaml"], "is not in a git work tree",
                      env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    empty = tmp_path / "no-programs"
    empty.mkdir()
    refused_untouched(tmp_path, None, ["--base", "main", plain / "inventory.yaml"], "--base needs git",
                      env={"PATH": str(empty)})


# 4. Round-three leftovers: what a review must say.

def section(out: str, heading: str) -> list[str]:
    m = re.search(rf"^{re.escape(heading)} \((\d+)\):\n((?:  .*\n)*)", out, re.M)
    assert m, f"no section {heading!r} in:\n{out[:3000]}"
    return [line[2:] for line in m.group(2).splitlines()]


def test_a_review_of_two_different_clusters_says_so_first(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(SMALL.read_text().replace("cluster: lab\n", "cluster: lab-b\n"))
    res = fabgen("diff", SMALL, other, "--no-files", tmp=tmp_path / "tmpdir")
    assert res.returncode == 0, res.stderr[-2000:]
    first, _, rest = res.stdout.partition("\n\n")
    assert first.endswith(": compares two different clusters (lab -> lab-b); changes 4 devices' files, "
                          "no link, address or ASN"), first
    assert rest.startswith("Different clusters (1):\n  cluster: lab -> lab-b\n"), rest[:500]
    md = fabgen("diff", SMALL, other, "--no-files", "--format", "markdown", tmp=tmp_path / "tmpdir")
    assert "### Different clusters (1)\n- `cluster: lab -> lab-b`" in md.stdout, md.stdout[:1000]


def test_a_forged_cluster_name_in_a_render_folder_cannot_forge_a_line(tmp_path: Path) -> None:
    tmp = tmp_path / "tmpdir"
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert fabgen("render", SMALL, "-o", out, tmp=tmp).returncode == 0
    report = (b / "report.json").read_text()
    (b / "report.json").write_text(report.replace('"cluster": "lab"', '"cluster": "lab\\nfabgen diff: no differences"'))
    res = fabgen("diff", a, b, "--no-files", tmp=tmp)
    assert res.returncode == 0, res.stderr[-2000:]
    assert "cluster: lab -> lab\\nfabgen diff: no differences" in res.stdout
    assert not any(line.startswith("fabgen diff: no differences") for line in res.stdout.splitlines())


def test_a_new_out_of_band_prefix_lists_every_bmc_it_moves(tmp_path: Path) -> None:
    """The oob fabric's management.prefix moves the 66 BMCs with the six access switches: the
    review lists them, folded into one line (the nodes' own files do not change, so only the
    address plan says so), and gives no growth advice for a fabric that did not grow."""
    text = (INVENTORIES / "superpod-cluster.yaml").read_text()
    new = tmp_path / "new.yaml"
    new.write_text(text.replace("prefix: 192.168.0.0/23\n      gateway: 192.168.0.1",
                                "prefix: 10.90.0.0/23\n      gateway: 10.90.0.1"))
    res = fabgen("diff", INVENTORIES / "superpod-cluster.yaml", new, "--no-files", tmp=tmp_path / "tmpdir")
    assert res.returncode == 0, res.stderr[-2000:]
    first = res.stdout.splitlines()[0]
    assert first.endswith(": re-addresses 6 ports and moves 66 management addresses"), first
    assert section(res.stdout, "Management addresses changed") == [
        "dgx[001-064],head[01-02] bmc: 192.168.0.2/23 -> 10.90.0.2/23 ... 192.168.0.67/23 -> 10.90.0.67/23 "
        "(66, each moved alike)"]
    assert len(section(res.stdout, "Addresses changed")) == 6  # the access switches' VLAN addresses, once


def test_a_fabric_management_prefix_lists_the_management_addresses(tmp_path: Path) -> None:
    """A fabric's management prefix moves its switches' management addresses (ansible_host): the
    review said "no link, address or ASN"."""
    text = (INVENTORIES / "b300-spectrumx-2plane.yaml").read_text()
    new = tmp_path / "new.yaml"
    new.write_text(text.replace("management: 192.168.40.0/24", "management: 10.77.0.0/24"))
    res = fabgen("diff", INVENTORIES / "b300-spectrumx-2plane.yaml", new, "--no-files", tmp=tmp_path / "tmpdir")
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.splitlines()[0].endswith(": moves 48 management addresses")
    assert section(res.stdout, "Management addresses changed") == [
        "sx-plane[1-2]-spine[01-16],sx-plane1-su01-leaf[1-8],sx-plane2-su01-leaf[1-8] management: "
        "192.168.40.1 -> 10.77.0.1 ... 192.168.40.176 -> 10.77.0.176 (48, each moved alike)"]  # plane 2: .128/25
