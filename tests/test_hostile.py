"""Hostile and mistaken input, third round: a manifest, a render folder, an address, a SKU, a price
list, a GUID map and the keys that did nothing. Every case runs the real command line in a
process of its own (bounded by a timeout, never a timed assertion) and checks what a user sees:
exit code 2, one located line, the previous OUT byte for byte and nothing outside it touched."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import INVENTORIES

SMALL = INVENTORIES / "roce-2node.yaml"
TIMEOUT = 60  # the bound for every case: a hang is a failure, not a slow pass


def fabgen(*args: object, cwd: Path | None = None, timeout: int = TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fabgen", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env={**os.environ, "COLUMNS": "200"})


def snapshot(root: Path) -> dict[str, bytes]:
    """Every entry under root, links as their target text, without following them."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            out[rel] = (b"link:" + os.readlink(path).encode()) if path.is_symlink() else \
                (path.read_bytes() if path.is_file() else b"dir")
    return out


def refused(res: subprocess.CompletedProcess, *words: str) -> None:
    assert res.returncode == 2, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    assert "Traceback" not in res.stderr, res.stderr
    for w in words:
        assert w in res.stderr, (w, res.stderr)


def rewrite_manifest(out: Path, change) -> None:
    doc = json.loads((out / "manifest.json").read_text())
    change(doc)
    (out / "manifest.json").write_text(json.dumps(doc))


def relist(out: Path, rel: str) -> None:
    """Make the manifest's entry for `rel` match the file as it is now (an attacker who edits both)."""
    data = (out / rel).read_bytes()

    def change(doc: dict) -> None:
        for e in doc["files"]:
            if e["path"] == rel:
                e.update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    rewrite_manifest(out, change)


@pytest.fixture
def rendered(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    res = fabgen("render", SMALL, "-o", out)
    assert res.returncode == 0, res.stderr
    return out


# 1. The manifest is input too.

@pytest.mark.parametrize("entry,words", [
    ({"path": "../victim.txt", "sha256": "0" * 64, "bytes": 7}, ["'../victim.txt'", "'..'"]),
    ({"path": "/tmp/victim-abs.txt", "sha256": "0" * 64, "bytes": 7}, ["absolute"]),
    ({"path": "notes.txt", "bytes": 7}, ["notes.txt", "no sha256"]),
    ({"path": "a//b", "sha256": "0" * 64, "bytes": 7}, ["a//b"]),
    ({"path": "x\nfabgen: wrote 0 files", "sha256": "0" * 64, "bytes": 7}, ["\\n"]),
])
@pytest.mark.parametrize("force", [False, True])
def test_a_forged_manifest_entry_refuses_the_render(rendered: Path, tmp_path: Path, entry: dict, words: list[str],
                                                    force: bool) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("victim\n")
    (rendered / "notes.txt").write_text("the user's notes\n")
    rewrite_manifest(rendered, lambda doc: doc["files"].append(entry))
    before, outside = snapshot(rendered), snapshot(tmp_path)
    res = fabgen("render", SMALL, "-o", rendered, *(["--force"] if force else []))
    refused(res, "manifest.json", "replaces nothing", *words)
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr  # one line, whatever the entry holds
    assert snapshot(rendered) == before and snapshot(tmp_path) == outside


def test_a_forged_manifest_is_refused_when_rendering_in_place(rendered: Path, tmp_path: Path) -> None:
    """OUT as the current directory swaps entry by entry: the entry `../victim.txt` must not reach it."""
    victim = tmp_path / "victim.txt"
    victim.write_text("victim\n")
    rewrite_manifest(rendered, lambda doc: doc["files"].append({"path": "../victim.txt", "sha256": "0" * 64,
                                                                "bytes": 7}))
    res = fabgen("render", SMALL, "-o", ".", "--force", cwd=rendered)
    refused(res, "'..'")
    assert victim.read_text() == "victim\n"


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_a_listed_path_that_is_not_a_plain_file_is_never_read_or_replaced(rendered: Path, tmp_path: Path,
                                                                         kind: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the user's secret\n")
    target = rendered / "report.md"
    target.unlink()
    if kind == "symlink":
        target.symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    before = snapshot(rendered)
    res = fabgen("render", SMALL, "-o", rendered, "--force")
    refused(res, "report.md", {"symlink": "symbolic link", "fifo": "FIFO", "directory": "did not write"}[kind])
    assert snapshot(rendered) == before and secret.read_text() == "the user's secret\n"


def test_a_manifest_that_is_a_link_is_not_followed(rendered: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_bytes((rendered / "manifest.json").read_bytes())
    (rendered / "manifest.json").unlink()
    (rendered / "manifest.json").symlink_to(elsewhere)
    res = fabgen("render", SMALL, "-o", rendered)
    refused(res, "symbolic link")


def test_a_sound_render_still_replaces_its_own_files(rendered: Path) -> None:
    """The checks refuse forgeries only: rendering again over fabgen's own OUT works, also in place."""
    assert fabgen("render", SMALL, "-o", rendered).returncode == 0
    assert fabgen("render", SMALL, "-o", ".", cwd=rendered).returncode == 0


# 2. A render folder given to fabgen diff is input too.

@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    for side in (a, b):
        assert fabgen("render", SMALL, "-o", side).returncode == 0
    return a, b


CONFIG = "roce/switches/roce-leaf01.cfg"


def test_diff_never_prints_a_file_through_a_link(two: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = two
    secret = tmp_path / "secret"
    secret.write_text("root:x:0:0:SECRET-LINE\n")
    (b / CONFIG).unlink()
    (b / CONFIG).symlink_to(secret)
    res = fabgen("diff", a, b)
    refused(res, CONFIG, "symbolic link")
    assert "SECRET-LINE" not in res.stdout + res.stderr


def test_diff_reads_a_sparse_giant_neither_listed_nor_unlisted(two: tuple[Path, Path]) -> None:
    a, b = two
    with open(b / "roce/huge.bin", "wb") as fh:
        fh.truncate(3 * 1024**3)
    res = fabgen("diff", a, b)  # not in the manifest: left out, and said
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("WARNING: ") and "roce/huge.bin" in res.stdout.splitlines()[0]
    rewrite_manifest(b, lambda doc: doc["files"].append({"path": "roce/huge.bin", "sha256": "0" * 64,
                                                         "bytes": 3 * 1024**3}))
    refused(fabgen("diff", a, b), "roce/huge.bin", "more than the")


@pytest.mark.parametrize("rel,text,words", [
    ("report.json", "[]", ["report.json", "fabrics"]),
    ("report.json", '{"fabrics": {"roce": {"switches": 3}}}', ["report.json", "switches"]),
    ("report.json", '{"fabrics": {"roce": {"nodes": {"a": "x"}}}}', ["report.json", "nodes"]),
    ("roce/cabling.csv", None, ["roce/cabling.csv", "fields"]),
    ("roce/addresses.csv", None, ["roce/addresses.csv", "fields"]),
    ("ansible/configs/roce-leaf01.json", "# fabgen\n[1, 2]\n", ["roce-leaf01.json", "JSON object"]),
])
def test_diff_names_a_file_of_the_wrong_shape(two: tuple[Path, Path], rel: str, text: str | None,
                                             words: list[str]) -> None:
    a, b = two
    path = b / rel
    path.write_text(text if text is not None else path.read_text() + "short,row\n")
    relist(b, rel)  # the digest matches: the shape check alone must catch it
    res = fabgen("diff", a, b)
    refused(res, *words)
    assert len(res.stderr.strip().splitlines()) == 1


def test_diff_refuses_a_folder_that_only_looks_like_a_render(two: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = two
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "manifest.json").write_text("{}")
    refused(fabgen("diff", a, fake), "not a fabgen manifest")


def test_diff_names_a_file_edited_after_rendering_first(two: tuple[Path, Path]) -> None:
    a, b = two
    with open(b / CONFIG, "a") as fh:
        fh.write("username evil privilege 15 role network-admin nopassword\n")
    res = fabgen("diff", a, b)
    assert res.returncode == 0, res.stderr
    first = res.stdout.splitlines()[0]
    assert first.startswith("WARNING:") and CONFIG in first and "changed since fabgen wrote" in first
    assert "+username evil" in res.stdout  # still shown in the review, after the warning
    md = fabgen("diff", a, b, "--format", "markdown")
    assert md.stdout.startswith("## fabgen diff") and "> **Warning:**" in md.stdout.split("###")[0]


def test_diff_escapes_names_and_contents_it_did_not_write(two: tuple[Path, Path]) -> None:
    a, b = two
    (b / "x\nFiles changed: 0").write_text("")
    with open(b / CONFIG, "a") as fh:
        fh.write("\x1b[2J\x1b[31mhidden\rforged line\n")
    res = fabgen("diff", a, b)
    assert res.returncode == 0
    assert "\x1b" not in res.stdout and "\r" not in res.stdout
    assert "\\x1b[2J" in res.stdout and "x\\nFiles changed: 0" in res.stdout
    assert "\nFiles changed: 0" not in res.stdout


def test_diff_output_never_replaces_an_input(two: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = two
    inv = tmp_path / "new.yaml"
    inv.write_text(SMALL.read_text())
    before = inv.read_bytes()
    refused(fabgen("diff", SMALL, inv, "--output", inv), "an input of this command")
    refused(fabgen("diff", a, b, "--output", b / "review.txt"), "inside")
    link = tmp_path / "review.txt"
    link.symlink_to(inv)
    refused(fabgen("diff", SMALL, inv, "--output", link), "symbolic link")
    assert inv.read_bytes() == before and not (b / "review.txt").exists()


# 3. Addresses are addresses.

@pytest.mark.parametrize("server", ["fe80::1%$(touch pwned)", "fe80::1%eth0\\nusername evil privilege 15",
                                    "fe80::1%eth0", "10.0.0.1 ", "١٠.0.0.1"])
@pytest.mark.parametrize("key", ["ntp", "dns", "syslog"])
def test_server_addresses_carry_no_zone_or_other_text(tmp_path: Path, server: str, key: str) -> None:
    inv = tmp_path / "inv.yaml"
    text = SMALL.read_text() + f'    management: {{prefix: 192.168.0.0/24, {key}: ["{server}"], users: ' \
                               '[{name: ops, password_hash: {env: H}}]}\n'
    inv.write_text(text)
    res = fabgen("render", inv, "-o", tmp_path / "out")
    refused(res, f"management.{key}[0]")
    assert not (tmp_path / "out").exists() and not (tmp_path / "pwned").exists()


# 4. No inventory text reaches a file a playbook templates with Jinja in it.

JINJA = "{{ lookup('pipe', 'touch pwned') }}"


def _text_fields() -> list[tuple[str, ...]]:
    """Every free-text key of the inventory (schema fields of the Text type): new ones are covered too."""
    from fabgen.spec.schema import TEXT_PATTERN, CustomNic, CustomNodeModel, CustomPort, CustomSwitchModel

    def texts(model: type) -> list[str]:
        return [name for name, info in model.model_fields.items()
                if any(getattr(m, "pattern", None) == TEXT_PATTERN for m in info.metadata)
                or any(getattr(m, "pattern", None) == TEXT_PATTERN for a in getattr(info.annotation, "__args__", ())
                       for m in getattr(a, "__metadata__", ()))]
    found = [("node_models", "box", k) for k in texts(CustomNodeModel)]
    found += [("node_models", "box", "nics", 0, k) for k in texts(CustomNic)]
    found += [("node_models", "box", "ports", 0, k) for k in texts(CustomPort)]
    found += [("switch_models", "sw", k) for k in texts(CustomSwitchModel)]
    return found


def _inventory(platform: str = "eos") -> dict:
    kind = {"eos": "roce", "nvue": "spectrum-x", "sonic": "roce"}[platform]
    sw = {"kinds": [kind], "platforms": [platform], "ports": 32, "speed": 400,
          "port_name": "swp{n}" if platform == "nvue" else "Ethernet{n}", "vendor": "v", "part": "p-1"}
    if platform == "sonic":
        sw["sonic"] = {"hwsku": "Custom-Sku_1.0", "platform": "x86_64-custom_sw-r0", "asic": "broadcom",
                       "buffer_pools": {"ingress_lossless_pool": {"size": "1000", "type": "ingress", "mode": "dynamic"},
                                        "egress_lossless_pool": {"size": "1000", "type": "egress", "mode": "static"}},
                       "buffer_profiles": {n: {"pool": "egress_lossless_pool", "size": "0", "static_th": "1000"}
                                           for n in ("ingress_lossy_profile", "egress_lossy_profile",
                                                     "egress_lossless_profile")}}
    return {
        "version": 1, "cluster": "c",
        "node_groups": [{"name": "gpu", "model": "box", "count": 2}],
        "node_models": {"box": {"gpus": 8, "nics": [{"rdma": "mlx5_0", "netdev": "eth0", "speed": 400},
                                                    {"rdma": "mlx5_1", "netdev": "eth1", "speed": 400}],
                                "ports": [{"role": "oob", "rdma": "bmc", "speed": 1}]}},
        "switch_models": {"sw": sw},
        "fabrics": [{"name": "f", "kind": kind, "platform": platform, "topology": "fat-tree", "switch_model": "sw",
                     "node_groups": ["gpu"], "tiers": 2, "ethernet": {"bgp_password": {"env": "OPS_HASH"}},
                     "management": {"prefix": "10.77.0.0/24", "gateway": "10.77.0.1",
                                    "users": [{"name": "ops", "password_hash": {"env": "OPS_HASH"}}]}}],
    }


def _set(doc: dict, path: tuple, value: object) -> None:
    for part in path[:-1]:
        doc = doc[part]
    doc[path[-1]] = value


def _write(tmp_path: Path, doc: dict) -> Path:
    import yaml

    inv = tmp_path / "inv.yaml"
    inv.write_text(yaml.safe_dump(doc, sort_keys=False))
    return inv


def test_every_free_text_field_is_found() -> None:
    fields = {p[-1] for p in _text_fields()}
    assert {"vendor", "part", "nic_model", "transceiver", "label", "cage"} <= fields


@pytest.mark.parametrize("path", _text_fields(), ids=lambda p: ".".join(map(str, p)))
def test_jinja_in_free_text_is_refused(tmp_path: Path, path: tuple) -> None:
    doc = _inventory()
    _set(doc, path, JINJA)
    res = fabgen("render", _write(tmp_path, doc), "-o", tmp_path / "out")
    refused(res, ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in path).replace(".[", "["),
            "Jinja")
    assert not (tmp_path / "out").exists() and not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("path,value", [
    (("switch_models", "sw", "port_name"), "Ethernet{n}{{{{ lookup('pipe', 'touch pwned') }}}}"),
    (("switch_models", "sw", "sonic", "hwsku"), JINJA),
    (("switch_models", "sw", "sonic", "platform"), "x86_64-{{ 7*7 }}"),
    (("switch_models", "sw", "sonic", "hwsku"), "../../etc"),
])
def test_jinja_in_names_is_refused(tmp_path: Path, path: tuple, value: str) -> None:
    doc = _inventory("sonic")
    _set(doc, path, value)
    res = fabgen("render", _write(tmp_path, doc), "-o", tmp_path / "out")
    refused(res, path[-1])


def _playbook_env(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("nv", "sonic-cfggen"):  # the step after the template fails at once: the play stops there
        (bin_dir / tool).write_text("#!/bin/sh\nexit 3\n")
        (bin_dir / tool).chmod(0o755)
    venv = Path(sys.executable).parent
    return {"PATH": f"{bin_dir}:{venv}:/usr/bin:/bin", "ANSIBLE_NOCOLOR": "1", "OPS_HASH": "$6$salt$hash",
            "HOME": str(tmp_path), "ANSIBLE_HOST_KEY_CHECKING": "False"}


def _template_step(out: Path, platform: str, device: str, tmp_path: Path) -> Path:
    """Run the real deploy playbook up to and including its template step; the file it wrote."""
    import shutil

    playbook = shutil.which("ansible-playbook", path=str(Path(sys.executable).parent))
    assert playbook, "ansible-core is a test dependency"
    env = _playbook_env(tmp_path)
    book = out / "ansible" / f"deploy-{platform}.yml"
    if platform == "eos":
        args = ["--tags", "guard,stage"]
        written = out.parent / ".fabgen-stage" / f"{device}.cfg"
    else:
        written = tmp_path / "candidate" / "file"
        written.parent.mkdir(exist_ok=True)
        args = ["-e", "ansible_connection=local", "-e", "ansible_become=false", "-e",
                f"ansible_python_interpreter={sys.executable}", "-e", f"fabgen_candidate={written}"]
    subprocess.run([playbook, "-i", "ansible/inventory.yml", str(book), "--limit", device, *args], cwd=out,
                   capture_output=True, text=True, timeout=300, env=env)
    assert written.exists(), f"the {platform} playbook did not reach its template step"
    return written


@pytest.mark.integration
@pytest.mark.parametrize("platform,config", [("eos", "f/switches/f-leaf01.cfg"),
                                             ("nvue", "f/switches/f-leaf01.nvue.yaml"),
                                             ("sonic", "f/switches/f-leaf01/config_db.json")])
def test_the_template_step_of_every_deploy_playbook_changes_only_the_secrets(tmp_path: Path, platform: str,
                                                                             config: str) -> None:
    """The text a config may carry (every printable character but braces, in every free-text field)
    comes out of Ansible's template module as it went in; and the probe: the same step runs a
    lookup planted in the rendered file, so the comparison would catch one that slipped through."""
    doc = _inventory(platform)
    odd = "x$(id)`id`;%s %% {%#>' \"<\\\\ #}"
    for path in _text_fields():
        if path[-1] not in ("label", "cage") or path[3] != "ports":
            _set(doc, path, odd.replace("{", "(").replace("}", ")"))
    out = tmp_path / "out"
    res = fabgen("render", _write(tmp_path, doc), "-o", out)
    assert res.returncode == 0, res.stderr
    rendered = (out / config).read_text()
    assert rendered.count("{{") == rendered.count("{{ lookup('ansible.builtin.env', 'OPS_HASH') }}") >= 1
    written = _template_step(out, platform, "f-leaf01", tmp_path)
    assert written.read_text() == rendered.replace("{{ lookup('ansible.builtin.env', 'OPS_HASH') }}",
                                                   "$6$salt$hash")
    assert not (tmp_path / "pwned").exists()
    # the probe: a lookup in the file does run in that step (so a slipped one would show above)
    (out / config).write_text(rendered.replace("OPS_HASH') }}", "OPS_HASH') }}{{ lookup('pipe', 'echo ran') }}", 1))
    written.unlink()
    assert "ran" in _template_step(out, platform, "f-leaf01", tmp_path).read_text()


# 5. Choices that break the design silently.

def _cluster(tmp_path: Path, extra_fabrics: list[dict], **management) -> Path:
    doc = {"version": 1, "cluster": "c",
           "node_groups": [{"name": "dgx", "model": "dgx-h100", "count": 4}],
           "fabrics": [{"name": "compute", "kind": "roce", "platform": "eos", "topology": "fat-tree",
                        "switch_model": "arista-7060x5", "node_groups": ["dgx"],
                        "management": {"prefix": "192.168.10.0/24",
                                       "users": [{"name": "ops", "password_hash": {"env": "H"}}], **management}},
                       *extra_fabrics]}
    return _write(tmp_path, doc)


OOB = {"role": "oob", "kind": "ethernet", "platform": "nvue", "switch_model": "sn2201"}


@pytest.mark.parametrize("extra,management,words", [
    ([], {"vrf": "default"}, ["management.vrf", "data plane"]),
    ([{**OOB, "name": "oob1", "node_groups": ["dgx"], "management": {"prefix": "192.168.0.0/24"}},
      {**OOB, "name": "oob2", "node_groups": [], "management": {"prefix": "192.168.1.0/24"}}], {},
     ["already managed by the out-of-band network 'oob1'"]),
    ([{**OOB, "name": "oob1", "switch_model": "access", "node_groups": ["dgx"],
       "management": {"prefix": "192.168.0.0/24"}}], {}, ["names no uplink ports"]),
])
def test_choices_that_break_the_design_are_refused(tmp_path: Path, extra: list, management: dict,
                                                   words: list[str]) -> None:
    inv = _cluster(tmp_path, extra, **management)
    if any(f.get("switch_model") == "access" for f in extra):
        import yaml

        doc = yaml.safe_load(inv.read_text())
        doc["switch_models"] = {"access": {"kinds": ["ethernet"], "platforms": ["nvue"], "ports": 48, "speed": 1,
                                           "port_name": "swp{n}"}}
        inv = _write(tmp_path, doc)
    if any(f.get("name") == "oob2" for f in extra):
        import yaml

        doc = yaml.safe_load(inv.read_text())
        doc["fabrics"][2]["node_groups"] = ["dgx"]
        doc["node_groups"].append({"name": "more", "model": "dgx-h100", "count": 2})
        doc["fabrics"][2]["node_groups"] = ["more"]
        inv = _write(tmp_path, doc)
    refused(fabgen("render", inv, "-o", tmp_path / "out"), *words)
    assert not (tmp_path / "out").exists()


# 6. Bounded work for every input.

def test_a_price_list_of_millions_of_numbers_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: USD\nprices: [" + ",".join(["0"] * 2_000_000) + "]\n")
    res = fabgen("compare", INVENTORIES / "compare-8node.yaml", "--prices", prices)
    refused(res, "prices.yaml:1:1", "larger than 1 MiB", "price list")


def test_an_inventory_of_millions_of_values_is_refused_before_it_is_composed(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text("version: 1\ncluster: [" + ",".join(["0"] * 3_000_000) + "]\n")
    refused(fabgen("validate", inv), "more than 200000 values")


def _ib_inventory(tmp_path: Path, rows: list[str], nodes: int = 4) -> Path:
    (tmp_path / "map.csv").write_text("\n".join(rows) + "\n")
    doc = {"version": 1, "cluster": "c", "node_groups": [{"name": "gpu", "model": "dgx-h100", "count": nodes}],
           "fabrics": [{"name": "ib", "kind": "infiniband", "platform": "ufm", "topology": "rail-optimized",
                        "switch_model": "qm9700", "node_groups": ["gpu"], "infiniband": {"guid_map": "map.csv"}}]}
    return _write(tmp_path, doc)


def test_a_guid_map_of_250000_unknown_rows_is_answered_and_its_messages_bounded(tmp_path: Path) -> None:
    rows = [f"stranger{k:06d},mlx5_0,0x{k + 1:016x}" for k in range(250_000)]
    res = fabgen("validate", _ib_inventory(tmp_path, rows, nodes=2048))
    refused(res, "map.csv:1:1: stranger000000 port mlx5_0 is not in this fabric", "more than 100 problems")
    assert len(res.stderr.splitlines()) < 110


def test_a_guid_map_of_every_port_of_a_large_fabric_is_read(tmp_path: Path) -> None:
    """Every row known: 16,384 adapter rows (and switches) read and applied, not re-sorted per row."""
    nodes = 2048
    rows = [f"gpu{n:03d},mlx5_{r},0x0002c9{n * 16 + r:010x}" for n in range(1, nodes + 1)
            for r in (0, 3, 4, 5, 6, 9, 10, 11)]
    res = fabgen("validate", _ib_inventory(tmp_path, rows, nodes=nodes))
    assert res.returncode == 0, res.stderr[-2000:]


def test_planned_nodes_with_a_zero_too_many_is_refused_before_the_build(tmp_path: Path) -> None:
    text = (INVENTORIES / "b300-spectrumx-2plane.yaml").read_text()
    text = text.replace("planes: 2 ", "planes: 4 ").replace("planned_nodes: 256 ", "planned_nodes: 25600 ")
    inv = tmp_path / "inv.yaml"
    inv.write_text(text)
    refused(fabgen("render", inv, "-o", tmp_path / "out"), "planned_nodes", "819,200", "524,288")


# 7. Numbers that are not what they seem.

@pytest.mark.parametrize("body,words", [
    ("currency: USD\nprices: [{part: MSN5600, price: true}]", ["prices[0].price", "true (a boolean)"]),
    ('currency: USD\nprices: [{part: MSN5600, price: "5"}]', ["prices[0].price", "without quotes"]),
    ("currency: USD\nprices: [{part: MSN5600, price: .inf}]", ["prices[0].price", "finite"]),
    ("currency: USD\nprices: [{part: MSN5600, price: 1e9}]", ["prices[0].price", "YAML 1.1"]),
    ('currency: USD\nnote: "\\e[31mred\\e[0m"', ["note", "control"]),
    ('currency: USD\nprices: [{part: MSN5600, price: 1, source: "a\\u202eb"}]', ["source", "control"]),
])
def test_price_lists_have_the_inventory_s_strictness(tmp_path: Path, body: str, words: list[str]) -> None:
    prices = tmp_path / "p.yaml"
    prices.write_text(body + "\n")
    res = fabgen("compare", INVENTORIES / "compare-8node.yaml", "--prices", prices)
    refused(res, "p.yaml:", "in the price list", *words)
    assert "\x1b" not in res.stderr


@pytest.mark.parametrize("value", ["1e-200", "5e-324", "nan", "0", "1.5"])
def test_efficiencies_outside_their_range_are_refused(value: str) -> None:
    res = fabgen("compare", INVENTORIES / "compare-8node.yaml", "--efficiency", f"roce={value}", "--format", "json")
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr


def test_compare_json_is_finite_json_at_the_edges_of_its_options() -> None:
    res = fabgen("compare", INVENTORIES / "compare-8node.yaml", "--efficiency", "roce=0.01", "--efficiency",
                 "link=0.01", "--allreduce", "0.000001B", "--format", "json")
    assert res.returncode == 0, res.stderr
    json.loads(res.stdout, parse_constant=lambda c: pytest.fail(f"{c} is not JSON"))


# 8. Messages that mislead.

@pytest.mark.parametrize("body,words", [
    ("", ["p.yaml:1:1", "the price list is empty", "currency: USD"]),
    ("currency: usd", ["ISO 4217", "three capital letters"]),
])
def test_price_list_messages_speak_of_the_price_list(tmp_path: Path, body: str, words: list[str]) -> None:
    prices = tmp_path / "p.yaml"
    prices.write_text(body)
    res = fabgen("compare", INVENTORIES / "compare-8node.yaml", "--prices", prices)
    refused(res, *words)
    assert "inventory" not in res.stderr


def test_a_missing_price_list_is_named_as_one(tmp_path: Path) -> None:
    res = fabgen("compare", INVENTORIES / "compare-8node.yaml", "--prices", tmp_path / "none.yaml")
    refused(res, "cannot read the price list")
    assert "inventory" not in res.stderr


def test_nccl_versions_as_nccl_writes_them(tmp_path: Path) -> None:
    text = SMALL.read_text()
    for version, ok in (('"2.28.3-1"', True), ('"2.28.3"', True), ("2.30", False), ('"2.28.x"', False)):
        inv = tmp_path / "inv.yaml"
        inv.write_text(text.replace("    count: 2\n", f"    count: 2\n    nccl_version: {version}\n", 1))
        res = fabgen("validate", inv)
        if ok:
            assert res.returncode == 0, res.stderr
        elif version == "2.30":
            refused(res, 'quote it: "2.30"', "YAML reads it as 2.3")
        else:
            refused(res, "not an NCCL version", "2.x.y")


def test_a_quoted_number_is_told_to_lose_its_quotes(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(SMALL.read_text().replace("topology: fat-tree", 'topology: fat-tree\n    tiers: "3"'))
    res = fabgen("validate", inv)
    refused(res, "write the number 3 without quotes")
    assert "did you mean" not in res.stderr


def test_guid_map_hints_and_line_numbers(tmp_path: Path) -> None:
    rows = ["device,port,guid", "# a comment\u2028with a line separator", "su01-leaf1,0,0xb8cef6030012a100",
            "gpu001,mlx5_7,0xb8cef6030012a101"]
    res = fabgen("validate", _ib_inventory(tmp_path, rows))
    refused(res, "map.csv:3:1: su01-leaf1 port 0 is not in this fabric", "did you mean ib-su01-leaf1?",
            "map.csv:4:1: gpu001 port mlx5_7")


# 9. Keys that did nothing.

def _with(tmp_path: Path, fabric: dict | None = None, management: dict | None = None, base: Path = SMALL,
          group: dict | None = None) -> Path:
    import yaml

    doc = yaml.safe_load(base.read_text())
    doc["fabrics"][0].update(fabric or {})
    if management is not None:
        doc["fabrics"][0]["management"] = {"prefix": "192.168.50.0/24", **management}
    doc["node_groups"][0].update(group or {})
    return _write(tmp_path, doc)


USER = {"name": "ops", "password_hash": {"env": "H"}}


@pytest.mark.parametrize("fabric,management,base,words", [
    ({"manages": ["roce"]}, None, SMALL, ["fabrics[0].manages", "role oob"]),
    ({"oob_vlan": 20}, None, SMALL, ["fabrics[0].oob_vlan", "role oob"]),
    ({}, {"users": [USER]}, INVENTORIES / "ib-3tier.yaml", ["management.users", "InfiniBand"]),
    ({}, {"ntp": ["10.0.0.1"]}, INVENTORIES / "ib-3tier.yaml", ["management.ntp", "InfiniBand"]),
    ({}, {"users": [{**USER, "ssh_key": {"env": "K"}}]}, INVENTORIES / "spectrumx-1su.yaml",
     ["users[0].ssh_key", "NVUE"]),
    ({}, {"users": [{**USER, "ssh_key": {"env": "H"}}]}, SMALL, ["users[0].ssh_key", "one variable"]),
    ({}, {"users": [{**USER, "role": "read-only"}]}, SMALL, ["management.users", "none is admin"]),
    ({"planned_nodes": 150}, None, INVENTORIES / "gb300-nvl72.yaml", ["planned_nodes", "NVLink racks of 18"]),
])
def test_keys_that_would_do_nothing_are_refused(tmp_path: Path, fabric: dict, management: dict | None, base: Path,
                                                words: list[str]) -> None:
    refused(fabgen("render", _with(tmp_path, fabric, management, base), "-o", tmp_path / "out"), *words)
    assert not (tmp_path / "out").exists()


# A second round of cases, found by trying the above's neighbours.

def test_a_deeply_nested_manifest_or_report_is_one_line(rendered: Path, tmp_path: Path) -> None:
    (rendered / "manifest.json").write_text('{"generator": "fabgen", "files": ' + "[" * 200_000 + "]" * 200_000 + "}")
    refused(fabgen("render", SMALL, "-o", rendered), "manifest.json", "not JSON")
    a, b = tmp_path / "a", tmp_path / "b"
    for side in (a, b):
        assert fabgen("render", SMALL, "-o", side).returncode == 0
    (b / "report.json").write_text("[" * 100_000 + "]" * 100_000)
    relist(b, "report.json")
    refused(fabgen("diff", a, b), "report.json")


def test_diff_never_reads_through_a_linked_directory_or_a_hard_link(two: tuple[Path, Path], tmp_path: Path) -> None:
    import shutil

    a, b = two
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(b / "roce", elsewhere)
    with open(elsewhere / "switches" / "roce-leaf01.cfg", "a") as fh:
        fh.write("SECRET-LINE\n")
    shutil.rmtree(b / "roce")
    (b / "roce").symlink_to(elsewhere)
    res = fabgen("diff", a, b)
    refused(res, "symbolic link or not a directory")
    assert "SECRET-LINE" not in res.stdout + res.stderr
    (b / "roce").unlink()
    shutil.copytree(elsewhere, b / "roce")
    secret = tmp_path / "secret"
    secret.write_text("root:x:0:0:SECRET-LINE\n")
    (b / CONFIG).unlink()
    os.link(secret, b / CONFIG)
    relist(b, CONFIG)
    res = fabgen("diff", a, b)
    refused(res, "hard links")
    assert "SECRET-LINE" not in res.stdout + res.stderr


def test_diff_holds_a_bounded_amount_of_a_render_folder(two: tuple[Path, Path]) -> None:
    a, b = two
    for k in range(3):
        with open(b / "roce" / f"big{k}.cfg", "wb") as fh:
            fh.truncate(1000 * 1024**2)

    def listed(doc: dict) -> None:
        doc["files"] += [{"path": f"roce/big{k}.cfg", "sha256": "0" * 64, "bytes": 1000 * 1024**2} for k in range(3)]
    rewrite_manifest(b, listed)
    refused(fabgen("diff", a, b), "more than the", "review the inventories instead")


@pytest.mark.parametrize("prefix", ["'192.168.0.0/24 '", "192.168.0.0/+24", "'192.168.0.0/٢٤'",
                                    "192.168.0.0/255.255.255.0", '"192.168.0.0/24\\n"'])
def test_prefixes_are_written_as_configs_write_them(tmp_path: Path, prefix: str) -> None:
    for where in ("management", "pools"):
        inv = tmp_path / f"{where}.yaml"
        line = f"    management: {prefix}\n" if where == "management" else \
            f"    ethernet: {{pools: {{hosts: {prefix}}}}}\n"
        inv.write_text(SMALL.read_text() + line)
        refused(fabgen("validate", inv), "not an IPv4 prefix written as a.b.c.d/length")


@pytest.mark.parametrize("server", ["0.0.0.0", "224.0.0.1", "127.0.0.1", "fe80::1", "255.255.255.255"])
def test_server_addresses_where_no_server_answers(tmp_path: Path, server: str) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(SMALL.read_text() + f'    management: {{prefix: 192.168.0.0/24, ntp: ["{server}"], users: '
                                       '[{name: ops, password_hash: {env: H}}]}\n')
    refused(fabgen("validate", inv), "management.ntp[0]", "no server answers")


def test_guid_map_rows_and_paths_that_break_readers(tmp_path: Path) -> None:
    inv = _ib_inventory(tmp_path, ['a,b,"' + "x" * 1_000_000])
    refused(fabgen("validate", inv), "map.csv:1:1", "characters")
    inv = _ib_inventory(tmp_path, ["gpu001,mlx5_0,0x1"])
    inv.write_text(inv.read_text().replace("guid_map: map.csv", "guid_map: " + "x" * 1000))
    refused(fabgen("validate", inv), "guid_map")
    inv.write_text(inv.read_text().replace("x" * 1000, "x" * 5000))
    refused(fabgen("validate", inv), "guid_map", "at most 1024")


def test_compare_chart_never_replaces_an_input_or_follows_a_link(tmp_path: Path) -> None:
    inv = tmp_path / "inv.svg"
    inv.write_text((INVENTORIES / "compare-8node.yaml").read_text())
    before = inv.read_bytes()
    refused(fabgen("compare", inv, "--chart", inv), "an input of this command")
    victim = tmp_path / "victim.txt"
    victim.write_text("victim\n")
    (tmp_path / "c.svg").symlink_to(victim)
    refused(fabgen("compare", INVENTORIES / "compare-8node.yaml", "--chart", tmp_path / "c.svg"), "symbolic link")
    assert inv.read_bytes() == before and victim.read_text() == "victim\n"


@pytest.mark.parametrize("body,words", [
    ("currency: !!python/name:os.system USD", ["a price list is plain YAML"]),
    ("currency: USD\nprices: [{part: x, price: 1_000}]", ["YAML 1.1 reads 1_000"]),
    ("currency: USD\nprices: [{part: x, price: 0b101}]", ["YAML 1.1 reads 0b101"]),
])
def test_more_price_list_words(tmp_path: Path, body: str, words: list[str]) -> None:
    prices = tmp_path / "p.yaml"
    prices.write_text(body + "\n")
    res = fabgen("compare", INVENTORIES / "compare-8node.yaml", "--prices", prices)
    refused(res, *words)
    assert "inventory" not in res.stderr


def test_a_price_list_of_duplicates_is_told_briefly(tmp_path: Path) -> None:
    prices = tmp_path / "p.yaml"
    prices.write_text("currency: USD\nprices:\n" + "".join("  - {part: x, price: 1}\n" for _ in range(9000)))
    res = fabgen("compare", INVENTORIES / "compare-8node.yaml", "--prices", prices)
    refused(res, "priced twice")
    assert len(res.stderr.splitlines()) <= 101


def test_an_efficiency_in_other_digits_is_refused() -> None:
    res = fabgen("compare", INVENTORIES / "compare-8node.yaml", "--efficiency", "roce=١")
    assert res.returncode == 2 and "Traceback" not in res.stderr


def test_a_forged_manifest_cannot_make_render_delete_its_own_inventory(rendered: Path) -> None:
    inv = rendered / "inv.yaml"
    inv.write_text(SMALL.read_text())
    data = inv.read_bytes()
    rewrite_manifest(rendered, lambda doc: doc["files"].append(
        {"path": "inv.yaml", "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}))
    refused(fabgen("render", inv, "-o", rendered), "inside", "render into another directory")
    assert inv.read_bytes() == data


@pytest.mark.parametrize("fabric,base,words", [
    ({"ethernet": {"asn": {"host": 4200200000}}}, SMALL, ["asn.host", "host_routing: bgp"]),
    ({"ethernet": {"qos": {"mode": "lossy", "pfc_watchdog": {"detection_ms": 300}}}},
     INVENTORIES / "spectrumx-1su.yaml", ["pfc_watchdog", "lossy mode runs no PFC"]),
])
def test_more_keys_that_would_do_nothing(tmp_path: Path, fabric: dict, base: Path, words: list[str]) -> None:
    refused(fabgen("validate", _with(tmp_path, fabric, base=base)), *words)


def test_a_node_group_on_no_fabric_is_warned_about(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(SMALL.read_text().replace("node_groups:\n", "node_groups:\n  - {name: idle, model: dgx-h100, "
                                                                "count: 1}\n", 1))
    res = fabgen("validate", inv)
    assert res.returncode == 0 and "node group 'idle' is on no fabric" in res.stderr, res.stderr
