"""The program's entry point: `dataflow-explorer` (installed) and `python main.py` (a checkout).

With a subcommand it is the command line and never loads Qt (a cluster node needs no display);
without one it starts the window."""

from __future__ import annotations

import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    try:        # Ctrl-C while the app loads ends as it does later: one line, exit 130
        from core.cli import build_parser, dispatch

        args = build_parser().parse_args(argv)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    code = dispatch(args)
    if code is not None:
        return code
    from core import faults

    problem = None if args.screenshot else faults.display_problem()
    if problem is not None:     # Qt would abort the process (exit 134) with no word about what to do
        print(f"error: {problem}", file=sys.stderr)
        return faults.EXIT_MACHINE
    from gui.app import run_gui  # Qt is loaded only when the GUI is wanted

    return run_gui(open_path=args.open, screenshot=args.screenshot, tab=args.tab, compare=args.compare, show=args.show,
                   size=args.size)
