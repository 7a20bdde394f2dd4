"""``benchcast check-method NAME``: the method contract's invariants on a method, one line each
(:mod:`benchcast.methods.conformance`): what to run on your own method before it meets the papers'
protocols. Exit 0 when every check passes, 1 otherwise.

::

    benchcast check-method example_random_sampling
"""

from __future__ import annotations

import argparse
import sys

from benchcast.cli.common import json_params


def add_parser(sub) -> None:
    c = sub.add_parser(
        "check-method",
        help="check a method (yours, from its package, or a built-in one) against the method contract: the "
        "budget, seeding, the stored fit, its estimates, item groups",
    )
    c.add_argument("method", help="the method's name (benchcast methods lists them)")
    c.add_argument("--params", help="the method's settings as JSON (default: its defaults)")
    c.add_argument("--budget", type=int, help="the budget to check at (default: 20, or the method's smallest)")
    c.add_argument("--seed", type=int, default=0, help="seed of the test leaderboard and the method (default 0)")


def run(args: argparse.Namespace) -> int:
    from benchcast.methods.conformance import check_method

    checks = check_method(args.method, json_params(args.params), args.budget, args.seed)
    for check in checks:
        print(check.line())
    failed = [c.name for c in checks if not c.passed]
    if failed:
        print(f"{args.method}: {len(failed)} of {len(checks)} checks failed ({', '.join(failed)})", file=sys.stderr)
        return 1
    print(f"{args.method}: all {len(checks)} checks passed", file=sys.stderr)
    return 0
