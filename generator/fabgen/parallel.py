"""The scheduler: what runs beside the main process, and how it ends.

Render on two cores: a forked child and the parent take pieces of the work from one queue
until it is empty: each target that is not split is a piece, each large target is cut into
CHUNKS pieces (every CHUNKS-th device), the unsplit ones first (the largest pieces first, so
neither process is left with a long one at the end). In memory (`render_all`) the child sends
its files back through a pipe; when writing (`render_written`) each process writes the files
it rendered, so they never cross the pipe, and the child sends back only what the manifest
needs of them.

Rendering is pure Python (Jinja, string building), so threads would not help; fork shares
the structured configs with the child without copying or pickling them. Only large
renders are split (below SPLIT_THRESHOLD devices the fork costs more than it saves), only
where os.fork exists, and never when FABGEN_WORKERS=1. Output is identical either way:
every file is rendered by the same function from the same data, and files are merged by
path. A failure in the child is raised in the parent.

Beside the render, `Aside` runs one piece of work in a forked process (a check, the targets made
apart), and `Scheduler` keeps the forks of one render: what it starts, when each is joined, and
what the user sees when the work fails first (fabgen.pipeline says when each stage runs; this
module, where).
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

SPLIT_THRESHOLD = 1500  # devices (switch configs + per-node files) before splitting pays

Render = Callable[[Any], Iterable[tuple[str, bytes]]]
Shard = Callable[[Any, int, int], Any]
Job = tuple[Render, Any, Shard | None]


_SINGLE = [False]


@contextmanager
def single_process() -> Iterator[None]:
    """Render on one process inside this block (and in processes forked from it): used when two
    renders already run side by side on the two cores."""
    before, _SINGLE[0] = _SINGLE[0], True
    try:
        yield
    finally:
        _SINGLE[0] = before


def send(fd: int, obj: Any) -> None:
    """Write one pickled object, length first, to a pipe."""
    payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(struct.pack("!Q", len(payload)) + payload)
    while view:
        view = view[os.write(fd, view):]


def receive(fd: int) -> Any:
    """Read one object written by `send`."""
    size = struct.unpack("!Q", _read_exact(fd, 8))[0]
    return pickle.loads(_read_exact(fd, size))


def _workers(size: int) -> int:
    if size < SPLIT_THRESHOLD or not hasattr(os, "fork") or _SINGLE[0]:
        return 1
    env = os.environ.get("FABGEN_WORKERS", "")
    if env.isdigit():
        return max(1, min(2, int(env)))
    return 2 if (os.cpu_count() or 1) >= 2 else 1


def _fork() -> int:
    """os.fork, with the child bound to its parent's life on Linux: it is killed when the parent
    dies (a render killed with SIGKILL leaves no process behind writing into its temporary
    tree). Where prctl is missing the child runs its piece of work to the end."""
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
        if os.getppid() != parent:  # the parent died before the line above
            os._exit(1)
    return pid


def _render(jobs: list[Job]) -> Iterator[tuple[str, bytes]]:
    """Every file, on this process alone."""
    for render, data, _ in jobs:
        yield from render(data)


CHUNKS = 8  # pieces a split target is cut into (a 64k-GPU SONiC fabric: 320 switches a piece)
_TOKEN = struct.Struct("!H")

_QUEUE_BYTES = 4096  # a pipe always holds a page, so the tokens are written before anyone reads

Piece = tuple[Render, Any, Shard | None, int, int]  # render, data, shard, part, parts


def _queue(jobs: list[Job]) -> tuple[list[Piece], int]:
    """The pieces of the work, and the read end of a pipe holding one token per piece: a
    process takes a piece by reading its token (a read of a token is never split between two
    readers), and the queue is empty at end of file. Many targets (many fabrics) are cut into
    fewer pieces each, so that the tokens fit a page."""
    whole = [(render, data, None, 0, 1) for render, data, shard in jobs if shard is None]
    split = [(render, data, shard) for render, data, shard in jobs if shard is not None]
    room = _QUEUE_BYTES // _TOKEN.size - len(whole)
    parts = max(1, min(CHUNKS, room // max(1, len(split))))
    pieces: list[Piece] = whole + [(render, data, shard, k, parts)
                                   for render, data, shard in split for k in range(parts)]
    tokens = b"".join(_TOKEN.pack(i) for i in range(len(pieces)))
    if len(tokens) > _QUEUE_BYTES:
        raise RuntimeError(f"{len(pieces)} render pieces: too many for the queue")
    r, w = os.pipe()
    view = memoryview(tokens)
    while view:
        view = view[os.write(w, view):]
    os.close(w)
    return pieces, r


def _take(pieces: list[Piece], queue: int) -> Iterator[tuple[str, bytes]]:
    """The files of every piece this process takes from the queue, until it is empty."""
    while True:
        token = os.read(queue, _TOKEN.size)
        if not token:
            return
        render, data, shard, k, parts = pieces[_TOKEN.unpack(token)[0]]
        yield from render(data if shard is None else shard(data, k, parts))


def _read_exact(fd: int, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 22))
        if not chunk:
            raise RuntimeError("the render worker died before sending its files")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def render_all(jobs: list[Job], size: int) -> list[tuple[str, bytes]]:
    """Every (path, content) of every job, rendered on one or two processes (the child's files
    come back through a pipe)."""
    return render_written(jobs, size, lambda path, content: content)


Write = Callable[[str, bytes], Any]


def render_written(jobs: list[Job], size: int, write: Write) -> list[tuple[str, Any]]:
    """(path, write(path, content)) of every file of every job, each file handed to `write` in
    the process that rendered it; `write`'s results come back from the child (an `Aside`). An
    OSError of either process is raised as such (so the caller can name the file); if the
    parent fails, the child is stopped before the exception leaves, so nothing writes after."""
    if _workers(size) == 1:
        return [(path, write(path, content)) for path, content in _render(jobs)]
    pieces, queue = _queue(jobs)

    def share() -> list[tuple[str, Any]]:
        return [(path, write(path, content)) for path, content in _take(pieces, queue)]

    child = Aside(share, size)
    try:
        mine = share()
        try:
            theirs = child.join()
        except OSError:
            raise
        except Exception as exc:  # a bug in a target, raised in the child: name it as such
            raise RuntimeError(f"render worker failed: {type(exc).__name__}: {exc}") from None
    finally:
        child.cancel()
        os.close(queue)
    return mine + theirs


class Aside:
    """`fn` run in a forked process beside the work that follows (the build's structural
    check, and the targets made apart, run on the second core while allocate and structure run
    on the first, which has nothing else to do then); `join` waits for it and returns what `fn`
    returned or raises what it raised. Below SPLIT_THRESHOLD devices, or on one process, `fn`
    runs at once, here."""

    def __init__(self, fn: Callable[[], Any], size: int):
        self.pid: int | None = None
        self.value: Any = None
        if _workers(size) == 1:
            self.value = fn()
            return
        r, w = os.pipe()
        pid = _fork()
        if pid == 0:
            code = 0
            try:
                os.close(r)
                try:
                    result: tuple[str, Any] = ("ok", fn())
                except BaseException as exc:  # noqa: BLE001 - raised again in the parent
                    result = ("error", exc)
                try:
                    send(w, result)
                except Exception:  # noqa: BLE001 - an exception that does not pickle
                    send(w, ("error", RuntimeError(f"{type(result[1]).__name__}: {result[1]}")))
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        self.pid, self.fd = pid, r

    def join(self) -> Any:
        """Wait for `fn`; what it returned, or raise what it raised."""
        if self.pid is None:
            return self.value
        try:
            status, value = receive(self.fd)
        finally:
            self.cancel()
        if status != "ok":
            raise value
        self.value = value
        return value

    def cancel(self) -> None:
        """Stop `fn` if it still runs (the caller failed first) and reap its process."""
        if self.pid is None:
            return
        pid, self.pid = self.pid, None
        os.close(self.fd)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)


class Scheduler:
    """The forks of one render: the checks run aside (`check`, joined by `checked` before
    anything leaves) and the targets made apart (`apart`, joined by `made_apart`). `running`
    is the block they live in: when the work fails first, a check's finding (of the `findings`
    kinds) is raised instead of the work's error, and whatever still runs is stopped before the
    error leaves. Without `beside`, every check runs at once, here."""

    def __init__(self, beside: bool = False, findings: tuple[type[Exception], ...] = ()):
        self.beside = beside
        self.findings = findings
        self.aside: list[Aside] = []  # the checks, in the order they are joined
        self.made: Aside | None = None  # the targets made apart: their files, or what writing them returned
        self.checking = False  # `checked` runs: an error now is the checks' own

    def check(self, fn: Callable[[], Any], size: int, first: bool = False) -> None:
        """Run a check: beside the work that follows, or (without `beside`) here, now. `first`:
        joined before the others, so its finding is the one a user saw when it ran here."""
        if not self.beside:
            fn()
        elif first:
            self.aside.insert(0, Aside(fn, size))
        else:
            self.aside.append(Aside(fn, size))

    def apart(self, fn: Callable[[], list[tuple[str, Any]]], size: int) -> None:
        """Make the targets apart (`fn`) in a process of their own, beside the rest."""
        self.made = Aside(fn, size)

    def made_apart(self) -> list[tuple[str, Any]]:
        """Wait for the targets made apart: [(path, their files or what writing each returned)]."""
        return self.made.join() if self.made is not None else []

    def checked(self) -> None:
        """Wait for every check running aside and raise what it found (before anything leaves)."""
        self.checking = True
        for a in self.aside:
            a.join()

    def release(self) -> None:
        """Stop what still runs aside or apart (the work failed first)."""
        for a in [*self.aside, *([self.made] if self.made else [])]:
            a.cancel()

    @contextmanager
    def running(self) -> Iterator[Scheduler]:
        """The block the forks live in. When it fails, they are stopped before the error leaves,
        and a check's finding replaces the work's error (`finding`); an error of `checked` is
        the checks' own, and an interruption waits for no one."""
        try:
            yield self
        except Exception as exc:
            try:
                found = None if self.checking else self.finding()
            finally:
                self.release()
            if found is not None:
                raise found from exc
            raise
        except BaseException:
            self.release()
            raise

    def finding(self) -> Exception | None:
        """What a check running aside found, if any: the work failed first, maybe because of it
        (two fabrics cabling one port can break a writer), and the finding is what the user must
        see, not the writer's error. Only a finding: a check that died or failed otherwise leaves
        the work's own error to be seen."""
        if self.made is not None:
            self.made.cancel()  # not needed any more: the checks get the cores
        for a in self.aside:
            try:
                a.join()
            except self.findings as exc:
                return exc
            except Exception:  # noqa: BLE001 - not a finding: the work's error stands
                continue
        return None


@contextmanager
def alongside(fn: Callable[[], Any] | None, size: int) -> Iterator[Aside | None]:
    """`fn` (when there is one) run in a forked process beside the block, which joins it; stopped
    when the block leaves (the block failed first)."""
    work = Aside(fn, size) if fn is not None else None
    try:
        yield work
    finally:
        if work is not None:
            work.cancel()
