"""Engine runs in a process of their own: engine code never holds the GUI's interpreter lock, and a
crash in compiled code ends one run, not the window.

The GUI side (`ProcessJob`) starts `python -c "import core.worker; core.worker.main(FD)"` in a
process group of its own (in the window's session: see lower_priority), so the child leads a group
that also holds every process the engine starts (Cain's
search workers). FD is the child's end of a socket pair. The parent sends one message, the job: the
engine's name, where to import its EngineSpec from ("module:attribute", so engines registered only in
the parent, such as the tests' demo engine, are found too), and the JobRequest's JSON form. The child
records the run with core.lifecycle.record_run, as the command line and studies do, sends its events
back in batches as they come (pickled core.jobs dataclasses, at most every 20 ms), then the
RunOutcome's JSON form, read back on the parent's reader thread (a large result never costs the
window's UI thread).

Cancel sends a "cancel" message that sets the child's CancelToken; a child that has not ended
CANCEL_GRACE_S later is terminated with its whole group (SIGTERM, then SIGKILL), and when a run ends
its group is swept, so no engine process outlives its run. A child whose parent goes away (the socket
closes) cancels itself and kills its group a second later.

Why a plain subprocess rather than multiprocessing's "spawn" (the GUI process has Qt loaded and must
never be forked; both start a fresh interpreter): `process_group=0` puts the child in its own
process group before any of its code runs, the child does not re-import the GUI's `__main__` (the GUI
script, Qt with it), and the GUI process starts no resource-tracker helper process.
"""

from __future__ import annotations

import atexit
import faulthandler
import importlib
import os
import queue
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from typing import Any

from core import faults
from core.engine import EngineSpec, JobRequest, engines, get_engine
from core.faults import exit_description  # noqa: F401  (how a process ended, in words: kept importable here)
from core.jobs import CancelToken, Event
from core.lifecycle import RunError, RunOutcome, record_run
from core.paths import ROOT   # the directory holding the `core` package

CANCEL_GRACE_S = 0.3      # a cancelled child gets this long to stop by itself, then its group is terminated
KILL_GRACE_S = 0.1        # after SIGTERM, this long before SIGKILL
EXIT_GRACE_S = 1.0        # a child that sent its outcome gets this long to exit
ORPHAN_GRACE_S = 1.0      # a child whose parent went away gets this long to stop before it kills its group
BATCH_INTERVAL_S = 0.02   # the child sends its events at most this often (and at once every MAX_BATCH events)
MAX_BATCH = 500
FAULT_TAIL = 4000         # characters of a crashed child's fault-handler report kept in the error
# Engines run below the window's priority (and every process they start inherits it): when all cores
# are busy, the window's few milliseconds of drawing still come first instead of waiting their turn
# behind the searches. An engine alone on the machine loses nothing.
NICENESS = 10


def lower_priority(pid: int = 0) -> None:
    """Put process `pid` (0: this one) at NICENESS. The parent does it as soon as the child exists,
    before the interpreter's imports (the heaviest work at the start of a run); the child repeats it
    (harmless) for other launchers. A failure (another OS, a sandbox) leaves the priority as it was.

    The child stays in the window's session on purpose: Linux (kernel.sched_autogroup_enabled, the
    default on desktops) schedules each session as one group, and a nice value only weighs against
    processes of the same group. In a session of its own a worker at nice 10 would take as much CPU
    as the whole window; in the window's session the window comes first, and the application as a
    whole still gets the same share of a machine shared with other people's work."""
    try:
        if os.getpriority(os.PRIO_PROCESS, pid) < NICENESS:
            os.setpriority(os.PRIO_PROCESS, pid, NICENESS)
    except (AttributeError, OSError):
        pass


# ====================================================================== a crash
def crash_error(message: str, fault_report: str = "") -> RunError:
    """The worker process ended without an outcome (killed by a signal, a segfault in compiled
    code, an exit): how it ended, and its fault handler's report (every thread's traceback)."""
    return RunError("crash", message, type="EngineProcessEnded",
                    detail=f"the fault handler's report of the engine's process:\n{fault_report}" if fault_report else "")


# ====================================================================== the job, as data
def engine_ref(spec: EngineSpec) -> str | None:
    """Where the child imports this spec from: "module:attribute" of the module that defines the
    engine's run function, when that module binds the spec to a name (every core/<pkg>/engine.py
    does); None leaves the child to look the engine up by name in its own registry."""
    module_name = getattr(spec.run, "__module__", None)
    module = sys.modules.get(module_name or "")
    if module is None or module_name in ("__main__", "__mp_main__"):
        return None
    for attr, value in vars(module).items():
        if value is spec:
            return f"{module_name}:{attr}"
    return None


def load_engine(name: str, ref: str | None) -> EngineSpec:
    """The child's lookup: the spec at `ref` if given, else the registry's engine of that name."""
    if ref:
        module_name, _, attr = ref.partition(":")
        spec = getattr(importlib.import_module(module_name), attr)
        if not isinstance(spec, EngineSpec) or spec.name != name:
            raise RuntimeError(f"{ref} is not the EngineSpec of engine {name!r}")
        return spec
    return get_engine(name)


# ====================================================================== the child
class _Batcher:
    """Sends the engine's events in batches: an event after a quiet spell at once, then what comes
    within BATCH_INTERVAL_S together (a thread flushes what an engine busy with a long step has left),
    and at once every MAX_BATCH events."""

    def __init__(self, conn: Connection, token: CancelToken) -> None:
        self._conn = conn
        self._token = token
        self._lock = threading.Lock()
        self._pending: list[Event] = []
        self._sent = 0.0
        self._stop = threading.Event()
        self.broken = False
        self._thread = threading.Thread(target=self._loop, name="event-batcher", daemon=True)
        self._thread.start()

    def put(self, event: Event) -> None:
        with self._lock:
            self._pending.append(event)
            if len(self._pending) >= MAX_BATCH or time.monotonic() - self._sent >= BATCH_INTERVAL_S:
                self._flush_locked()        # the first event after a quiet spell goes at once

    def _loop(self) -> None:
        while not self._stop.wait(BATCH_INTERVAL_S):
            with self._lock:
                self._flush_locked()

    def _flush_locked(self) -> None:
        if not self._pending or self.broken:
            self._pending.clear()
            return
        batch, self._pending = self._pending, []
        self._sent = time.monotonic()
        try:
            self._conn.send(("events", batch))
        except OSError:                 # the window went away: stop the engine
            self.broken = True
            self._token.cancel()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        with self._lock:
            self._flush_locked()


def _watch(conn: Connection, token: CancelToken, done: threading.Event) -> None:
    """Child side: a "cancel" message sets the token; the socket closing means the GUI is gone."""
    try:
        while True:
            message = conn.recv()
            if message and message[0] == "cancel":
                token.cancel()
    except (EOFError, OSError):
        pass
    if done.is_set():
        return
    token.cancel()
    if not done.wait(ORPHAN_GRACE_S):
        os.killpg(os.getpgrp(), signal.SIGKILL)       # nothing of an orphaned run survives


def _started(value: Any) -> float | None:
    """When the parent asked for the run (its time.monotonic(), the same clock here): an engine's
    wall-clock budget counts from then, so this process's start-up and imports are part of it. A
    value that cannot be that moment (no number, in the future, an hour old) counts from now."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    lead = time.monotonic() - float(value)
    return float(value) if 0.0 <= lead <= 3600.0 else None


def main(fd: int, fault_fd: int | None = None) -> None:
    """The worker process: run one job received on `fd`, stream its events, send its outcome. A
    fatal signal's Python traceback goes to `fault_fd` (the parent shows it in the log); everything
    else the engine writes goes to the inherited stdout and stderr, as from the command line."""
    if fault_fd is not None:
        os.set_inheritable(fault_fd, False)
        faulthandler.enable(file=fault_fd, all_threads=True)
    lower_priority()
    os.set_inheritable(fd, False)       # processes the engine starts do not keep the socket open
    conn = Connection(fd)
    try:
        kind, job = conn.recv()
    except (EOFError, OSError):
        return
    for path in job.get("sys_path", []):      # the parent's import path: test engines, scripts' folders
        if path not in sys.path:
            sys.path.append(path)
    token = CancelToken(_started(job.get("started")))
    done = threading.Event()
    threading.Thread(target=_watch, args=(conn, token, done), name="cancel-watch", daemon=True).start()
    batcher = _Batcher(conn, token)
    try:
        spec = load_engine(job["engine"], job.get("ref"))
        request = JobRequest.from_json(job["request"])
    except Exception as exc:
        message = RunOutcome.failed(exc).to_json()
    else:
        # events go to the window as they come; what they streamed is not sent again with the outcome
        message = record_run(spec, request, token, batcher.put, series_limit=1).to_json(stream=False)
    batcher.close()
    try:
        conn.send(("outcome", message))
    except OSError:
        pass
    done.set()


# ====================================================================== the parent
def group_members(pgid: int) -> list[int]:
    """The live processes of a process group (zombies, which only wait to be reaped, left out)."""
    try:
        import psutil
    except ImportError:                 # without psutil: any member at all, zombies included
        try:
            os.killpg(pgid, 0)
            return [pgid]
        except (ProcessLookupError, PermissionError):
            return []
    members = []
    for pid in psutil.pids():
        try:
            if os.getpgid(pid) == pgid and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                members.append(pid)
        except (OSError, psutil.Error):
            continue
    return members


_LIVE: "set[ProcessJob]" = set()


def _kill_live_jobs() -> None:
    for job in list(_LIVE):
        job.kill()


atexit.register(_kill_live_jobs)        # an interpreter that exits any way but a clean close leaves none


class ProcessJob:
    """One engine run in its own process, from the parent's side (Qt-free: the run controller's
    ProcessHandle and benchmarks use it). A reader thread receives the child's batches into `batches`; `done` is set
    once the process has ended and `outcome` is known."""

    def __init__(self, engine: str, request: JobRequest, ref: str | None = None) -> None:
        self.engine = engine
        self.request = request
        spec = engines().get(engine)
        self.ref = ref if ref is not None else (engine_ref(spec) if spec is not None else None)
        self.batches: "queue.SimpleQueue[list[Event]]" = queue.SimpleQueue()
        self.done = threading.Event()
        self.outcome: RunOutcome | None = None
        self.returncode: int | None = None
        self.started = time.monotonic()
        self._proc: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._kill_at: float | None = None
        self._reader: threading.Thread | None = None
        self._faults: Any = None
        self._message: dict[str, Any] | None = None
        self._events = 0

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid

    def start(self) -> None:
        """Start the process and send it the job; a failure to start becomes the job's error outcome."""
        parent_sock, child_sock = socket.socketpair()
        try:
            self._faults = tempfile.TemporaryFile()
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
            fd, fault_fd = child_sock.fileno(), self._faults.fileno()
            self._proc = subprocess.Popen(
                [sys.executable, "-c", f"import core.worker; core.worker.main({fd}, {fault_fd})"],
                pass_fds=(fd, fault_fd), process_group=0, stdin=subprocess.DEVNULL, env=env)
            lower_priority(self._proc.pid)
            self._conn = Connection(parent_sock.detach())
            self._conn.send(("job", {"engine": self.engine, "ref": self.ref, "request": self.request.to_json(),
                                     "sys_path": [p for p in sys.path if p], "started": self.started}))
        except Exception as exc:        # no process (or it died at once): the run fails with the reason
            self.outcome = RunOutcome.failed(exc)
            self.kill()
            self.done.set()
            return
        finally:
            child_sock.close()
            parent_sock.close()
        _LIVE.add(self)
        self._reader = threading.Thread(target=self._read, name=f"job-{self.engine}", daemon=True)
        self._reader.start()

    def cancel(self, grace: float = CANCEL_GRACE_S) -> None:
        """Ask the engine to stop; its process group is terminated if it has not ended `grace` s later."""
        if self.done.is_set() or self._conn is None:
            return
        kill_at = time.monotonic() + grace
        self._kill_at = kill_at if self._kill_at is None else min(self._kill_at, kill_at)
        try:
            self._conn.send(("cancel",))
        except OSError:
            pass

    def kill(self) -> None:
        """End the process group now (SIGTERM, then SIGKILL); used at exit."""
        if self._proc is not None and self._proc.poll() is None:
            self._signal_group(signal.SIGTERM)
            try:
                self._proc.wait(KILL_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
            self._signal_group(signal.SIGKILL)
            try:
                self._proc.wait(1.0)
            except subprocess.TimeoutExpired:
                pass
        self._sweep(0.0)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the process has ended and its group is swept; True if it has."""
        if self._reader is not None:
            self._reader.join(timeout)
            return not self._reader.is_alive()
        return self.done.is_set()

    # ------------------------------------------------------------ internals
    def _signal_group(self, sig: int) -> bool:
        """Signal the job's process group (the child leads it); False once the group is empty."""
        if self._proc is None:
            return False
        try:
            os.killpg(self._proc.pid, sig)
            return True
        except (ProcessLookupError, PermissionError):
            return False

    def _sweep(self, grace: float) -> None:
        """Processes the engine started and left behind: terminated, and killed after `grace` s. (A
        multiprocessing resource tracker ignores SIGTERM and leaves by itself once its users are gone,
        after removing their semaphores.)"""
        if self._proc is None or not self._signal_group(signal.SIGTERM):
            return
        end = time.monotonic() + grace
        while group_members(self._proc.pid) and time.monotonic() < end:
            time.sleep(0.01)
        if group_members(self._proc.pid):
            self._signal_group(signal.SIGKILL)

    def _read(self) -> None:
        assert self._proc is not None and self._conn is not None
        proc, conn = self._proc, self._conn
        terminated = False
        while True:
            now = time.monotonic()
            if self._kill_at is not None and now >= self._kill_at and proc.poll() is None:
                if not terminated:          # cancelled and not stopping: terminate, and kill soon after
                    self._signal_group(signal.SIGTERM)
                    terminated, self._kill_at = True, now + KILL_GRACE_S
                else:
                    self._signal_group(signal.SIGKILL)
                    self._kill_at = None
            timeout = 0.1 if self._kill_at is None else max(0.0, min(0.1, self._kill_at - now))
            try:
                if conn.poll(timeout):
                    kind, payload = conn.recv()
                    if kind == "events":
                        self._events += len(payload)
                        self.batches.put(payload)
                    elif kind == "outcome":
                        self._message = payload
                    continue
            except (EOFError, OSError):
                pass
            except Exception:               # a message cut short by a kill: the end of this process
                pass
            else:
                if proc.poll() is None:
                    continue
            break
        try:
            self.returncode = proc.wait(EXIT_GRACE_S)
        except subprocess.TimeoutExpired:     # closed its socket but does not exit: end it
            self._signal_group(signal.SIGKILL)
            self.returncode = proc.wait()
        conn.close()
        self.outcome = self._make_outcome(self.returncode, terminated)
        self._faults.close()
        _LIVE.discard(self)
        self._sweep(0.3)
        self.done.set()

    def _make_outcome(self, returncode: int, terminated: bool) -> RunOutcome:
        m = self._message
        if m is not None:
            spec = engines().get(self.engine)
            if spec is None:
                spec = load_engine(self.engine, self.ref)
            return RunOutcome.from_json(m, spec)
        if terminated or self._kill_at is not None:      # cancelled, and ended by us
            return RunOutcome.cancelled(events=self._events)
        return RunOutcome.failed(crash_error(faults.killed("the engine's process", returncode), self._fault_report()),
                                 events=self._events)

    def _fault_report(self) -> str:
        if self._faults is None:
            return ""
        try:
            self._faults.seek(0, os.SEEK_END)
            size = self._faults.tell()
            self._faults.seek(max(0, size - FAULT_TAIL))
            return self._faults.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
