"""Packaging details pyproject.toml cannot express: `assets/` ships as the package
`dataflow_explorer_assets` (example session, programs, studies, sample image, the digits CNN), which
core/paths.py finds when the app is not run from a checkout. Everything else is in pyproject.toml."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["core", "core.*", "sims", "sims.*", "gui", "gui.*"]) + ["dataflow_explorer_assets"],
    package_dir={"dataflow_explorer_assets": "assets"},
    package_data={"": ["*.c", "csrc/*.c"], "dataflow_explorer_assets": ["*.dfx", "*.npz", "*.png", "programs/*", "studies/*"]},
    exclude_package_data={"dataflow_explorer_assets": ["screenshot*.png"]},   # the README's, not the app's
)
