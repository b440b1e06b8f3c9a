"""The command line: engine subcommands from the registry, session validation, and GUI options.

Every engine subcommand follows one convention: progress on stderr, the result on stdout
(`--json`: one JSON object), errors on stderr with exit code 2 (bad input), 1 (engine failure)
or 130 (interrupted).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import NoReturn

from core import __version__, faults
from core.engine import engines
from core.errors import InputError
from core.jobs import CancelToken, ProgressDisplay
from core.lifecycle import RunOutcome, record_run

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130
INT_LIMIT = 2 ** 63


class Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (`error: argument --time: ...`), exit 2, as every other
    bad input; the usage stays one `--help` away."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_BAD_INPUT, f"error: {_one_line(message)} (see {self.prog} --help)\n")


def finite_float(text: str) -> float:
    """A command-line number: finite (argparse's float takes 'nan', 'inf' and 1e400 -> inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text[:40]!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text[:40]!r}")
    return value


def machine_int(text: str) -> int:
    """A command-line integer that fits a C long (the engines hand them to numpy and C code)."""
    digits = text.strip().lstrip("+-")
    if not digits.isdigit() or not digits.isascii():
        raise argparse.ArgumentTypeError(f"expected an integer, got {text[:40]!r}")
    if len(digits) > 19 or not -INT_LIMIT <= int(text) < INT_LIMIT:
        shown = text if len(text) <= 24 else f"a number of {len(digits)} digits"
        raise argparse.ArgumentTypeError(f"{shown} is beyond the 64-bit integer range")
    return int(text)


def _checked_types(parser: argparse.ArgumentParser) -> None:
    """Every float option finite and every int option a machine integer, whatever the engine wrote:
    one place for the numbers of all command lines."""
    for action in parser._actions:
        if action.type is float:
            action.type = finite_float
        elif action.type is int:
            action.type = machine_int


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(       # the installed command's name, or main.py from a checkout
        prog="dataflow-explorer" if sys.argv[0].endswith("dataflow-explorer") else "main.py",
        description="Dataflow Explorer: map convolution workloads onto unusual accelerators. "
                    "Without a subcommand, starts the GUI.")
    parser.add_argument("--version", action="version", version=f"Dataflow Explorer {__version__}")
    parser.add_argument("--open", metavar="FILE.dfx", help="open this session in the GUI")
    parser.add_argument("--screenshot", metavar="FILE.png",
                        help="render the window offscreen to an image and exit")
    parser.add_argument("--tab", metavar="NAME", help="engine tab to show (with the GUI or --screenshot)")
    parser.add_argument("--show", metavar="RUN[:KEY=N]", help="show this run of the session in its tab (GUI); "
                        "r2:step=8 shows the stepper at instruction 8, r1:program=0 Cain's first program")
    parser.add_argument("--compare", metavar="RUN,RUN", help="open the comparison of these runs (GUI)")
    parser.add_argument("--size", metavar="WxH", help="window size, e.g. 1600x1000 (GUI, --screenshot)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    session = sub.add_parser("session", help="work with session files")
    ssub = session.add_subparsers(dest="session_command", metavar="ACTION", required=True)
    validate = ssub.add_parser("validate", help="check a session file (exit 0 valid, 2 invalid)")
    validate.add_argument("file")
    validate.add_argument("--json", action="store_true", help="print one JSON object")
    from core.study.cli import add_parser as add_study_parser

    add_study_parser(sub)
    from core.comparison_cli import add_parser as add_targets_parser

    add_targets_parser(sub)

    from core.engine import LOAD_ERRORS

    for pkg, reason in LOAD_ERRORS.items():
        print(f"warning: engine core.{pkg} could not be loaded: {reason}", file=sys.stderr)
    for spec in engines().values():
        p = sub.add_parser(spec.name, help=spec.title, description=spec.summary)
        spec.add_cli_arguments(p)
        _checked_types(p)
        p.add_argument("--json", action="store_true", help="print the result as one JSON object")
        p.add_argument("--quiet", action="store_true", help="no progress display on stderr")
    return parser


def _fail(message: str, code: int, as_json: bool) -> int:
    print(f"error: {_one_line(message)}", file=sys.stderr)
    return code


def _validate_session(args: argparse.Namespace) -> int:
    from core import session

    try:        # checked as load checks it, a large file's runs in parallel (session.check_file)
        p = session.check_file(args.file)
    except InputError as exc:
        if args.json:
            print(json.dumps({"valid": False, "error": exc.message, "where": exc.where}))
        return _fail(str(exc), EXIT_BAD_INPUT, args.json)
    runs = p.runs
    info = {"valid": True, "workloads": p.workloads, "targets": p.targets, "runs": runs,
            "engines": p.engines}
    print(json.dumps(info) if args.json else
          f"{args.file}: valid ({p.workloads} workload(s), {p.targets} target(s), "
          f"{sum(runs.values())} run(s){': ' if runs else ''}{', '.join(f'{n} {s}' for s, n in runs.items())})")
    return 0


def run_engine_command(args: argparse.Namespace) -> int:
    spec = engines()[args.command]
    try:
        request = spec.request_from_cli(args)
    except InputError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT, args.json)
    display = ProgressDisplay(sys.stderr, quiet=getattr(args, "quiet", False))
    token = CancelToken()
    try:
        outcome = record_run(spec, request, token, display)
    except KeyboardInterrupt:
        token.cancel()
        outcome = RunOutcome.cancelled()
    display.finish()
    if outcome.status == "cancelled":
        return _fail("interrupted", EXIT_INTERRUPTED, args.json)
    if outcome.error is not None:
        err = outcome.error
        if err.kind == "input":
            return _fail(err.text, EXIT_BAD_INPUT, args.json)
        if err.kind == "machine":       # the machine's fault, in words: the sentence alone, exit 1
            return _fail(f"{spec.name}: {err.text}", faults.EXIT_MACHINE, args.json)
        if err.detail:
            print(err.detail, file=sys.stderr)
        return _fail(f"{spec.name}: {err.text}" if err.kind == "check" else f"{spec.name} failed: {err.text}", 1,
                     args.json)
    assert outcome.result is not None           # a finished run has its typed result
    print(json.dumps(outcome.result.to_json()) if args.json else spec.format_text(outcome.result))
    return 0


def dispatch(args: argparse.Namespace) -> int | None:
    """Run a subcommand and return its exit code, or None when the GUI is wanted. Ctrl-C at any
    point is one line and exit 130 (a running job is cancelled by run_foreground first)."""
    try:
        if args.command == "session":
            return _validate_session(args)
        if args.command == "study":
            from core.study.cli import run_command

            return run_command(args)
        if args.command == "targets":
            from core.comparison_cli import run_command as run_targets

            return run_targets(args)
        if args.command is not None:
            return run_engine_command(args)
    except KeyboardInterrupt:
        return interrupted()
    except (faults.MachineFault, MemoryError, OSError) as exc:
        text = faults.describe(exc, f"running {args.command}")     # outside a run: still one line, exit 1
        if text is None:
            raise
        return _fail(text, faults.EXIT_MACHINE, False)
    return None


def interrupted() -> int:
    """Ctrl-C: one line, exit 130 (also for the entry point, while the app is still loading)."""
    return _fail("interrupted", EXIT_INTERRUPTED, False)
