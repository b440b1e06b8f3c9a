"""The project as a user installs it (`pip install .`) and runs it on a Dask cluster they started
themselves, exactly as docs/studies.md says: separate `dask scheduler` / `dask worker` processes,
started from a folder other than the project's, in an environment where the project was installed,
with no PYTHONPATH. A node without the project fails the study at once, naming the node.

The environment is a fresh venv whose only view of the development environment is a .pth file for
the dependencies (so nothing is downloaded), and the project is built from a copy of the tracked
files with pip, offline (`--no-build-isolation`: setuptools and wheel come from requirements-test.txt)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow          # pip install and a real Dask cluster

ROOT = Path(__file__).resolve().parents[1]
STUDY = {"format": "dataflow-explorer-study", "version": 1, "name": "two LeNet-5 points", "engine": "bound",
         "workload": {"kind": "cnn", "network": "lenet5"},
         "target": {"kind": "dataflow", "memory_bytes": 65536, "word_bits": 16, "pe_rows": 16, "pe_cols": 16},
         "settings": {"sweep": False}, "axes": [{"param": "target.memory_bytes", "values": [65536, 131072]}],
         "metrics": ["optimal_traffic"]}


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(extra)
    return env


def _tracked_copy(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split("\n")
    for name in filter(None, files):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A venv with the project pip-installed (not a checkout on the path): its python."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout to copy the tracked files from")
    base = tmp_path_factory.mktemp("install")
    src, env_dir = base / "src", base / "env"
    _tracked_copy(src)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "dev-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    out = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                          "--no-index", str(src)], capture_output=True, text=True, env=_clean_env(), timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return python


def test_pip_install_gives_a_working_command_outside_the_project(installed, tmp_path):
    exe = installed.parent / "dataflow-explorer"
    out = subprocess.run([str(exe), "bound", "--layer", "Ci=4,Hi=8,Wi=8,Co=4,Hk=3", "--no-sweep", "--json"],
                         cwd=tmp_path, capture_output=True, text=True, env=_clean_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["engine"] == "bound"
    # the shipped assets come with it: the simulator's default program is one of them
    out = subprocess.run([str(exe), "simulate", "--program", "assets/programs/analognet2_cain_table2.txt", "--quiet"],
                         cwd=tmp_path, capture_output=True, text=True, env=_clean_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    where = subprocess.run([str(installed), "-c", "import core, core.paths as p; print(core.__file__, p.ASSETS)"],
                           cwd=tmp_path, capture_output=True, text=True, env=_clean_env(), check=True).stdout
    assert str(ROOT) not in where                      # the installed copy, not this checkout


class Cluster:
    """`dask scheduler` and `dask worker` as separate processes (python -m of the same modules)."""

    def __init__(self, folder: Path, scheduler_python: Path, worker_python: Path) -> None:
        self.folder, self.procs = folder, []
        file = folder / "scheduler.json"
        self._start(scheduler_python, "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                    "--scheduler-file", str(file), "--dashboard-address", "127.0.0.1:0")
        for _ in range(300):
            if file.is_file() and file.stat().st_size:
                break
            time.sleep(0.1)
        self.address = json.loads(file.read_text())["address"]
        self._start(worker_python, "distributed.cli.dask_worker", "--scheduler-file", str(file), "--nworkers", "1",
                    "--nthreads", "1", "--dashboard-address", "127.0.0.1:0")

    def _start(self, python: Path, module: str, *args: str) -> None:
        self.procs.append(subprocess.Popen([str(python), "-m", module, *args], cwd=self.folder, env=_clean_env(),
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def stop(self) -> None:
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def _run_study(installed: Path, folder: Path, address: str) -> subprocess.CompletedProcess[str]:
    study = folder / "study.json"
    study.write_text(json.dumps(STUDY))
    return subprocess.run([str(installed.parent / "dataflow-explorer"), "study", "run", str(study), "--cluster", address,
                           "--out", str(folder / "out.jsonl"), "--json"], cwd=folder, capture_output=True, text=True,
                          env=_clean_env(), timeout=240)


def test_a_study_runs_on_a_cluster_started_as_the_docs_say(installed, tmp_path):
    cluster = Cluster(tmp_path, installed, installed)
    try:
        out = _run_study(installed, tmp_path, cluster.address)
    finally:
        cluster.stop()
    assert out.returncode == 0, out.stderr
    points = json.loads(out.stdout)["points"]
    assert [p["status"] for p in points] == ["finished", "finished"]


@pytest.mark.parametrize("missing", ["worker", "scheduler"])
def test_a_node_without_the_project_fails_at_once_naming_it(installed, tmp_path, missing):
    """The development environment's python has the dependencies but not the project (no PYTHONPATH,
    another folder): a worker or scheduler started with it cannot load our code."""
    bare = Path(sys.executable)
    cluster = Cluster(tmp_path, bare if missing == "scheduler" else installed,
                      bare if missing == "worker" else installed)
    try:
        out = _run_study(installed, tmp_path, cluster.address)
    finally:
        cluster.stop()
    assert out.returncode == 1
    assert f"Dask {missing}" in out.stderr and "install" in out.stderr and cluster.address.split(":")[0] in out.stderr
    assert out.stderr.count("\n") < 12                  # one clear error, not one per point
