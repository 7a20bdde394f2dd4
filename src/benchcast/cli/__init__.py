"""The ``benchcast`` command line: one module per subcommand (``benchcast.cli.<command>``)."""

from __future__ import annotations

import argparse
import os
import sys

from benchcast import __version__
from benchcast.cli import benchmarks, complete, datasets, estimate, leaderboard, methods, plan, select
from benchcast.errors import BenchcastError

__all__ = ["COMMANDS", "main"]

#: subcommand -> its module (``add_parser(sub)``, ``run(args)``), in the order ``--help`` lists them
COMMANDS = {
    "select": select,
    "estimate": estimate,
    "plan": plan,
    "complete": complete,
    "leaderboard": leaderboard,
    "datasets": datasets,
    "methods": methods,
    "benchmarks": benchmarks,
}

DESCRIPTION = (
    "Estimate a model's full-benchmark score from a few of its results. Every subcommand reads the "
    "workflow's results folder (--data-dir, default results)."
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="benchcast", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"benchcast {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in COMMANDS.values():
        module.add_parser(sub)
    args = parser.parse_args(argv)
    try:
        return COMMANDS[args.command].run(args)
    except BenchcastError as exc:
        print(f"benchcast: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader closed the pipe (`benchcast methods | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
