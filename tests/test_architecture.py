"""The layering of docs/architecture.md, read from the imports: intent modules are below the
platform modules (they import nothing from fabgen.platforms), and no platform module imports
another platform module for a decision (only the package itself, for Target and Context)."""

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


def test_intent_is_below_the_platforms() -> None:
    files = sorted((PKG / "intent").glob("*.py"))
    assert files
    for f in files + [PKG / "context.py"]:
        bad = sorted(m for m in imports(f) if m.startswith("fabgen.platforms"))
        assert not bad, f"{f.name} imports {bad}"


def test_no_platform_module_imports_another() -> None:
    modules = {p.stem for p in (PKG / "platforms").glob("*.py")} - {"__init__"}
    for name in sorted(modules):
        found = imports(PKG / "platforms" / f"{name}.py")
        others = sorted(m for m in found if m.startswith("fabgen.platforms.") and m.split(".")[2] in modules
                        and m.split(".")[2] != name)
        assert not others, f"platforms/{name}.py imports {others}"


def test_the_layering_check_notices_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from fabgen.platforms.sonic import port_table\n")
    assert "fabgen.platforms.sonic" in imports(bad)
