"""Where the app's shipped files and its compiled libraries live, in a checkout and when installed.

A checkout (`make run`, `make test`) keeps `assets/` beside the packages and compiles into `build/`.
`pip install .` ships the same files as the package `dataflow_explorer_assets` (pyproject.toml maps
`assets/` to it), and site-packages may not be writable, so compiled libraries then go to the user's
cache folder. One home for both answers, so no module guesses from its own file's depth.
"""

from __future__ import annotations

import os
from pathlib import Path

from core import __version__

ROOT = Path(__file__).resolve().parents[1]
IN_CHECKOUT = (ROOT / "pyproject.toml").is_file() and (ROOT / "assets").is_dir()


def _assets() -> Path:
    if IN_CHECKOUT:
        return ROOT / "assets"
    import importlib.util

    spec = importlib.util.find_spec("dataflow_explorer_assets")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else ROOT / "assets"


def _build() -> Path:
    override = os.environ.get("DATAFLOW_EXPLORER_BUILD")
    if override:
        return Path(override)
    if IN_CHECKOUT:
        return ROOT / "build"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "dataflow-explorer" / __version__


def cache_dir() -> Path:
    """The user's cache folder for this app (results worth keeping between runs, e.g. study points):
    $DATAFLOW_EXPLORER_CACHE, else $XDG_CACHE_HOME/dataflow-explorer, else ~/.cache/dataflow-explorer.
    Read at each call, so a test (or a user) can point it elsewhere."""
    override = os.environ.get("DATAFLOW_EXPLORER_CACHE")
    if override:
        return Path(override)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dataflow-explorer"


ASSETS = _assets()          # example session, programs, studies, sample image, the digits CNN
BUILD = _build()            # compiled C libraries (Cain's search and prover), keyed by source hash


def asset_path(text: str) -> Path:
    """A path a user or a setting gave as `assets/...` (as the docs write them), wherever the assets are."""
    p = Path(text)
    if not p.is_absolute() and not p.exists() and p.parts[:1] == ("assets",):
        return ASSETS.joinpath(*p.parts[1:])
    return p
