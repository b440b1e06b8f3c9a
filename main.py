"""Dataflow Explorer: `python main.py` starts the GUI, `python main.py --help` lists subcommands
(the same as the installed `dataflow-explorer` command; gui/launch.py)."""

from __future__ import annotations

import sys

from gui.launch import main

if __name__ == "__main__":
    sys.exit(main())
