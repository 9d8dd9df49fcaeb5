"""The command line's allocator settings: set once before the work starts, never over a user's own."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from fabgen import allocator

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not GLIBC, reason="the tunables are glibc's")
def test_environment_adds_the_tunables_and_keeps_the_rest():
    environ = allocator.environment({"PATH": "/usr/bin", "LANG": "C"})
    assert environ == {"PATH": "/usr/bin", "LANG": "C", "GLIBC_TUNABLES": allocator.TUNABLES, "FABGEN_ALLOCATOR": "1"}
    assert "glibc.malloc.hugetlb=1" in allocator.TUNABLES.split(":")


@pytest.mark.parametrize("value", ["", "glibc.malloc.arena_max=2"])
def test_a_users_own_tunables_are_left_as_they_are(value):
    assert allocator.environment({"GLIBC_TUNABLES": value}) is None


def test_the_restarted_program_never_starts_again_even_without_the_tunables():
    assert allocator.environment({"FABGEN_ALLOCATOR": "1"}) is None


def _restarts(argv, monkeypatch, fail=False, orig=None):
    calls = []

    def execve(path, args, environ):
        calls.append((path, args, environ))
        if fail:
            raise OSError("exec format error")

    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    monkeypatch.delenv("FABGEN_ALLOCATOR", raising=False)
    monkeypatch.setattr(sys, "orig_argv", ["/usr/bin/python3", "/usr/bin/fabgen", *argv[1:]] if orig is None else orig)
    allocator.restart(argv, execve=execve)
    return calls


@pytest.mark.skipif(not GLIBC, reason="the tunables are glibc's")
def test_render_and_diff_start_again_with_the_same_command_line(monkeypatch):
    for command in ("render", "diff"):
        (path, args, environ), = _restarts(["fabgen", command, "inv.yaml"], monkeypatch)
        assert path == sys.executable and args == ["/usr/bin/python3", "/usr/bin/fabgen", command, "inv.yaml"]
        assert environ["GLIBC_TUNABLES"] == allocator.TUNABLES


@pytest.mark.parametrize("argv, orig", [
    (["-", "render", "inv.yaml"], ["python3", "-", "render", "inv.yaml"]),  # the program came from stdin
    (["wrapper", "render", "inv.yaml"], ["python3", "wrapper.py", "--site", "a"]),  # argv made by a caller
    (["fabgen", "render", "inv.yaml"], []),  # an embedded interpreter
])
def test_no_restart_where_the_command_line_would_not_run_this_command_again(monkeypatch, argv, orig):
    assert _restarts(argv, monkeypatch, orig=orig) == []


def test_small_commands_do_not_pay_for_a_second_start(monkeypatch):
    for argv in (["fabgen"], ["fabgen", "validate", "inv.yaml"], ["fabgen", "--version"], ["fabgen", "-o", "render"]):
        assert _restarts(argv, monkeypatch) == []


@pytest.mark.skipif(not GLIBC, reason="the tunables are glibc's")
def test_a_failed_start_carries_on_as_it_is(monkeypatch):
    assert len(_restarts(["fabgen", "render"], monkeypatch, fail=True)) == 1  # returned, did not raise


@pytest.mark.skipif(not GLIBC, reason="the tunables are glibc's")
def test_the_program_started_again_has_the_settings_and_starts_only_once():
    # a real exec: the program below restarts itself, prints once what it runs with, and the
    # second start sees the variable and goes on (a loop would print nothing and never end)
    code = ("import os, sys; from fabgen.allocator import restart; restart(sys.argv); "
            "print(os.getpid(), os.environ['GLIBC_TUNABLES'])")
    environ = {k: v for k, v in os.environ.items() if k not in ("GLIBC_TUNABLES", "FABGEN_ALLOCATOR")}
    proc = subprocess.run([sys.executable, "-c", code, "render"], env=environ, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    _pid, tunables = proc.stdout.split()
    assert tunables == allocator.TUNABLES
    assert proc.stdout.count("\n") == 1
