"""Runs a study's points on a Dask cluster and records each one as it ends.

`local:N` (the default, N = this machine's cores) starts a cluster of N worker processes on the
loopback interface, one thread each, no dashboard, and stops it at the end; `tcp://HOST:PORT`
connects to a scheduler someone started (`dask scheduler`, `dask worker`, or dask-jobqueue on
SLURM; docs/studies.md). Each point is one task (core.study.point.run_point); results are taken
with `as_completed` as they arrive, appended to the results file and handed to `on_record`, so a
table fills in while the study runs.

A worker that dies while running a point (Dask reports KilledWorker) gets the point once more on
another worker; a second death marks it failed with the reason. `cancel()` (any thread) stops
taking results at once, tells running points to stop (a Dask Event they poll), cancels the queued
ones and closes the client and, for a local cluster, the cluster: no worker process is left.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from core import faults
from core.errors import InputError
from core.lifecycle import RunError, RunOutcome
from core.project import Snapshot, now_iso
from core.study import results_file
from core.study.axes import Point
from core.study.point import run_point, warm_up
from core.study.cache import PointCache, content_key
from core.study.search import Searcher
from core.study.spec import Study

MAX_ATTEMPTS = 2                # a point whose worker dies is run once more, then marked failed
CONNECT_TIMEOUT_S = 15
WAIT_FOR_WORKERS_S = 60
_FILE_ONLY = ("series", "log", "run_error")  # sent to on_record, not written to the results file


@dataclass(frozen=True)
class ClusterSpec:
    """Where points run: a local cluster of `workers` processes, the scheduler at `address`, or a
    batch system's jobs (`batch`: "slurm" or "pbs", `workers` jobs; the study's "cluster" section
    describes one job: dask-jobqueue builds the scheduler here and submits the workers)."""

    workers: int = 0
    address: str = ""
    batch: str = ""

    @property
    def local(self) -> bool:
        return not self.address and not self.batch

    def __str__(self) -> str:
        if self.batch:
            return f"{self.batch}:{self.workers}"
        return self.address or f"local:{self.workers}"


BATCH_SYSTEMS = ("slurm", "pbs")


def parse_cluster(text: str | None, where: str = "--cluster") -> ClusterSpec:
    """`local`, `local:N`, a scheduler address (`tcp://HOST:PORT`, `tls://...`), or `slurm[:JOBS]` /
    `pbs[:JOBS]` (the study's "cluster" section describes a job; default 1 job)."""
    text = (text or "local").strip()
    head, _, count = text.partition(":")
    if head in BATCH_SYSTEMS and "//" not in text:
        if count and (not count.isdigit() or not 1 <= int(count) <= 10_000):
            raise InputError(f"expected {head}:JOBS with 1..10000 jobs, got {text!r}", where)
        return ClusterSpec(workers=int(count or 1), batch=head)
    if text == "local":
        return ClusterSpec(workers=os.cpu_count() or 1)
    if text.startswith("local:"):
        n = text[6:]
        if not n.isdigit() or not 1 <= int(n) <= 1024:
            raise InputError(f"expected local:N with N workers (1..1024), got {text!r}", where)
        return ClusterSpec(workers=int(n))
    if "://" in text:
        scheme, rest = text.split("://", 1)
        if scheme not in ("tcp", "tls", "ws", "wss") or ":" not in rest or not rest.rsplit(":", 1)[1].isdigit():
            raise InputError(f"expected a scheduler address like tcp://HOST:PORT, got {text!r}", where)
        return ClusterSpec(address=text)
    raise InputError(f"expected local, local:N, tcp://HOST:PORT, slurm[:JOBS] or pbs[:JOBS], got {text!r}", where)


BATCH_WAIT_S = 600      # a queued job may take a while to start: the first worker is waited for this long


def batch_cluster(spec: ClusterSpec, section: dict[str, Any]) -> Any:
    """A dask-jobqueue cluster (SLURM or PBS) from the study's "cluster" section, scaled to the
    spec's jobs: the scheduler runs here, each job starts `processes` one-thread workers with the
    section's python (the environment the project is installed in; default: this one)."""
    try:
        import dask_jobqueue
    except ImportError:
        raise InputError(f"--cluster {spec.batch} needs dask-jobqueue: pip install dask-jobqueue (or the project's "
                         f"extra: pip install '.[cluster]')", "--cluster") from None
    import dask

    cores = int(section.get("cores", 1))
    kwargs: dict[str, Any] = {
        "cores": cores, "processes": int(section.get("processes", cores)),       # one thread per worker process
        "memory": section.get("memory", "4GB"), "walltime": section.get("walltime", "01:00:00"),
        "python": section.get("python", sys.executable),
        # workers may start processes of their own (Cain's workers): not daemons
        "job_script_prologue": ["export DASK_DISTRIBUTED__WORKER__DAEMON=False", *section.get("prologue", [])],
        "job_extra_directives": list(section.get("extra", [])),
        "scheduler_options": {"dashboard_address": None, **({"host": section["host"]} if "host" in section else {})},
    }
    for key in ("queue", "account", "interface"):
        if key in section:
            kwargs[key] = section[key]
    cls = dask_jobqueue.SLURMCluster if spec.batch == "slurm" else dask_jobqueue.PBSCluster
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):      # a dead worker's point fails at once
        cluster = cls(**kwargs)
    cluster.scale(jobs=spec.workers)
    return cluster


@dataclass
class StudySummary:
    study: str
    engine: str
    cluster: str
    results_path: Path
    records: list[dict[str, Any]]           # one per point, in the study's order
    cancelled: bool = False
    interrupted: bool = False               # Ctrl-C on the command line
    error: str | None = None                # the cluster could not be used
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def counts(self) -> dict[str, int]:
        c = {"total": len(self.records), "finished": 0, "failed": 0, "not_run": 0, "resumed": 0, "cached": 0}
        for r in self.records:
            status = r.get("status")
            c["finished" if status == "finished" else "failed" if status == "failed" else "not_run"] += 1
            c["resumed"] += bool(r.get("resumed"))
            c["cached"] += bool(r.get("cached"))
        return c


@contextmanager
def _quiet_dask() -> Iterator[None]:
    """Dask logs worker deaths and shutdown chatter; the runner reports what matters itself."""
    log = logging.getLogger("distributed")
    old = log.level
    log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        log.setLevel(old)


class StudyRunner:
    def __init__(self, study: Study, cluster: str | ClusterSpec | None = None, out: str | Path | None = None,
                 resume: bool = False, on_record: Callable[[dict[str, Any]], None] | None = None,
                 on_log: Callable[[str], None] | None = None, cache: PointCache | bool | None = True,
                 on_start: Callable[[Point], None] | None = None) -> None:
        self.study = study
        # finished points by content, across runs and studies (False / None: run every point)
        self.cache = PointCache() if cache is True else cache or None
        self.cluster = cluster if isinstance(cluster, ClusterSpec) else parse_cluster(cluster)
        self.path = Path(out) if out is not None else study.results_path()
        results_file.check_out_path(self.path, "--out" if out is not None else "study file's folder")
        self.resume = resume
        # what --resume goes on from, read (and checked line by line) before anything runs
        self._before = results_file.finished(results_file.read(self.path, strict=True)) if resume else {}
        self.on_record = on_record or (lambda r: None)
        self.on_log = on_log or (lambda m: None)
        # a point sent to a worker (its first attempt): the run controller shows it as running
        self.on_start = on_start or (lambda p: None)
        self.client: Any = None                 # the dask Client while the study runs
        self._cluster: Any = None
        self._cancel = threading.Event()
        self._ac: Any = None
        self._run_id = uuid.uuid4().hex[:8]
        self._event_name = f"dfx-study-cancel-{self._run_id}"
        self._cancel_flag: Any = None
        self._pending: dict[str, tuple[Point, int, Any]] = {}       # future key -> point, attempt, future
        self._pids: list[int] = []
        self._slots_at = -1.0
        self._slots_n = 1
        self.searcher: Searcher | None = None       # a search study's sampler, while it runs

    # ------------------------------------------------------------ control
    def cancel(self) -> None:
        """Stop the study (thread-safe): no further results are taken; run() closes everything."""
        self._cancel.set()
        ac = self._ac
        if ac is not None:
            ac.clear()      # as_completed polls every 0.1 s: the loop in run() ends at once

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    # ------------------------------------------------------------ the run
    def run(self) -> StudySummary:
        study = self.study
        summary = StudySummary(study.name, study.engine, str(self.cluster), self.path, [])
        before = self._before
        writer = results_file.ResultsWriter(self.path, self.resume)
        by_index: dict[int, dict[str, Any]] = {}
        todo: list[Point] = []
        for p in study.points:
            if p.key in before:
                rec = {**before[p.key], "index": p.index, "params": p.params, "resumed": True}
                by_index[p.index] = rec
                self.on_record(rec)
            else:
                todo.append(p)
        writer.write({"type": "header", "format": results_file.FORMAT, "study": study.name, "engine": study.engine,
                      "study_file": str(study.path) if study.path else None, "started_at": now_iso(),
                      "cluster": str(self.cluster), "points": len(study.points), "resumed": len(by_index)})
        if before:
            self.on_log(f"resuming: {len(by_index)} of {len(study.points)} point(s) already finished in {self.path}")
        if study.search is None and self.cache is not None:     # computed before, by any study: reused
            hits = [p for p in todo if self._from_cache(p, writer, by_index)]
            if hits:
                self.on_log(f"{len(hits)} point(s) reused from the cache of finished points")
                todo = [p for p in todo if p.index not in by_index]
        t0 = time.perf_counter()
        try:
            with _quiet_dask():
                if todo and not self.cancelled:
                    self._start()
                    summary.timings["start_s"] = round(time.perf_counter() - t0, 3)
                    t1 = time.perf_counter()
                    if not self.cancelled:
                        self._run_points(todo, writer, by_index)
                    summary.timings["run_s"] = round(time.perf_counter() - t1, 3)
        except KeyboardInterrupt:
            self.cancel()
            summary.interrupted = True
        except InputError as exc:
            summary.error = str(exc)
        except Exception as exc:        # a fault of the machine in words (no room for the results file...)
            summary.error = faults.describe(exc, "running the study") or f"{type(exc).__name__}: {exc}"
        finally:
            t2 = time.perf_counter()
            try:
                with _quiet_dask():
                    self._stop()
            finally:
                writer.close()
                summary.timings["stop_s"] = round(time.perf_counter() - t2, 3)
        summary.cancelled = self.cancelled
        summary.records = [by_index.get(p.index) or {"type": "point", "key": p.key, "index": p.index,
                                                     "params": p.params, "repeat": p.repeat, "status": "not run"}
                           for p in study.points]
        if summary.error:
            self.on_log(f"the study stopped: {summary.error}")
        return summary

    # ------------------------------------------------------------ cluster
    def _start(self) -> None:
        import dask
        from distributed import Client
        from distributed import Event as DaskEvent

        if self.cluster.local:
            from distributed import LocalCluster

            n = self.cluster.workers
            self.on_log(f"starting a local Dask cluster: {n} worker process(es)")
            # A dead worker's task is failed at once (no silent reschedule): the runner retries it once.
            # Workers are not daemons, so engines that start processes of their own (cain's workers) can.
            with dask.config.set({"distributed.scheduler.allowed-failures": 0, "distributed.worker.daemon": False}):
                # the scheduler's HTTP endpoints (no dashboard) on a free loopback port, like everything else
                self._cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                             dashboard_address=None, silence_logs=logging.CRITICAL,
                                             scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
            self.client = Client(self._cluster, set_as_default=False)
            for nanny in list(self._cluster.workers.values()):
                pid = getattr(nanny, "pid", None)       # the worker process the nanny started
                if isinstance(pid, int):
                    self._pids.append(pid)
        elif self.cluster.batch:
            self._cluster = batch_cluster(self.cluster, self.study.cluster)
            self.on_log(f"submitted {self.cluster.workers} {self.cluster.batch} job(s) for Dask workers; scheduler at "
                        f"{self._cluster.scheduler_address}")
            self.client = Client(self._cluster, set_as_default=False)
            self.on_log("waiting for the first worker to start")
            self.client.wait_for_workers(1, timeout=self.study.cluster.get("wait_s", BATCH_WAIT_S))
        else:
            self.on_log(f"connecting to the Dask scheduler at {self.cluster.address}")
            try:
                self.client = Client(self.cluster.address, timeout=CONNECT_TIMEOUT_S, set_as_default=False)
            except OSError as exc:
                raise InputError(f"cannot reach a Dask scheduler there: {exc}", "--cluster") from None
            if not self.client.scheduler_info().get("workers"):
                self.on_log("the scheduler has no workers yet: waiting for one")
                self.client.wait_for_workers(1, timeout=WAIT_FOR_WORKERS_S)
        info = self.client.run(warm_up, on_error="return")
        broken = sorted(addr for addr, r in info.items() if isinstance(r, BaseException))
        if broken:      # once, before any point: never the same failure point after point
            err = info[broken[0]]
            raise RuntimeError(f"{len(broken)} of {len(info)} Dask worker(s) cannot load Dataflow Explorer, the first "
                               f"at {broken[0]} ({type(err).__name__}: {err}); install it in that worker's environment "
                               f"(`pip install .` from a checkout, see docs/studies.md) and restart the worker")
        if self.cluster.address:
            self._probe_scheduler()
        missing = [addr for addr, i in info.items() if self.study.engine not in i["engines"]]
        if missing:
            errors = info[missing[0]]["load_errors"]
            raise RuntimeError(f"the worker at {missing[0]} has no engine {self.study.engine!r}"
                               + (f" ({errors})" if errors else ""))
        if self.cluster.local:
            self._pids += [i["pid"] for i in info.values()]
        else:
            self.on_log(f"{len(info)} worker(s): " + ", ".join(sorted({i['host'] for i in info.values()})))
        self._cancel_flag = DaskEvent(self._event_name, client=self.client)

    def _probe_scheduler(self) -> None:
        """One task through the scheduler before the points. Recent Dask schedulers unpickle every task,
        and a task names this project's function, so a scheduler without the project installed would
        fail every point alike; this says so once, naming the scheduler and what to install."""
        probe = self.client.submit(warm_up, pure=False)
        try:
            probe.result(timeout=WAIT_FOR_WORKERS_S)
        except Exception as exc:
            text = f"{type(exc).__name__}: {exc}"
            if "deserializ" in text.lower():
                raise RuntimeError(f"the Dask scheduler at {self.cluster.address} cannot read this project's tasks "
                                   f"({text.splitlines()[0].split('. ')[0][:120]}); install Dataflow Explorer in the scheduler's "
                                   f"environment too (`pip install .`, see docs/studies.md) and restart it") from None
            raise RuntimeError(f"a first test task failed on the cluster at {self.cluster.address}: {text[:300]}") from None

    def _stop(self) -> None:
        """Cancel what is left, close the client and a local cluster; no worker process survives."""
        client, cluster = self.client, self._cluster
        self.client = self._cluster = None
        if client is not None:
            futures = [f for _p, _a, f in self._pending.values()]
            self._pending.clear()
            try:
                if self._cancel_flag is not None and futures:
                    self._cancel_flag.set()         # running points stop (remote workers stay up)
                if futures:
                    client.cancel(futures, force=True)
            except Exception:
                pass
            try:
                client.close(timeout=5)
            except Exception:
                pass
        if cluster is not None:
            try:
                cluster.close(timeout=5)
            except Exception:
                pass
        self._reap()

    def _reap(self) -> None:
        """Kill any worker process a local cluster left (a point stuck outside Python, say)."""
        if not self._pids:
            return
        import psutil

        procs = []
        for pid in self._pids:
            try:
                procs.append(psutil.Process(pid))
            except psutil.NoSuchProcess:
                pass
        _gone, alive = psutil.wait_procs(procs, timeout=2)
        for p in alive:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(alive, timeout=2)
        self._pids = []

    # ------------------------------------------------------------ points
    def _submit(self, p: Point, attempt: int) -> Any:
        fut = self.client.submit(run_point, self.study.engine, p.request_json(), self.study.metrics, self._event_name,
                                 key=f"dfx-point-{p.index}-{p.key}-{self._run_id}-{attempt}", pure=False)
        self._pending[fut.key] = (p, attempt, fut)
        if attempt == 1:
            self.on_start(p)
        return fut

    def _slots(self) -> int:
        """How many points may be out at once: one per worker thread (checked every second, so
        workers that join a running study, as dask-jobqueue's do, get points too)."""
        now = time.monotonic()
        if now - self._slots_at > 1.0:
            self._slots_at = now
            try:
                self._slots_n = max(1, sum(self.client.nthreads().values()))
            except Exception:
                pass
        return self._slots_n

    def _run_points(self, todo: list[Point], writer: results_file.ResultsWriter,
                    by_index: dict[int, dict[str, Any]]) -> None:
        """Points go out one per worker thread, the next as one ends: a worker never holds a queued
        point, so a worker that dies takes only the point it was running (which is retried once),
        and Cancel has only the running points to stop."""
        from distributed import as_completed
        from distributed.scheduler import KilledWorker

        queue = list(reversed(todo))
        searcher = None
        if self.study.search is not None:       # the sampler picks the next point as a slot frees
            searcher = Searcher(self.study, self.study.search)
            searcher.seed_with([r for r in by_index.values() if r.get("status") == "finished"])
        self.searcher = searcher
        # with_results: each result is fetched in the client's own loop as its point ends, not by a
        # round trip from this thread afterwards
        self._ac = ac = as_completed([], loop=self.client.loop, with_results=True, raise_errors=False)

        def next_point() -> Point | None:
            if searcher is None:
                return queue.pop() if queue else None
            while (got := searcher.next_point()) is not None:
                p, known = got
                if known is None and self._from_cache(p, writer, by_index):
                    searcher.told(p, by_index[p.index])         # computed before: told, not run
                elif known is None:     # a point to run; otherwise it ended or is running: ask again
                    return p
            return None

        def top_up() -> None:
            while len(self._pending) < self._slots() and not self.cancelled:
                p = next_point()
                if p is None:
                    return
                ac.add(self._submit(p, 1))
        top_up()
        for fut, res in ac:
            entry = self._pending.pop(fut.key, None)
            if entry is None or self.cancelled:
                continue
            p, attempt, _f = entry
            if fut.status == "finished":
                if res.get("status") == "cancelled":
                    continue
                rec = self._record(p, res, attempt)
                if self.cache is not None:
                    self.cache.put(content_key(self.study.spec, p.request_json(), p.repeat), res)
            else:       # an error comes as (type, exception, traceback), a cancelled task as the exception
                exc = res[1] if isinstance(res, tuple) else res if isinstance(res, BaseException) else None
                died = isinstance(exc, KilledWorker) or fut.status == "cancelled"
                if died and attempt < MAX_ATTEMPTS:
                    self.on_log(f"point {p.index} ({p.describe()}): its worker died; running it again")
                    ac.add(self._submit(p, attempt + 1))
                    continue
                why = faults.killed_worker(attempt) if died else "the task failed" + (
                    f": {faults.describe(exc) or f'{type(exc).__name__}: {exc}'}" if exc is not None else "")
                rec = self._record(p, {"status": "failed", "error": why, "metrics": {}, "headline": {},
                                       "result": None, "duration_s": None, "worker": None}, attempt)
            if searcher is not None:
                searcher.told(p, rec)
            top_up()
            fut.release()
            by_index[p.index] = rec
            writer.write({k: v for k, v in rec.items() if k not in _FILE_ONLY
                          and not (k == "result" and not self.study.keep_results)})
            self.on_record(rec)

    def _from_cache(self, p: Point, writer: results_file.ResultsWriter, by_index: dict[int, dict[str, Any]]) -> bool:
        """Record a point from the cache of finished points, if it is there (True)."""
        if self.cache is None:
            return False
        hit = self.cache.get(content_key(self.study.spec, p.request_json(), p.repeat), self.study.spec,
                             self.study.metrics)
        if hit is None:
            return False
        rec = {**self._record(p, hit, 0), "cached": True}
        by_index[p.index] = rec
        writer.write({k: v for k, v in rec.items() if k not in _FILE_ONLY
                      and not (k == "result" and not self.study.keep_results)})
        self.on_record(rec)
        return True

    def _record(self, p: Point, out: dict[str, Any], attempt: int) -> dict[str, Any]:
        """A point's line of the results file: the point, and its RunOutcome's JSON form (run_point)
        with the error as the one line a user reads."""
        err = out.get("error")
        return {"type": "point", "key": p.key, "index": p.index, "params": p.params, "repeat": p.repeat,
                "status": out["status"], "metrics": out.get("metrics", {}),
                "error": RunError.from_json(err).text if isinstance(err, dict) else err,
                "run_error": err if isinstance(err, dict) else None,     # as the engine said it, field and all
                "duration_s": out.get("duration_s"), "attempts": attempt, "worker": out.get("worker"),
                "finished_at": now_iso(),
                "request": {**p.request_json(), "workload_name": p.workload_name, "target_name": p.target_name},
                "headline": out.get("headline", {}), "result": out.get("result"),
                "result_version": out.get("result_version"),
                "series": out.get("series", {}), "log": out.get("log", [])}


def setup_of_record(rec: dict[str, Any]) -> tuple[Snapshot | None, Snapshot | None, dict[str, Any]]:
    """A point's setup as a run of the project records it: workload and target snapshots (read from the
    record's JSON, the study's edge) and settings."""
    req = rec.get("request") or {}
    snaps = [None if req.get(name) is None else
             Snapshot.from_json(lib, {"id": "study", "name": str(req.get(f"{name}_name") or name), "value": req[name]})
             for name, lib in (("workload", "workloads"), ("target", "targets"))]
    return snaps[0], snaps[1], dict(req.get("settings") or {})


def outcome_of_record(rec: dict[str, Any], spec: Any) -> RunOutcome:
    """A point's record read back as the RunOutcome it was made from (its result through the engine's
    type; its error as the engine raised it, so a bad input still names its field)."""
    status = rec.get("status")
    error = None
    if status != "finished":
        error = rec.get("run_error") or {"kind": "other", "message": str(rec.get("error") or "failed")}
    return RunOutcome.from_json({"status": status, "result": rec.get("result"),
                                 "result_version": rec.get("result_version"), "error": error,
                                 "duration_s": rec.get("duration_s"), "series": rec.get("series") or {},
                                 "log": rec.get("log") or []}, spec)
