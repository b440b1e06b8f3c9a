"""`--cluster slurm[:JOBS]` (and pbs) through dask-jobqueue, against a fake batch system: `sbatch`
starts the job script on this machine in a process group of its own and says "Submitted batch job
<id>", `scancel` ends that group, `squeue` knows nothing. That is the part dask-jobqueue needs of a
real SLURM (its own tests fake it the same way), so the study's "cluster" section, the job script
and the scheduler-to-worker path are tested as a user would run them, without a cluster."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from core.errors import InputError
from core.study import spec
from core.study.runner import StudyRunner, parse_cluster

pytestmark = pytest.mark.slow          # a fake batch system running Dask workers

pytest.importorskip("dask_jobqueue")
ROOT = Path(__file__).resolve().parents[1]
STUDY = {"name": "bound on a batch system", "engine": "bound",
         "workload": {"kind": "conv_layers", "layers": ["Ci=4,Hi=8,Wi=8,Co=4,Hk=3"]},
         "target": {"kind": "dataflow", "memory_bytes": 65536, "word_bits": 16, "pe_rows": 16, "pe_cols": 16},
         "settings": {"sweep": False}, "axes": [{"param": "target.memory_bytes", "values": [4096, 8192]}],
         "metrics": ["optimal_traffic"]}


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch) -> Path:
    bin_dir, jobs = tmp_path / "bin", tmp_path / "jobs"
    bin_dir.mkdir()
    jobs.mkdir()
    (bin_dir / "sbatch").write_text(f"""#!/bin/bash
# the job file is removed once submitted: run a copy, in a process group of its own
copy={jobs}/job-$$.sh
cp "${{@: -1}}" "$copy"
setsid bash "$copy" > "$copy.log" 2>&1 < /dev/null &
echo $! > "$copy.pid"
echo "Submitted batch job $!"
""")
    (bin_dir / "scancel").write_text("""#!/bin/bash
for id in "$@"; do kill -TERM -- "-$id" 2>/dev/null || kill -TERM "$id" 2>/dev/null; done
exit 0
""")
    (bin_dir / "squeue").write_text("#!/bin/bash\nexit 0\n")
    for f in bin_dir.iterdir():
        f.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return jobs


def _alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
        return True
    except OSError:
        return False


def test_a_study_runs_on_slurm_jobs_and_leaves_none(fake_slurm, tmp_path):
    doc = {**STUDY, "cluster": {"cores": 1, "memory": "1GB", "walltime": "00:10:00", "queue": "compute",
                                "python": sys.executable, "host": "127.0.0.1", "prologue": [f"cd {ROOT}"],
                                "wait_s": 120}}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    study = spec.load(path)
    logs: list[str] = []
    summary = StudyRunner(study, "slurm:1", on_log=logs.append).run()
    assert summary.error is None, (summary.error, logs)
    assert [r["status"] for r in summary.records] == ["finished", "finished"]
    scripts = sorted(fake_slurm.glob("job-*.sh"))
    assert len(scripts) == 1                                         # slurm:1 = one job
    text = scripts[0].read_text()
    assert "#SBATCH -p compute" in text and f"cd {ROOT}" in text and "DAEMON=False" in text
    pid = int(scripts[0].with_suffix(".sh.pid").read_text())
    for _ in range(100):                                             # scancel ended the job's group
        if not _alive(pid):
            break
        time.sleep(0.1)
    assert not _alive(pid)


def test_the_cluster_section_and_flag_are_checked():
    assert str(parse_cluster("slurm")) == "slurm:1" and parse_cluster("pbs:12").workers == 12
    with pytest.raises(InputError) as exc:
        parse_cluster("slurm:lots")
    assert exc.value.where == "--cluster"
    for section, where in (({"cores": 0}, "study.cluster.cores"), ({"queues": "x"}, "study.cluster.queues"),
                           ({"prologue": "cd x"}, "study.cluster.prologue"), ({"memory": 64}, "study.cluster.memory")):
        with pytest.raises(InputError) as exc:
            spec.from_json({**STUDY, "cluster": section})
        assert exc.value.where == where, section
