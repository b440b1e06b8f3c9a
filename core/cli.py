"""The command line: engine subcommands from the registry, session validation, and GUI options.

Every engine subcommand follows one convention: progress on stderr, the result on stdout
(`--json`: one JSON object), errors on stderr with exit code 2 (bad input), 1 (engine failure)
or 130 (interrupted).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback

from core import __version__
from core.engine import engines
from core.errors import CheckFailed, InputError
from core.jobs import CancelToken, run_foreground

EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="main.py",
        description="Dataflow Explorer: map convolution workloads onto unusual accelerators. "
                    "Without a subcommand, starts the GUI.")
    parser.add_argument("--version", action="version", version=f"Dataflow Explorer {__version__}")
    parser.add_argument("--open", metavar="FILE.dfx", help="open this session in the GUI")
    parser.add_argument("--screenshot", metavar="FILE.png",
                        help="render the window offscreen to an image and exit")
    parser.add_argument("--tab", metavar="NAME", help="engine tab to show (with the GUI or --screenshot)")
    parser.add_argument("--show", metavar="RUN", help="show this run of the session in its tab (GUI)")
    parser.add_argument("--compare", metavar="RUN,RUN", help="open the comparison of these runs (GUI)")
    parser.add_argument("--size", metavar="WxH", help="window size, e.g. 1600x1000 (GUI, --screenshot)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    session = sub.add_parser("session", help="work with session files")
    ssub = session.add_subparsers(dest="session_command", metavar="ACTION", required=True)
    validate = ssub.add_parser("validate", help="check a session file (exit 0 valid, 2 invalid)")
    validate.add_argument("file")
    validate.add_argument("--json", action="store_true", help="print one JSON object")

    from core.engine import LOAD_ERRORS

    for pkg, reason in LOAD_ERRORS.items():
        print(f"warning: engine core.{pkg} could not be loaded: {reason}", file=sys.stderr)
    for spec in engines().values():
        p = sub.add_parser(spec.name, help=spec.title, description=spec.summary)
        spec.add_cli_arguments(p)
        p.add_argument("--json", action="store_true", help="print the result as one JSON object")
        p.add_argument("--quiet", action="store_true", help="no progress display on stderr")
    return parser


def _fail(message: str, code: int, as_json: bool) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def _validate_session(args: argparse.Namespace) -> int:
    from core import session

    try:
        p = session.load(args.file)
    except InputError as exc:
        if args.json:
            print(json.dumps({"valid": False, "error": exc.message, "where": exc.where}))
        return _fail(str(exc), EXIT_BAD_INPUT, args.json)
    runs: dict[str, int] = {}
    for r in p.runs:
        runs[r.status] = runs.get(r.status, 0) + 1
    info = {"valid": True, "workloads": len(p.workloads), "targets": len(p.targets), "runs": runs,
            "engines": sorted(p.engines)}
    print(json.dumps(info) if args.json else
          f"{args.file}: valid ({len(p.workloads)} workload(s), {len(p.targets)} target(s), "
          f"{len(p.runs)} run(s){': ' if runs else ''}{', '.join(f'{n} {s}' for s, n in runs.items())})")
    return 0


def run_engine_command(args: argparse.Namespace) -> int:
    spec = engines()[args.command]
    try:
        request = spec.request_from_cli(args)
    except InputError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT, args.json)
    outcome = run_foreground(spec.run(request, CancelToken()), quiet=getattr(args, "quiet", False))
    if outcome.cancelled:
        return _fail("interrupted", 130, args.json)
    if isinstance(outcome.error, InputError):
        return _fail(str(outcome.error), EXIT_BAD_INPUT, args.json)
    if isinstance(outcome.error, CheckFailed):
        return _fail(f"{spec.name}: {outcome.error}", 1, args.json)
    if outcome.error is not None:
        traceback.print_exception(outcome.error, file=sys.stderr)
        return _fail(f"{spec.name} failed: {type(outcome.error).__name__}: {outcome.error}", 1, args.json)
    if outcome.result is None:
        return _fail(f"{spec.name} finished without a result", 1, args.json)
    print(json.dumps(outcome.result) if args.json else spec.format_text(outcome.result))
    return 0


def dispatch(args: argparse.Namespace) -> int | None:
    """Run a subcommand and return its exit code, or None when the GUI is wanted."""
    if args.command == "session":
        return _validate_session(args)
    if args.command is not None:
        return run_engine_command(args)
    return None
