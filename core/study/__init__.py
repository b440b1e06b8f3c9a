"""Studies: parameter sweeps over any engine, run point by point on a Dask cluster.

A study file (JSON or YAML, docs/studies.md) names an engine, a base workload, target and settings,
axes over them, repeats and the metrics to collect. `spec` reads and checks it, `axes` expands it
into points, `point` runs one point in a worker process, `results_file` keeps what finished (so a
study resumes), and `runner` drives the points on a local or remote Dask cluster. Nothing here
imports Qt: the command line (`main.py study run`) and the GUI's Study panel share it.

There is deliberately no module named engine.py here: core.engine would take this package for an
engine.
"""
