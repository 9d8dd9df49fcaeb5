"""The emulation lab's cleanup finishes when a second Ctrl-C or SIGTERM arrives while it runs.

Found by hand: an emulation stopped by SIGTERM and then by Ctrl-C during its cleanup left its 83
network namespaces behind. `Lab.close` now holds further signals back until every namespace is
deleted and every daemon stopped (each step is bounded), then restores the handlers from before
the run."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest

from fabgen.emulate import lab as lab_module
from fabgen.emulate.lab import Lab

needs_root = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("ip") is None,
                                reason="network namespaces need root and iproute2")


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, timeout=30, check=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.strip()}


@needs_root
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_cleanup_does_not_stop_it(sig: int, monkeypatch: pytest.MonkeyPatch) -> None:
    before_int, before_term = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    real = lab_module.run
    sent = []

    def run(*args: str, **kw: object) -> subprocess.CompletedProcess:
        if args[:3] == ("ip", "netns", "delete") and not sent:  # the cleanup's first deletion: signalled
            sent.append(args[3])
            os.kill(os.getpid(), sig)
        return real(*args, **kw)  # type: ignore[arg-type]

    la = Lab()
    try:
        try:
            with la:
                names = [la.namespace(k) for k in range(3)]
                assert set(names) <= _namespaces()
                monkeypatch.setattr(lab_module, "run", run)
        except KeyboardInterrupt:  # what the cleanup did before signals were held back
            pytest.fail("the signal interrupted the cleanup")
        assert sent, "the signal was sent during the cleanup"
        assert not set(names) & _namespaces(), "every namespace deleted despite the signal"
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == (before_int, before_term)
    finally:
        for name in set(la.namespaces) & _namespaces():  # only if the test failed: nothing of ours left
            subprocess.run(["ip", "netns", "delete", name], timeout=30, check=False)
