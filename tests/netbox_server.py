"""A real NetBox for the tests: PostgreSQL and Redis from Debian on 127.0.0.1 ports of their own,
NetBox from its virtualenv (the Makefile's NETBOX_VENV), all under one temporary directory.

`start()` takes a few seconds and leaves NetBox's migrations running in the background (about 8
minutes of one core), so conftest.py starts it as soon as the collection holds a NetBox test and
the rest of the suite runs meanwhile; `ready()` waits for them (bounded). Jobs given to `later()`
(a test's renders and imports: minutes of NetBox's per-row import) run one after another in a
background thread once the migrations are done, and `result()` hands a test what its job
returned or raised. Each import gets a database of its own, copied from the migrated one.
`stop()` ends every process by its PID (the postmaster, redis-server, a migration still running)
and removes the directory.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MIGRATE_TIMEOUT = 30 * 60
TEMPLATE = "netbox"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pg_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise RuntimeError("PostgreSQL is not installed (Debian package postgresql; `make test` installs it)")
    return Path(found[-1]).parent


class NetBox:
    def __init__(self, venv: Path):
        self.venv = venv
        self.dir = Path(tempfile.mkdtemp(prefix="fabgen-netbox-"))
        self.procs: dict[str, subprocess.Popen] = {}
        self.pg_port, self.redis_port = _free_port(), _free_port()
        self.pg = _pg_bin()
        self.user = "postgres" if os.geteuid() == 0 else None  # PostgreSQL refuses to run as root
        self.jobs: list[tuple[str, Callable[[], Any]]] = []
        self.results: dict[str, tuple[bool, Any]] = {}
        self.done = threading.Condition()
        self.worker: threading.Thread | None = None
        self.stopping = False

    def later(self, name: str, job: Callable[[], Any]) -> None:
        """Run JOB after the migrations, in the background, after the jobs given before it."""
        with self.done:
            self.jobs.append((name, job))
        if self.worker is None:
            self.worker = threading.Thread(target=self._work, name="netbox-jobs", daemon=True)
            self.worker.start()

    def _work(self) -> None:
        while True:
            with self.done:
                if not self.jobs or self.stopping:
                    self.worker = None
                    return
                name, job = self.jobs.pop(0)
            try:
                self.ready()
                outcome: tuple[bool, Any] = (True, job())
            except BaseException as exc:  # noqa: BLE001  # handed to the test that asks
                outcome = (False, exc)
            with self.done:
                self.results[name] = outcome
                self.done.notify_all()

    def result(self, name: str, timeout: float = MIGRATE_TIMEOUT + 20 * 60) -> Any:
        """What job NAME returned (or raise what it raised), waiting for it (bounded)."""
        with self.done:
            if not self.done.wait_for(lambda: name in self.results, timeout=timeout):
                raise RuntimeError(f"NetBox job {name} did not finish in {timeout} s")
            ok, value = self.results[name]
        if not ok:
            raise value
        return value

    def _pg_run(self, *args: str, timeout: float = 120) -> None:
        subprocess.run([str(self.pg / args[0]), *args[1:]], check=True, capture_output=True, timeout=timeout,
                       user=self.user)

    def start(self) -> None:
        if self.user:
            shutil.chown(self.dir, self.user)
        data = self.dir / "pg"
        self._pg_run("initdb", "-D", str(data), "-A", "trust", "-U", "netbox", "--no-sync")
        log = open(self.dir / "postgres.log", "wb")  # noqa: SIM115  # the process's own, closed at stop
        self.procs["postgres"] = subprocess.Popen(
            [str(self.pg / "postgres"), "-D", str(data), "-k", str(self.dir), "-p", str(self.pg_port),
             "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
             "-c", "full_page_writes=off"], stdout=log, stderr=subprocess.STDOUT, user=self.user)
        self.procs["redis"] = subprocess.Popen(
            ["redis-server", "--port", str(self.redis_port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.dir)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while subprocess.run([str(self.pg / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.pg_port)],
                             capture_output=True, timeout=10).returncode != 0:
            if time.monotonic() > deadline or self.procs["postgres"].poll() is not None:
                raise RuntimeError(f"PostgreSQL did not start: {(self.dir / 'postgres.log').read_text()[-2000:]}")
            time.sleep(0.3)
        self._createdb(TEMPLATE)
        self._configure()
        self.procs["migrate"] = subprocess.Popen(
            [str(self.venv / "bin" / "netbox"), "migrate", "--no-input"], env=self.env(TEMPLATE),
            stdout=open(self.dir / "migrate.log", "wb"), stderr=subprocess.STDOUT, cwd=self.dir)  # noqa: SIM115

    def _createdb(self, name: str, template: str | None = None) -> None:
        subprocess.run([str(self.pg / "createdb"), "-h", "127.0.0.1", "-p", str(self.pg_port), "-U", "netbox",
                        *(["-T", template] if template else []), name], check=True, capture_output=True, timeout=120)

    def _configure(self) -> None:
        root = self.dir / "root"
        subprocess.run([str(self.venv / "bin" / "netbox"), "setup", "--target", str(root)], check=True,
                       capture_output=True, timeout=120)
        (root / "conf" / "configuration.py").write_text(
            "import os\n"
            'ALLOWED_HOSTS = ["*"]\n'
            'DATABASES = {"default": {"ENGINE": "django.db.backends.postgresql", '
            '"NAME": os.environ["FABGEN_NETBOX_DB"], "USER": "netbox", "PASSWORD": "", "HOST": "127.0.0.1", '
            f'"PORT": "{self.pg_port}"}}}}\n'
            f'REDIS = {{"tasks": {{"HOST": "127.0.0.1", "PORT": {self.redis_port}, "DATABASE": 0, "SSL": False}}, '
            f'"caching": {{"HOST": "127.0.0.1", "PORT": {self.redis_port}, "DATABASE": 1, "SSL": False}}}}\n'
            'SECRET_KEY = "fabgen-tests-only-' + "x" * 40 + '"\n'
            "API_TOKEN_PEPPERS = {1: 'fabgen-tests-only-pepper-" + "y" * 30 + "'}\n")

    def env(self, database: str) -> dict[str, str]:
        return {**os.environ, "NETBOX_ROOT": str(self.dir / "root"), "FABGEN_NETBOX_DB": database,
                "DJANGO_SETTINGS_MODULE": "netbox.settings", "PYTHONWARNINGS": "ignore"}

    def ready(self, timeout: float = MIGRATE_TIMEOUT) -> None:
        """Wait for the migrations; raise with their log's tail if they failed or took too long."""
        proc = self.procs["migrate"]
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(f"NetBox's migrations took longer than {timeout} s") from None
        if code != 0:
            raise RuntimeError(f"NetBox's migrations failed: {(self.dir / 'migrate.log').read_text()[-3000:]}")

    def database(self, name: str) -> dict[str, str]:
        """A fresh copy of the migrated database: the environment that imports into it."""
        self.ready()
        self._createdb(name, TEMPLATE)
        return self.env(name)

    def run(self, args: list[str], env: dict[str, str] | None = None, timeout: float = 1200) -> tuple[int, str, str]:
        """A job's command, its process known to `stop()` (a session ending mid-import stops it)."""
        proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.procs["job"] = proc
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate(timeout=30)
            raise
        finally:
            self.procs.pop("job", None)
        return proc.returncode, out, err

    def stop(self) -> None:
        with self.done:
            self.stopping = True
            self.jobs.clear()
        for name in ("job", "migrate", "redis", "postgres"):
            proc = self.procs.pop(name, None)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGINT if name == "postgres" else signal.SIGTERM)  # postgres: fast shutdown
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)
        shutil.rmtree(self.dir, ignore_errors=True)


SHARED: list[NetBox] = []  # the session's one NetBox, started by conftest.py or the first test asking


def shared(venv: Path, prepare: Callable[[NetBox], None] | None = None) -> NetBox:
    """The session's NetBox, started (and PREPARE given it, to queue its jobs) on first use."""
    if not SHARED:
        nb = NetBox(venv)
        SHARED.append(nb)
        nb.start()
        if prepare is not None:
            prepare(nb)
    return SHARED[0]


def stop_shared() -> None:
    while SHARED:
        SHARED.pop().stop()
