"""The ``benchcast`` command line: one module per subcommand (``benchcast.cli.<command>``)."""

from __future__ import annotations

import argparse
import os
import sys

from benchcast import __version__
from benchcast.cli import (
    benchmarks,
    check_method,
    compare,
    complete,
    datasets,
    estimate,
    fetch,
    leaderboard,
    methods,
    plan,
    select,
    verify,
)
from benchcast.cli.common import resolve_data_dir
from benchcast.errors import BenchcastError
from benchcast.new_model.interrupts import ended_by, imports_held, terminate_as_interrupt

__all__ = ["COMMANDS", "build_parser", "main"]

#: subcommand -> its module (``add_parser(sub)``, ``run(args)``), in the order ``--help`` lists them
COMMANDS = {
    "select": select,
    "estimate": estimate,
    "compare": compare,
    "plan": plan,
    "complete": complete,
    "leaderboard": leaderboard,
    "datasets": datasets,
    "fetch": fetch,
    "methods": methods,
    "check-method": check_method,
    "benchmarks": benchmarks,
    "verify": verify,
}

DESCRIPTION = (
    "Estimate a model's full-benchmark score from a few of its results. Datasets and fits live in one "
    "folder (--data-dir): the workflow's results folder in a clone that ran it, else a per-user cache "
    "that benchcast fetch fills."
)

EPILOG = (
    "Run benchcast COMMAND --help for a command's options. Without a command, benchcast prints this help.\n"
    "First steps: benchcast datasets, benchcast fetch DATASET, benchcast methods; a new model: docs/new-model.md."
)


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser: every subcommand's options and help."""
    parser = argparse.ArgumentParser(
        prog="benchcast", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"benchcast {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMANDS.values():
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # bare `benchcast`: the help, as a request for it (exit 0), not an error
        parser.print_help()
        return 0
    resolve_data_dir(args)
    try:
        # SIGTERM (a scheduler, `timeout`, `kill`) ends it as Ctrl-C does, at any moment
        with terminate_as_interrupt(), imports_held():
            return COMMANDS[args.command].run(args)
    except BenchcastError as exc:
        return _fail(str(exc))
    except BrokenPipeError:  # the reader closed the pipe (`benchcast methods | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: every file is written through a temporary name,
        # removed on the way out, and the processes the command started are stopped
        line, status = ended_by(exc)
        print(line, file=sys.stderr)
        return status
    except OSError as exc:  # the system refused a read or a write (permissions, a full disk, ...)
        return _fail(f"{exc.filename}: {exc.strerror or exc}" if exc.filename else str(exc))
    except Exception as exc:  # a bug: one line, and the traceback on request
        if os.environ.get("BENCHCAST_TRACEBACK"):
            raise
        print(
            f"benchcast: internal error: {type(exc).__name__}: {exc}. This is a bug of benchcast: please report "
            "it with the command (BENCHCAST_TRACEBACK=1 prints the traceback)",
            file=sys.stderr,
        )
        return 1


def _fail(message: str) -> int:
    print(f"benchcast: error: {' '.join(message.split())}", file=sys.stderr)  # one line
    return 2
