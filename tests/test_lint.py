"""ruff and mypy with the project's own configuration (pyproject.toml) are clean, and each of
them refuses a file that breaks its rules: an unused import, a function over the complexity
bound, a line over 120 columns; a type error anywhere, an unannotated function in a strict
room (spec/, intent/, rendered/) but not in the others."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

BIN = Path(sys.executable).parent
LINTED = ["generator", "tests", "benchmarks", "mutation"]


def _run(tool: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / tool), *args], capture_output=True, text=True, cwd=cwd, timeout=900)


def test_ruff_is_clean() -> None:
    run = _run("ruff", "check", "--no-cache", *LINTED)
    assert run.returncode == 0, run.stdout[-4000:]


def test_mypy_is_clean() -> None:
    run = _run("mypy")
    assert run.returncode == 0, run.stdout[-4000:]


BRANCHES = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(13))
LONG = "x = " + " + ".join(["1"] * 60) + "\n"


def test_ruff_refuses_what_the_configuration_forbids(tmp_path: Path) -> None:
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    cases = {"unused.py": ("import os\n", "F401"), "complex.py": (f"def f(x):\n{BRANCHES}\n    return -1\n", "C901"),
             "long.py": (LONG, "E501"), "fine.py": ("def f(x: int) -> int:\n    return x\n", None)}
    for name, (text, code) in cases.items():
        (tmp_path / name).write_text(text)
        run = _run("ruff", "check", "--no-cache", name, cwd=tmp_path)
        if code is None:
            assert run.returncode == 0, run.stdout
        else:
            assert run.returncode == 1 and code in run.stdout, (name, run.stdout)


def test_mypy_refuses_a_type_error_and_untyped_code_in_a_strict_room(tmp_path: Path) -> None:
    """The same configuration on a copy of its layout: an unannotated function passes in
    targets/ and fails in spec/; a wrong type fails anywhere."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    pkg = tmp_path / "generator" / "fabgen"
    for room in ("spec", "targets"):
        (pkg / room).mkdir(parents=True)
        (pkg / room / "__init__.py").write_text("")
        (pkg / room / "loose.py").write_text("def f(x):\n    return x\n")
    (pkg / "__init__.py").write_text("")
    run = _run("mypy", "--no-incremental", cwd=tmp_path)
    assert run.returncode == 1, run.stdout
    assert "spec/loose.py:1: error: Function is missing a type annotation" in run.stdout
    assert "targets/loose.py" not in run.stdout
    (pkg / "targets" / "loose.py").write_text("def f(x: int) -> str:\n    return x\n")
    run = _run("mypy", "--no-incremental", cwd=tmp_path)
    assert "targets/loose.py:2: error: Incompatible return value type" in run.stdout
