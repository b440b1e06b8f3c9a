"""What several study tests share: a small Cain study, and a Dask cluster on loopback."""

from __future__ import annotations

import logging
from typing import Any, Iterator

CAIN_STUDY: dict[str, Any] = {
    "name": "test", "engine": "cain",
    "workload": {"generate": "random_kernels", "count": 1, "seed": 1},
    "target": {"kind": "scamp5", "registers": 6},
    # a node budget, not a time budget: the same programs however fast or loaded the machine (time_s only guards)
    "settings": {"time_s": 120.0, "max_nodes": 1000, "workers": 1, "seed_share": 0.0},
    "axes": [{"param": "workload.seed", "values": [1, 2]}, {"param": "settings.mode", "values": ["cain", "auke"]}],
    "metrics": ["length", "nodes_explored", {"name": "kernels", "path": "kernel_names[0]"}],
}


def loopback_cluster(n_workers: int) -> Iterator[str]:
    """A fixture's body (`yield from`): a cluster of worker processes on loopback, as `dask scheduler`
    + `dask worker` would give (a dead worker's task is failed at once, as the runner's own local
    clusters do); yields the scheduler's address, closes the cluster after."""
    import dask
    from distributed import LocalCluster

    with dask.config.set({"distributed.scheduler.allowed-failures": 0, "distributed.worker.daemon": False}):
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=None, silence_logs=logging.CRITICAL,
                               scheduler_kwargs={"dashboard_address": "127.0.0.1:0"})
    yield cluster.scheduler_address
    cluster.close()
