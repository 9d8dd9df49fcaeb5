"""Switches and rows made where they are written (targets.Deferred): each NVUE tree is made once
per render, by the piece that writes the switch, and what it writes for Ansible is that tree;
the files are the same whether the items are made as they are written or all at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import INVENTORIES
from fabgen import pipeline
from fabgen.targets import netbox, nvue
from fabgen.targets.base import Deferred, made


def test_each_nvue_tree_is_made_once_and_ansible_gets_that_tree(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABGEN_WORKERS", "1")  # every piece in this process, where the count is
    made_for: list[str] = []
    real = nvue._tree

    def counted(sw, *args, **kwargs):
        made_for.append(sw["name"])
        return real(sw, *args, **kwargs)
    monkeypatch.setattr(nvue, "_tree", counted)
    out = tmp_path / "out"
    pipeline.render_to(INVENTORIES / "b300-spectrumx-2plane.yaml", out)
    switches = sorted(p.name.removesuffix(".nvue.yaml") for p in out.glob("*/switches/*.nvue.yaml"))
    assert len(switches) > 8
    assert sorted(made_for) == switches  # once each: Ansible's file does not make it again
    for name in switches[:3] + switches[-3:]:
        (path,) = out.glob(f"*/switches/{name}.nvue.yaml")
        tree = yaml.safe_load(path.read_text())[1]["set"]
        config = json.loads((out / "ansible" / "configs" / f"{name}.json").read_text())
        assert config["fabgen_platform"] == "nvue"
        # JSON writes the traffic class's key as a string, as YAML reads it back an int
        assert json.loads(json.dumps(tree)) == config["fabgen_config"]
        host_vars = yaml.safe_load((out / "ansible" / "host_vars" / f"{name}.yml").read_text())  # JSON, read as YAML
        assert host_vars["fabgen_config_file"] == f"ansible/configs/{name}.json"


def test_a_render_piece_makes_only_its_own_switches() -> None:
    made_of: list[int] = []
    items = Deferred(lambda n: made_of.append(n) or (f"sw{n}", {}, []), list(range(10)))
    piece = items[1::4]  # what every_other gives a piece: nothing is made yet
    assert made_of == [] and len(piece) == 3
    assert [name for name, _, _ in piece] == ["sw1", "sw5", "sw9"]
    assert made_of == [1, 5, 9]


def test_files_are_the_same_made_as_written_or_all_at_once() -> None:
    """What `fabgen diff` renders (every item made first, targets.made) is what a render writes."""
    p = pipeline.prepare(INVENTORIES / "gb300-northsouth.yaml", checked=False)
    seen = 0
    for tname, data in p.structured:
        if tname not in ("nvue", "netbox"):
            continue
        render = p.targets[tname].render
        kept = made(data)
        assert kept is not data and not any(isinstance(v, Deferred) for v in kept.values())
        assert dict(render(kept)) == dict(render(data))
        seen += 1
    assert seen >= 2
    # prepare structures every target here (a render makes some apart)
    assert any(t == "netbox" for t, _ in p.structured)


def test_a_netbox_file_with_no_rows_is_left_out() -> None:
    data = {"rows": {name: [] for name in netbox.COLUMNS}, "lag": False}
    data["rows"][netbox.INTERFACES] = Deferred(lambda ctx: [], [object()])
    data["rows"]["01-manufacturers.csv"] = [["NVIDIA", "nvidia"]]
    assert [path for path, _ in netbox.render(data)] == ["netbox/01-manufacturers.csv"]
