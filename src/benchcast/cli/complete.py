"""``benchcast complete``: BenchPress predictions for a new model's other benchmarks.

::

    benchcast complete my_model.csv                       # CSV: benchmark_id,score
    benchcast complete my_model.json --out preds.csv      # JSON: {"gpqa_diamond": 71.2, ...}
                                                          #   or [{"benchmark_id": ..., "score": ...}]

Reads the ingested BenchPress matrix (``<data-dir>/data/benchpress``, or ``--data``) and the
reliability model the workflow built (``<data-dir>/models/benchpress/reliability.json``, or
``--reliability``), predicts every benchmark the model has no score for with the default predictor
(Logit Bias ALS, rank 2, lambda 0.1) and writes a CSV (``benchmark_id, name, category, known,
score, lower, upper, trust_probability``) and a readable table. Bad input (unknown benchmark ids,
duplicate entries, scores outside the benchmark's range, non-numbers) stops with a message naming
the file, the entry and the fix.
"""

from __future__ import annotations

import argparse
import difflib
import math
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.cli.common import add_data_dir, add_out, check_out, positive_int, write_csv
from benchcast.data.score_entries import read_score_entries
from benchcast.errors import DataError

__all__ = ["add_parser", "read_known_scores", "run", "validate_known_scores"]


def data_folder(args) -> Path:
    """The ingested BenchPress tables: ``--data``, else ``<data-dir>/data/benchpress``."""
    return Path(args.data) if args.data else Path(args.data_dir) / "data" / "benchpress"


def reliability_file(args) -> Path:
    """``--reliability``, else ``<data-dir>/models/benchpress/reliability.json``."""
    if args.reliability:
        return Path(args.reliability)
    return Path(args.data_dir) / "models" / "benchpress" / "reliability.json"


def add_parser(sub) -> None:
    c = sub.add_parser("complete", help="predict a new model's other benchmark scores (BenchPress)")
    c.add_argument(
        "scores",
        help='CSV (benchmark_id,score) or JSON ({benchmark_id: score} or [{"benchmark_id": ..., "score": ...}])',
    )
    add_data_dir(c)
    c.add_argument("--data", help="the ingested BenchPress tables (default <data-dir>/data/benchpress)")
    c.add_argument(
        "--reliability", help="reliability model JSON (default <data-dir>/models/benchpress/reliability.json)"
    )
    c.add_argument("--no-intervals", action="store_true", help="point predictions only (no reliability model needed)")
    add_out(c, "write the full table as CSV here")
    c.add_argument("--top", type=positive_int, default=25, help="rows of the readable table (most trusted first)")
    c.add_argument(
        "--accept-low-scores",
        action="store_true",
        help="accept scores in (0, 1] on percentage benchmarks where every model scores above 1 "
        "(otherwise taken for fractions such as 0.712 for 71.2%%)",
    )


def read_known_scores(path: str | Path) -> list[tuple[str, object, str]]:
    """Read ``(benchmark_id, score, where)`` entries from a CSV (``benchmark_id,score``) or JSON
    file (an object ``{id: score}`` or a list of ``{"benchmark_id", "score"}`` records)."""
    return [(b, score, where) for b, score, where, _ in read_score_entries(path, "benchmark_id", "benchmark")]


def validate_known_scores(
    entries, benchmarks: pd.DataFrame, M: np.ndarray, path: str | Path, accept_low: bool = False
) -> dict[str, float]:
    """Check ids, duplicates and ranges; return ``{benchmark_id: score}``.

    A percentage benchmark (all observed scores within [-1, 101], or ``is_percentage`` in the
    inventory) takes scores in [0, 100]; any other benchmark a finite, non-negative number. A
    score in (0, 1] on a percentage benchmark where every model of the matrix scores above 1 is
    taken for a fraction (0.712 for 71.2 %) and refused unless ``accept_low``.
    """
    ids = list(benchmarks["benchmark_id"])
    index = {b: k for k, b in enumerate(ids)}
    if "is_percentage" in benchmarks.columns and benchmarks["is_percentage"].notna().all():
        pct = benchmarks["is_percentage"].to_numpy(dtype=bool)
    else:
        from benchcast.completion.transforms import percentage_columns

        pct = percentage_columns(M)
    if not entries:
        raise DataError(path, "(entries)", "no scores given", "give at least one known benchmark score")
    out: dict[str, float] = {}
    for bid, raw, where in entries:
        if bid not in index:
            close = difflib.get_close_matches(bid, ids, n=3, cutoff=0.6)
            hint = f"did you mean {', '.join(close)}?" if close else "see the benchmark_id column of the matrix"
            raise DataError(path, f"{where} ({bid!r})", "unknown benchmark id", hint)
        if bid in out:
            raise DataError(path, f"{where} ({bid!r})", "benchmark is given twice", "give each benchmark once")
        try:
            score = float(raw)
        except (TypeError, ValueError):
            raise DataError(
                path, f"{where} ({bid!r})", f"score {raw!r} is not a number", "write the score as a number"
            ) from None
        if isinstance(raw, bool) or not math.isfinite(score):
            raise DataError(
                path, f"{where} ({bid!r})", f"score {raw!r} is not a finite number", "write the score as a number"
            )
        if pct[index[bid]] and not 0.0 <= score <= 100.0:
            raise DataError(
                path,
                f"{where} ({bid!r})",
                f"score {score:g} is outside [0, 100] for a percentage benchmark",
                "give the score in percent (e.g. 71.5, not 0.715 or 715)",
            )
        col = M[:, index[bid]]
        lowest = float(np.nanmin(col)) if np.isfinite(col).any() else float("nan")
        if pct[index[bid]] and 0.0 < score <= 1.0 and lowest > 1.0 and not accept_low:
            raise DataError(
                path,
                f"{where} ({bid!r})",
                f"score {score:g} looks like a fraction: this is a percentage benchmark and no model in "
                f"the matrix scores below {lowest:g} on it",
                f"give the score in percent ({score * 100:g}); if it really is {score:g} %, pass --accept-low-scores",
            )
        if not pct[index[bid]] and score < 0:
            raise DataError(path, f"{where} ({bid!r})", f"score {score:g} is negative", "check the score's scale")
        out[bid] = score
    return out


def load_matrix(data: str | Path):
    from benchcast.data.aggregate import load_score_matrix

    data = Path(data)
    paths = {k: data / f"{k}.parquet" for k in ("scores", "models", "benchmarks")}
    for p in paths.values():
        if not p.exists():
            raise DataError(
                p,
                "(file)",
                "the ingested BenchPress matrix is missing",
                "ingest it in a clone of benchcast (`snakemake results/data/benchpress/scores.parquet --cores 1`), "
                "or pass --data-dir / --data",
            )
    return load_score_matrix(paths["scores"], paths["models"], paths["benchmarks"])


def _trust_meaning(reliability) -> str:
    if reliability.trust_scale == "percent_of_scale":
        return (
            f"trust = P(|error| <= {reliability.trust_threshold:g} points on percentage benchmarks, "
            f"{reliability.trust_threshold:g}% of the observed range on others)"
        )
    return f"trust = P(|error| <= {reliability.trust_threshold:g})"


def run(args: argparse.Namespace) -> int:
    from threadpoolctl import threadpool_limits

    from benchcast.completion.complete import ReliabilityModel, complete_new_model
    from benchcast.studies.benchpress.settings import SELECTED_CONFIG

    check_out(args.out, "predictions.csv", args.overwrite)
    M, _, benchmarks = load_matrix(data_folder(args))
    known = validate_known_scores(
        read_known_scores(args.scores), benchmarks, M, args.scores, accept_low=args.accept_low_scores
    )
    reliability = None if args.no_intervals else ReliabilityModel.from_json(reliability_file(args))
    with threadpool_limits(1):  # small SVDs / solves: threads only add overhead
        table = complete_new_model(M, list(benchmarks["benchmark_id"]), known, reliability, predictor=SELECTED_CONFIG)
    for c in ("name", "category"):
        if c in benchmarks.columns:
            table.insert(1 if c == "name" else 2, c, benchmarks[c].to_numpy())
    table = table.drop(columns="risk")
    if args.out:
        write_csv(table, args.out, float_format="%.4f")
    shown = table[~table["known"]].copy()
    if reliability is not None:
        shown = shown.sort_values("trust_probability", ascending=False, kind="stable")
    level = f"{reliability.level:.0%} interval" if reliability is not None else "interval"
    head = shown.head(args.top)
    names = [str(getattr(r, "name", r.benchmark_id)) for r in head.itertuples()]
    width = max([len("benchmark"), *map(len, names)])
    lines = [
        f"{len(known)} known scores; predictions for {len(shown)} benchmarks"
        + (f" ({level}, {_trust_meaning(reliability)})" if reliability else ""),
        f"{'benchmark':<{width}} {'predicted':>9}  {level:>17}  {'trust':>5}",
    ]
    for name, r in zip(names, head.itertuples()):
        ival = f"[{r.lower:7.1f}, {r.upper:7.1f}]" if np.isfinite(r.lower) else ""
        trust = f"{r.trust_probability:5.2f}" if np.isfinite(r.trust_probability) else ""
        lines.append(f"{name:<{width}} {r.score:9.1f}  {ival:>17}  {trust:>5}")
    if reliability is not None:
        k_used = reliability.calibration_for(len(known))[0]
        if reliability.calibration != "new_model":
            lines.append(
                "note: this reliability model was calibrated on missing cells of models already in the "
                "matrix, not on new models; rebuild it (rule bp_complete) for intervals calibrated for a new model."
            )
        elif k_used is not None and k_used > len(known):
            lines.append(
                f"note: only {len(known)} known scores; intervals and trust were calibrated for new models "
                f"with {k_used} known scores, so they are optimistic here. Add scores to tighten them."
            )
    if len(shown) > args.top:
        lines.append(f"... {len(shown) - args.top} more" + (f" in {args.out}" if args.out else " (use --out FILE)"))
    print("\n".join(lines))
    return 0
