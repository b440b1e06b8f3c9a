"""Study points cached by content, so nothing is computed twice: a re-run, a resumed run, a search
proposing a point again or another study containing the same point (in the window too) reuses the
finished record instead of running the engine.

The key is the content of the run: the engine, its result type's version, the app's version and a
hash of the engines' code (other code may compute something else), and the point's request (workload, target and settings as
JSON, canonical) with its repeat. A study's point key (core.study.axes) names the point within
studies; this key also changes when the code does. Only finished points are kept (a failed one runs
again), with their typed result's JSON, so another study asking other metrics of the same point
reads them from it. Files are written atomically, one per point, under core.paths.cache_dir();
an unreadable one is a miss, never an error.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from core import __version__
from core.atomic import atomic_write_text
from core.engine import EngineSpec
from core.paths import cache_dir
from core.study.metrics import StudyMetric, extract

MAX_ENTRY_BYTES = 8 * 2 ** 20        # a bigger record is not cached (it is in the results file anyway)
KEPT = ("status", "metrics", "error", "duration_s", "worker", "headline", "result", "result_version")


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the engines' code (every .py and .c file of core/ and sims/): a point computed by
    other code is another point, whether or not anyone bumped a version number."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for package in ("core", "sims"):
        for path in sorted((root / package).rglob("*")):
            if path.suffix in (".py", ".c") and path.is_file():
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
    return h.hexdigest()[:16]


def content_key(spec: EngineSpec, request: dict[str, Any], repeat: int) -> str:
    doc = {"engine": spec.name, "result_version": spec.result_type.VERSION, "app": __version__,
           "code": code_fingerprint(), "request": request, "repeat": repeat}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class PointCache:
    """Finished points by content key; `root` None: the user's cache folder (read when used)."""

    def __init__(self, root: Path | None = None) -> None:
        self._root = root

    @property
    def root(self) -> Path:
        return self._root or cache_dir() / "points"

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str, spec: EngineSpec, metrics: list[StudyMetric]) -> dict[str, Any] | None:
        """The cached outcome of a point, its metrics read for this study; None on a miss."""
        try:
            path = self._path(key)
            if not path.is_file() or path.stat().st_size > MAX_ENTRY_BYTES:
                return None
            rec = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(rec, dict) or rec.get("status") != "finished" or not isinstance(rec.get("result"), dict):
                return None
            names = [m.name for m in metrics]
            if list((rec.get("metrics") or {})) != names:        # another study's metrics: read ours
                result = spec.result_type.from_json(rec["result"], rec.get("result_version"), "cached result")
                rec["metrics"] = extract(result, metrics)
            return rec
        except Exception:       # a torn, foreign or outdated file: run the point
            return None

    def put(self, key: str, outcome: dict[str, Any]) -> None:
        if outcome.get("status") != "finished" or not isinstance(outcome.get("result"), dict):
            return
        text = json.dumps({k: outcome.get(k) for k in KEPT}, separators=(",", ":"))
        if len(text) > MAX_ENTRY_BYTES:
            return
        try:
            path = self._path(key)
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, text)
        except OSError:         # a full or read-only cache never fails a study
            pass
