"""The layering of docs/architecture.md, read from the imports: intent modules are below the
platform modules (they import nothing from fabgen.targets), no platform module imports
another (they read Target from fabgen.targets.base and Context from fabgen.context), no two modules
import each other, and the inventory layer reads plans and names but never the builder."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import ROOT

PKG = ROOT / "generator" / "fabgen"


def imports(path: Path) -> set[str]:
    """Every fabgen module a file imports, at any depth (deferred imports count too)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("fabgen"):
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("fabgen"))
    return out


def modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        name = ".".join(p.relative_to(PKG.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = p
    return out


def mutual(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Pairs of modules that import each other (at any depth of the file: deferred imports count)."""
    return sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] if b != a and a in graph.get(b, ())})


def test_no_two_modules_import_each_other() -> None:
    """diff and diffsides share their patterns through renderpaths; the registry and the targets
    (report and every platform module) share Target through fabgen.targets.base."""
    mods = modules()
    graph = {m: {i for i in imports(p) if i in mods} for m, p in mods.items()}
    assert not mutual(graph)


def test_the_cycle_check_notices_one() -> None:
    assert mutual({"a": {"b"}, "b": {"a", "c"}, "c": set()}) == [("a", "b")]


BUILDER = ("fabgen.topology.build", "fabgen.topology.growth", "fabgen.topology.oob", "fabgen.check.fabric",
           "fabgen.check.cluster", "fabgen.topology.analysis", "fabgen.pipeline", "fabgen.targets",
           "fabgen.intent")


def test_the_inventory_layer_reads_plans_and_names_never_the_builder() -> None:
    """Validation sizes plans (spec/sizing.py), names switches and planes (spec/layout.py)
    and lays out the out-of-band network (spec/oob_layout.py): arithmetic on the inventory.
    Building graphs, the growth check (which compares two plans' cabling) and everything after
    are later stages: inventory/ imports none of them, nor networkx."""
    for path in sorted((PKG / "inventory").glob("*.py")):
        found = imports(path)
        bad = sorted(m for m in found if any(m == b or m.startswith(b + ".") for b in BUILDER))
        assert not bad, f"inventory/{path.name} imports {bad}"
        assert "import networkx" not in path.read_text(), path.name


def test_intent_is_below_the_platforms() -> None:
    files = sorted((PKG / "intent").glob("*.py"))
    assert files
    for f in files + [PKG / "context.py"]:
        bad = sorted(m for m in imports(f) if m.startswith("fabgen.targets"))
        assert not bad, f"{f.name} imports {bad}"


def test_no_platform_module_imports_another() -> None:
    modules = {p.stem for p in (PKG / "platforms").glob("*.py")} - {"__init__"}
    for name in sorted(modules):
        found = imports(PKG / "platforms" / f"{name}.py")
        others = sorted(m for m in found if m.startswith("fabgen.targets.") and m.split(".")[2] in modules
                        and m.split(".")[2] != name)
        assert not others, f"targets/{name}.py imports {others}"


def test_the_layering_check_notices_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from fabgen.targets.sonic import port_table\n")
    assert "fabgen.targets.sonic" in imports(bad)


def test_targets_made_apart_need_nothing_from_the_others() -> None:
    """A render structures and renders the targets marked apart in a process of their own while
    the others are structured: so an apart target reads only apart targets, and no other target
    reads one (it would not have its data). Every name a target reads is a target; and a
    cluster-wide target is handed only what it names (pipeline._structure), so a name missing
    from `reads` changes an output and the goldens show it."""
    from fabgen.targets import registry

    targets = registry()
    for t in targets.values():
        assert set(t.reads) <= set(targets), f"{t.name} reads unknown targets"
        order = list(targets)
        assert all(order.index(r) < order.index(t.name) for r in t.reads), f"{t.name} reads a later target"
        if t.apart:
            assert all(targets[r].apart for r in t.reads), f"{t.name} is made apart but reads {t.reads}"
        else:
            assert not any(targets[r].apart for r in t.reads), f"{t.name} reads a target made apart"
    assert any(t.apart for t in targets.values()) and any(not t.apart for t in targets.values())


def test_a_cluster_target_sees_only_what_it_reads(monkeypatch) -> None:
    from dataclasses import replace

    from conftest import INVENTORIES
    from fabgen import pipeline
    from fabgen.targets import ansible

    seen = []
    real = ansible.structure

    def spy(contexts, structured):
        seen.extend(name for name, _ in structured)
        return real(contexts, structured)

    targets = pipeline.registry()
    monkeypatch.setattr(pipeline, "registry", lambda: {**targets, "ansible": replace(targets["ansible"], structure=spy)})
    pipeline.prepare(INVENTORIES / "superpod-cluster.yaml")
    assert seen and set(seen) <= set(ansible.TARGET.reads)
    assert "fabric" not in seen and "report" not in seen
