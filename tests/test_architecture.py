"""The layout of docs/architecture.md, read from the imports.

Each folder of generator/fabgen is one room, each loose module a room of its own; every import
points down: no module is part of an import cycle of any length (imports inside functions and
`fabgen/__init__.py` count; imports under `if TYPE_CHECKING:` do not, they never run), no two
rooms import each other, and the rooms form no circle. The readers of a render (emulate, verify,
rendered.read) import only the render's contract, the platform records, the file formats and
errors; validation never loads networkx; every platform a target writes for has a record in
spec/platforms.py. Each rule is shown to notice a violation.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import typing
from pathlib import Path

import networkx as nx

from conftest import INVENTORIES, ROOT

PKG = ROOT / "generator" / "fabgen"


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports(path: Path, top_level_only: bool = False) -> set[str]:
    """Every fabgen module a file imports: at any depth of the file (deferred imports count),
    or with `top_level_only` only what runs when the module is imported. `from fabgen.x import y`
    names fabgen.x and, where y is a module, fabgen.x.y."""
    out: set[str] = set()

    def visit(node: ast.AST, top: bool) -> None:
        if _type_checking(node):
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "fabgen":
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "fabgen")
        for child in ast.iter_child_nodes(node):
            deeper = isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if top_level_only and deeper:
                continue
            visit(child, top and not deeper)

    visit(ast.parse(path.read_text()), True)
    return out


def modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        name = ".".join(p.relative_to(PKG.parent).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = p
    return out


def graph(top_level_only: bool = False, parents: bool = False) -> nx.DiGraph:
    """Module -> the fabgen modules it imports. With `parents`, a module's parent packages count
    among what it imports (importing fabgen.a.b runs fabgen and fabgen.a first): what a reader
    loads. Without, the imports as written, where a cycle is a design fault (a package's
    `__init__` that imports its own modules is no cycle: Python initialises it first)."""
    mods = modules()
    g = nx.DiGraph()
    g.add_nodes_from(mods)
    for m, p in mods.items():
        above = {".".join(m.split(".")[:i]) for i in range(1, m.count(".") + 1)} if parents else set()
        for i in imports(p, top_level_only) | above:
            if i in mods and i != m:
                g.add_edge(m, i)
    return g


def room(module: str) -> str:
    """The folder a module lives in, or the module itself for a loose one."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "fabgen"


def rooms(g: nx.DiGraph) -> nx.DiGraph:
    r = nx.DiGraph()
    r.add_nodes_from(room(m) for m in g)
    r.add_edges_from((room(a), room(b)) for a, b in g.edges if room(a) != room(b) and room(b) != "fabgen")
    return r


def cycles(g: nx.DiGraph) -> list[list[str]]:
    return [sorted(c) for c in nx.strongly_connected_components(g) if len(c) > 1]


def mutual(g: nx.DiGraph) -> list[tuple[str, str]]:
    return sorted({tuple(sorted((a, b))) for a, b in g.edges if g.has_edge(b, a)})


# Rules 1 and 2 (docs/architecture.md). No import cycle of any length; no two rooms import each
# other; the rooms form no circle.

def test_no_import_cycle_of_any_length() -> None:
    assert not cycles(graph())


def test_no_two_rooms_import_each_other_and_the_rooms_are_layered() -> None:
    r = rooms(graph())
    assert not mutual(r)
    assert not cycles(r)


def test_the_cycle_checks_notice_one(tmp_path: Path) -> None:
    g = nx.DiGraph([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")])
    assert cycles(g) == [["a", "b", "c"]] and not mutual(g)
    assert mutual(nx.DiGraph([("x", "y"), ("y", "x")])) == [("x", "y")]
    assert rooms(nx.DiGraph([("fabgen.spec.model", "fabgen.targets.eos"), ("fabgen.targets.eos", "fabgen.spec.x")]))\
        .has_edge("spec", "targets")
    deferred = tmp_path / "m.py"
    deferred.write_text("import typing\nif typing.TYPE_CHECKING:\n    import fabgen.api\n"
                        "def f():\n    from fabgen.targets import sonic\n")
    assert imports(deferred) == {"fabgen.targets", "fabgen.targets.sonic"}
    assert imports(deferred, top_level_only=True) == set()


# Rule 3. The readers of a render import only the render's contract.

# emulate's lab: namespaces, daemons, the EVPN VM; verify reads a render as emulate does, never through these
LAB = ("fabgen.emulate.run", "fabgen.emulate.lab", "fabgen.emulate.checks", "fabgen.emulate.frr",
       "fabgen.emulate.sample", "fabgen.emulate.report", "fabgen.emulate.evpn", "fabgen.emulate.overlay")
CONTRACT = ("fabgen.rendered.", "fabgen.spec.platforms", "fabgen.errors", "fabgen.formats.")
READERS = {
    "fabgen.rendered.read": ("fabgen.rendered.", "fabgen.errors"),
    "fabgen.emulate": ("fabgen.emulate.", *CONTRACT),
    "fabgen.verify": ("fabgen.verify.", "fabgen.emulate.", *CONTRACT),
    # fabgen lab: emulate's reading and its sample, and output.py's atomic writer
    "fabgen.lab": ("fabgen.lab.", "fabgen.emulate.", "fabgen.output", *CONTRACT),
}
# allowed by prefix above, barred by name (the lab reuses emulate's sample, nothing else of its lab)
BARRED = {"fabgen.verify": LAB, "fabgen.lab": tuple(m for m in LAB if m != "fabgen.emulate.sample")}
ALWAYS = {"fabgen", "fabgen._version", "fabgen.emulate", "fabgen.verify", "fabgen.lab", "fabgen.rendered",
          "fabgen.spec", "fabgen.formats"}  # packages (their __init__ imports nothing that runs) and the version


def outside(g: nx.DiGraph, reader: str, allowed: tuple[str, ...]) -> list[str]:
    """What the modules of READER import, at any remove, that is not in its allowed set."""
    starts = [m for m in g if m == reader or m.startswith(reader + ".")]
    reached = set().union(*(nx.descendants(g, s) for s in starts))
    barred = BARRED.get(reader, ())
    return sorted(m for m in reached if m not in ALWAYS and (m in barred or not any(
        m == a or m.startswith(a) for a in allowed)))


def test_readers_import_only_the_render_contract() -> None:
    g = graph(parents=True)
    for reader, allowed in READERS.items():
        assert not outside(g, reader, allowed), reader


def test_the_reader_check_notices_a_reach_into_the_stages_or_the_lab() -> None:
    g = graph(parents=True)
    g.add_edge("fabgen.verify.frr", "fabgen.review.compare")
    assert "fabgen.pipeline" in outside(g, "fabgen.verify", READERS["fabgen.verify"])
    g = graph(parents=True)
    g.add_edge("fabgen.verify.state", "fabgen.emulate.run")
    assert "fabgen.emulate.lab" in outside(g, "fabgen.verify", READERS["fabgen.verify"])
    g = graph(parents=True)
    g.add_edge("fabgen.lab.run", "fabgen.emulate.checks")
    assert "fabgen.emulate.checks" in outside(g, "fabgen.lab", READERS["fabgen.lab"])
    g = graph(parents=True)
    g.add_edge("fabgen.lab.writers", "fabgen.targets.eos")
    assert "fabgen.targets.eos" in outside(g, "fabgen.lab", READERS["fabgen.lab"])


def _loaded(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running CODE (a SystemExit, as --help ends, is caught)."""
    probe = (f"import sys\ntry:\n    {code}\nexcept SystemExit:\n    pass\n"
             "import json; print(json.dumps(sorted(sys.modules)))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    return set(json.loads(run.stdout.strip().splitlines()[-1]))


def test_verify_and_emulate_load_neither_networkx_nor_the_inventory_schema() -> None:
    """Measured, not only read: the commands' help, and the readers' whole import."""
    for code in ("sys.argv = ['fabgen', 'verify', '--help']; from fabgen.cli import main; main()",
                 "sys.argv = ['fabgen', 'emulate', '--help']; from fabgen.cli import main; main()",
                 "sys.argv = ['fabgen', 'lab', '--help']; from fabgen.cli import main; main()",
                 "import fabgen.verify.run, fabgen.emulate.run, fabgen.lab.run"):
        loaded = _loaded(code)
        assert "fabgen.cli" in loaded or "fabgen.verify.run" in loaded
        assert not {"networkx", "fabgen.spec.schema", "fabgen.pipeline", "fabgen.api"} & loaded, code


# Rule 4. No networkx below the builder.

BELOW_THE_BUILDER = ("fabgen.spec", "fabgen.inventory")


def test_nothing_below_the_builder_imports_networkx_when_loaded() -> None:
    """spec/ and inventory/ import networkx nowhere at module level, at any remove (spec/model.py
    draws the graph on first use, which only the builder and the checks ask for)."""
    g = graph(top_level_only=True, parents=True)
    mods = modules()
    for m in (m for m in g if m.startswith(BELOW_THE_BUILDER)):
        for dep in {m} | nx.descendants(g, m):
            top = ast.parse(mods[dep].read_text()).body
            assert not any(isinstance(n, (ast.Import, ast.ImportFrom)) and "networkx" in ast.unparse(n) for n in top), \
                f"{m} loads networkx through {dep}"


def test_validation_never_loads_networkx() -> None:
    loaded = _loaded(f"import fabgen; fabgen.validate({str(INVENTORIES / 'superpod-4su.yaml')!r})")
    assert "fabgen.inventory.validate" in loaded and "networkx" not in loaded
    # the probe sees networkx once anything loads it (no stage draws the graph; tests and users do)
    assert "networkx" in _loaded("import fabgen.inventory.validate, networkx")


# Rule 5. The layering inside: intent below the targets, no target importing another.

def test_intent_is_below_the_targets() -> None:
    files = sorted((PKG / "intent").glob("*.py"))
    assert files
    for f in files + [PKG / "context.py", PKG / "addressing.py"]:
        bad = sorted(m for m in imports(f) if m.startswith("fabgen.targets"))
        assert not bad, f"{f.name} imports {bad}"


def test_no_target_module_imports_another() -> None:
    """Targets share only targets/base.py (Target, Deferred) and the layers below."""
    names = {p.stem for p in (PKG / "targets").glob("*.py")} - {"__init__", "base"}
    assert {"eos", "sonic", "nvue", "hosts", "report", "ansible"} <= names
    for name in sorted(names):
        found = imports(PKG / "targets" / f"{name}.py")
        others = sorted(m for m in found if m.startswith("fabgen.targets.") and m.split(".")[2] in names
                        and m.split(".")[2] != name)
        assert not others, f"targets/{name}.py imports {others}"


def test_the_layering_check_notices_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from fabgen.targets.sonic import port_table\n")
    assert "fabgen.targets.sonic" in imports(bad)


# Rule 6. Every platform a target writes for has a record.

def named_platforms(source: str) -> tuple[set[str], set[str]]:
    """(platforms, kinds) a target module's source compares `.platform` and `.kind` with."""
    platforms: set[str] = set()
    kinds: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute):
            values = {c.value for c in node.comparators if isinstance(c, ast.Constant) and isinstance(c.value, str)}
            if node.left.attr == "platform":
                platforms |= values
            elif node.left.attr == "kind":
                kinds |= values
    return platforms, kinds


def test_every_platform_a_target_writes_for_has_a_record() -> None:
    """Before spec/platforms.py a new platform missed in one of eight tables failed with a
    KeyError at render; now each target's platforms and kinds resolve to records, each routed
    platform has its target, its emulation translator and its management port."""
    from fabgen.emulate.read import TRANSLATORS
    from fabgen.spec.platforms import KINDS, PLATFORMS, platforms_of, routed
    from fabgen.spec.schema import Kind
    from fabgen.targets import registry

    for path in sorted((PKG / "targets").glob("*.py")):
        platforms, kinds = named_platforms(path.read_text())
        assert platforms <= set(PLATFORMS), path.name
        assert kinds <= set(KINDS) | {"oob", "compute", "storage", "inband", "northsouth"}, path.name
    assert all(platforms_of(k) for k in KINDS)
    assert typing.get_args(Kind) == KINDS  # the schema's kinds are the records' kinds
    targets = registry()
    for name, p in routed().items():
        assert name in targets and name in TRANSLATORS and p.config_file and p.mgmt_port and p.svi, name
        # Ansible deploys what the switch's target wrote (not read: host_vars with no files, silently)
        assert name in targets["ansible"].reads, name
        # the review knows a switch by its config's file name (a missed suffix: a switch diff never sees)
        assert _device_of(f"f/switches/sw01{p.config_file}") == "sw01", name
    for p in PLATFORMS.values():
        assert p.kinds and set(p.kinds) <= set(KINDS) and p.mgmt_port, p.name
        assert (p.default_version in p.versions) if p.versions else p.default_version is None, p.name
        if p.one_item_per_switch:
            assert p.name in targets


def _device_of(path: str) -> str | None:
    from fabgen.rendered.paths import DEVICE_FILE

    return next((m.group("d") for m in (rx.match(path) for rx in DEVICE_FILE) if m), None)


def test_the_platform_check_notices_an_unknown_one() -> None:
    from fabgen.spec.platforms import PLATFORMS

    platforms, kinds = named_platforms('T = lambda ctx: ctx.spec.kind == "roce" and ctx.spec.platform == "junos"\n')
    assert platforms == {"junos"} and kinds == {"roce"} and not platforms <= set(PLATFORMS)
    assert _device_of("f/switches/sw01.conf") is None and _device_of("f/switches/sw01.cfg") == "sw01"


# Rule 7. Targets made apart.

def test_targets_made_apart_need_nothing_from_the_others() -> None:
    """A render structures and renders the targets marked apart in a process of their own while
    the others are structured: so an apart target reads only apart targets, and no other target
    reads one (it would not have its data). Every name a target reads is a target; and a
    cluster-wide target is handed only what it names (pipeline), so a name missing from `reads`
    changes an output and the goldens show it."""
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

    from fabgen import pipeline
    from fabgen.targets import ansible

    seen = []
    real = ansible.structure

    def spy(contexts, structured):
        seen.extend(name for name, _ in structured)
        return real(contexts, structured)

    targets = pipeline.registry()
    spied = {**targets, "ansible": replace(targets["ansible"], structure=spy)}
    monkeypatch.setattr(pipeline, "registry", lambda: spied)
    pipeline.prepare(INVENTORIES / "superpod-cluster.yaml")
    assert seen and set(seen) <= set(ansible.TARGET.reads)
    assert "fabric" not in seen and "report" not in seen
