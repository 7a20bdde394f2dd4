"""``benchcast verify``: does this results folder reproduce ours? (:mod:`benchcast.verify`)

::

    benchcast verify results                          # the expected run detected from results/index.md
    benchcast verify results --against tour           # a partial run (no index.md yet): say which
    benchcast verify results --rounding 1e-9 --report verify.md

One line per study (PASS, PARTIAL or FAIL, the counts and the first reason), a note when this
machine's BLAS kernels are not the expected run's (:mod:`benchcast.verify.check`), then one overall line;
``--report`` writes every mismatch and missing file as Markdown.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchcast.data.io import write_text_atomic
from benchcast.errors import DataError


def _rtol(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a relative tolerance in (0, 1), e.g. 1e-9; got {text!r}")
    return value


def add_parser(sub) -> None:
    from benchcast.verify.report import EXIT_HELP

    p = sub.add_parser(
        "verify",
        help="check that a results folder reproduces ours, study by study (an artifact evaluator's check)",
        description=(
            "Compare a results folder with the expected outputs of the config that made it "
            "(resources/expected/<run>/): each paper claim's number within the study's tolerance of ours and "
            "its verdict ours; every deterministic output's bytes ours. On a machine whose BLAS kernels are not the "
            "expected run's, an output whose bytes differed under other kernels when we made the run is not "
            "compared (a note line says so and how many)."
        ),
        epilog=EXIT_HELP,
    )
    p.add_argument("results", type=Path, help="the results folder of a run (e.g. results)")
    p.add_argument(
        "--against",
        metavar="RUN",
        help="the expected run: a name under resources/expected/ (tour, all_papers) or a folder; "
        "default: the run whose index.md is the folder's",
    )
    p.add_argument(
        "--rounding",
        type=_rtol,
        metavar="RTOL",
        help="a CSV/Parquet whose bytes differ counts as equal to rounding (reported apart) when its "
        "non-numeric cells are equal and its numbers within RTOL (relative), as another machine's BLAS "
        "may round; default: strict bytes, or on other BLAS kernels than the expected run's 1e-9 for the "
        "outputs whose bytes did not differ under the kernels we ran",
    )
    p.add_argument("--report", type=Path, metavar="FILE", help="also write the full report as Markdown here")


def run(args) -> int:
    from benchcast.verify.check import verify
    from benchcast.verify.expected import check_results_folder, resolve_against
    from benchcast.verify.report import exit_code, markdown, summary_lines

    check_results_folder(args.results)
    if args.report is not None and args.report.is_dir():
        raise DataError(args.report, "--report", "is a folder", "give a file name, e.g. --report verify.md")
    expected, chosen = resolve_against(args.against, args.results)
    result = verify(args.results, expected, chosen, args.rounding)
    print("\n".join(summary_lines(result)))
    if args.report is not None:
        write_text_atomic(args.report, markdown(result))
        print(f"report: {args.report}")
    return exit_code(result)
