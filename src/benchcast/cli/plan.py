"""``benchcast plan``: how many items a micro-benchmark needs (:mod:`benchcast.new_model.planner`).

::

    benchcast plan musr --difference 3          # items to tell apart models 3 points apart, 80% of the time
    benchcast plan musr --size 100              # the smallest difference 100 random items resolve
    benchcast plan musr --size 100 --models a,b,c   # which of these pairs 100 random items resolve
    benchcast plan my_leaderboard.csv --difference 3   # a models x items CSV (first column model_id, 0/1 cells)

``DATASET`` is an ingested catalog dataset (under ``<data-dir>/data/``, ``--data-dir`` default ``results``) or a CSV /
Parquet file of a models x items matrix whose first column, ``model_id`` (or ``model``), names the
models (read as ``benchcast select`` reads it, :mod:`benchcast.new_model.leaderboard`). Where the MDAD study has run on
the dataset (``--mdad-table``, default ``results/tables/mdad/mdad.csv``), its measured MDAD per
selector and size is printed too.
"""

from __future__ import annotations

import difflib
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.cli.common import DATASET_HELP, add_data_dir, add_out, check_out, log, write_csv
from benchcast.errors import DataError
from benchcast.new_model.leaderboard import load_leaderboard

DEFAULT_MDAD_TABLE = "results/tables/mdad/mdad.csv"


def add_parser(sub) -> None:
    p = sub.add_parser("plan", help="how many items a micro-benchmark needs to tell models apart (MDAD)")
    p.add_argument("dataset", help=DATASET_HELP)
    p.add_argument("--difference", type=float, help="accuracy difference to detect, in points (e.g. 3)")
    p.add_argument("--size", type=int, help="micro-benchmark size k: the difference it resolves")
    p.add_argument("--models", help="comma-separated model ids: which of their pairs --size items resolve")
    p.add_argument("--threshold", type=float, default=0.8, help="share of right rankings required (default 0.8)")
    add_data_dir(p)
    p.add_argument("--mdad-table", default=DEFAULT_MDAD_TABLE, help="the MDAD study's mdad.csv, if it has run")
    add_out(p, "also write the table printed last as CSV here")


def _matrix(dataset: str, data_dir: str) -> tuple[str, np.ndarray, list[str]]:
    """An ingested dataset under ``<data_dir>/data/`` or a user's models x items CSV/Parquet (its
    first column ``model_id``, or ``model``), read and checked as ``benchcast select`` reads them.
    A ``data_dir`` that holds the dataset itself (``--data-dir results/data``, the meaning before
    0.2.0) is still read, with a warning."""
    if (Path(data_dir) / dataset / "responses.parquet").is_file():
        log(
            f"benchcast plan: --data-dir is now the results folder (as for select/estimate); read {data_dir} as the datasets folder"
        )
        board = load_leaderboard(dataset, datasets_dir=data_dir)
    else:
        board = load_leaderboard(dataset, data_dir=data_dir)
    if not board.binary:  # its counts are of items two models answer differently (MDAD's, for 0/1 scores)
        raise DataError(
            board.path,
            "scores",
            "holds partial credit (scores between 0 and 1); benchcast plan counts items for 0/1 scores only",
            "plan on the same benchmark scored 0/1 (right/wrong), or size the selection with `benchcast compare`'s "
            "smallest detectable difference",
        )
    name = board.key if board.path.is_dir() else board.path.stem
    return name, board.matrix.scores, list(board.matrix.model_ids)


def _check(args) -> None:
    if (args.difference is None) == (args.size is None):
        raise DataError(
            "(command line)", "--difference / --size", "give exactly one", "e.g. --difference 3 or --size 100"
        )
    if not 0.5 < args.threshold < 1:
        raise DataError("(command line)", "--threshold", f"{args.threshold} is not in (0.5, 1)", "e.g. 0.8")
    if args.difference is not None and not 0 < args.difference < 100:
        raise DataError("(command line)", "--difference", f"{args.difference} is not in (0, 100) points", "e.g. 3")
    if args.models and args.size is None:
        raise DataError("(command line)", "--models", "needs --size", "add --size K")


def run(args) -> int:
    # on first use: scipy.stats costs half a second, which `benchcast select` / `estimate` need not pay
    from benchcast.new_model.planner import agreement_probability, approximate_mdad, model_pairs, required_items

    _check(args)
    check_out(args.out, "plan.csv", args.overwrite)
    name, scores, model_ids = _matrix(args.dataset, args.data_dir)
    n_items = scores.shape[1]
    pairs = model_pairs(scores)
    lines, table = [], None
    if args.difference is not None:
        d = args.difference / 100
        near = pairs[(pairs.d - d).abs() <= 0.005]
        q = float(near.q.median()) if len(near) else float(np.clip(pairs.q.median(), d, 1))
        k = required_items(d, q, args.threshold, pool=n_items)
        lines.append(
            f"{name}: {n_items} items, {len(scores)} models. Two models {args.difference:g} points apart disagree on "
            f"{100 * q:.1f}% of the items (median of the {len(near)} pairs within 0.5 points of that difference)."
        )
        lines.append(
            f"Random items needed to rank them right {100 * args.threshold:g}% of the time: "
            + (f"{k} (normal approximation, ties count as wrong)" if k else f"more than the benchmark's {n_items}")
        )
    elif args.models:
        wanted = [m.strip() for m in args.models.split(",") if m.strip()]
        index = {m: i for i, m in enumerate(model_ids)}
        for m in wanted:
            if m not in index:
                close = difflib.get_close_matches(m, model_ids, n=3)
                raise DataError(
                    args.dataset,
                    f"--models '{m}'",
                    "no such model",
                    f"use an id of the matrix{', e.g. ' + ', '.join(close) if close else ''}",
                )
        rows = []
        for a_pos, a in enumerate(wanted):
            for b in wanted[a_pos + 1 :]:
                x, y = scores[index[a]], scores[index[b]]
                d, q = abs(x.mean() - y.mean()), float(np.mean(x != y))
                p = float(agreement_probability(d, q, args.size, pool=n_items))
                rows.append((a, b, 100 * d, 100 * q, p, p >= args.threshold))
        table = pd.DataFrame(
            rows, columns=["model_a", "model_b", "difference_points", "disagreement_percent", "p_right", "resolved"]
        )
        lines.append(f"{name}: which pairs {args.size} random items rank right {100 * args.threshold:g}% of the time")
        lines.append(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    else:
        if not 1 <= args.size < n_items:
            raise DataError(
                "(command line)", "--size", f"{args.size} is not between 1 and the {n_items} items", "lower it"
            )
        mdad = approximate_mdad(pairs, args.size, args.threshold, pool=n_items)
        lines.append(
            f"{name}: {args.size} random items of {n_items} rank two models right {100 * args.threshold:g}% of the "
            f"time once they differ by {mdad:g} points (MDAD, normal approximation)"
        )
    measured = Path(args.mdad_table)
    if measured.is_file():
        t = pd.read_csv(measured)
        t = t[(t.dataset == name) & (t.split == "seen")]
        if len(t):
            t = t[t.n_source == t.n_source.max()]
            if args.size is not None and (t.k == args.size).any():
                t = t[t.k == args.size]
            pivot = t.pivot_table(index="k", columns="method", values="mdad")
            lines.append(f"Measured MDAD (points) by the MDAD study on {name}, {int(t.n_source.max())} source models:")
            lines.append(pivot.to_string(float_format=lambda v: f"{v:g}"))
            table = table if table is not None else pivot.reset_index()
    print("\n".join(lines))
    if args.out and table is not None:
        write_csv(table, args.out)
    return 0
