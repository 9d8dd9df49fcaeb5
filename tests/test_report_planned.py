"""report.md's 'Planned for N nodes' line (targets/report.py `_growing`): said where a fabric's plan
holds more nodes than are attached, and only there. The plan counts the nodes it is sized by, not the
storage or support servers beside them, so a fabric with servers and no plan says nothing (before,
the line compared the plan with a node count that included the servers, and every fabric with servers
said it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from fabgen.inventory.loader import load_text
from fabgen.pipeline import run

INVENTORIES = Path(__file__).resolve().parents[1] / "inventories"
TEXT = (INVENTORIES / "ib-storage.yaml").read_text()  # 48 DGX, 20 storage servers, no planned_nodes
PLANNED = re.compile(r"^Planned for (\d+) nodes", re.M)


def _report(text: str) -> tuple[list[str], dict]:
    files = run(load_text(text, "ib-storage.yaml")).files
    md = files["report.md"].decode()
    return PLANNED.findall(md), json.loads(files["report.json"])["fabrics"]["ib"]


def test_servers_beside_a_full_fabric_are_not_a_plan() -> None:
    said, fabric = _report(TEXT)
    assert fabric["nodes"] == 68 and fabric["planned"]["nodes"] == 48  # the servers counted, not planned
    assert said == []


def test_a_plan_beyond_the_nodes_is_said_with_servers_or_without() -> None:
    planned = TEXT.replace("    scalable_unit: 32\n", "    scalable_unit: 32\n    planned_nodes: 64\n")
    assert planned != TEXT
    said, fabric = _report(planned)
    assert said == ["64"] and fabric["planned"]["nodes"] == 64
    fewer = planned.replace("    count: 48\n", "    count: 40\n")
    assert _report(fewer)[0] == ["64"]
    no_servers = planned.replace("    node_groups: [gpu, store]\n    scalable_unit", "    node_groups: [gpu]\n"
                                 "    scalable_unit").replace("node_groups: [gpu, store]", "node_groups: [gpu]")
    assert _report(no_servers)[0] == ["64"]
