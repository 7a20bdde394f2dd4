"""``benchcast select`` and ``benchcast estimate``: a new model's items, then its score.

::

    benchcast select musr --method random_sampling --budget 50 --out items.csv
    #   ... run the model on those items, write 1/0 in items.csv's score column ...
    benchcast estimate musr --method random_sampling --answers items.csv --out estimate.json

``DATASET`` is a catalog dataset ingested under ``--data-dir`` (default ``results``: its
``data/<dataset>/`` tables) or the path of your own models x items matrix (CSV/Parquet, first
column ``model_id``, other columns item ids, 0/1 scores). Adaptive methods (``tailoredbench``)
select in batches: run ``select`` again with ``--answers`` (the answers so far) until it says
the selection is complete. The first call for a dataset, method and budget builds the fit and
its calibration under ``<data-dir>/models/`` (the workflow's ``deploy`` rule builds them ahead).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchcast.errors import ConfigError


def _params(text: str | None) -> dict | None:
    if not text:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--params is not JSON ({exc.msg}); fix: e.g. --params '{{\"alpha\": 10}}'") from None
    if not isinstance(value, dict):
        raise ConfigError("--params must be a JSON object, e.g. --params '{\"alpha\": 10}'")
    return value


def _common(p) -> None:
    p.add_argument("dataset", help="a catalog dataset (ingested under --data-dir) or a models x items CSV/Parquet")
    p.add_argument("--method", required=True, help="an item-level method of the registry, e.g. random_sampling")
    p.add_argument("--params", help="the method's settings as JSON (default: the registry's defaults)")
    p.add_argument("--data-dir", default="results", help="the workflow's results folder (default results)")
    p.add_argument("--seed", type=int, default=0, help="seed of the fit and the selection (default 0)")
    p.add_argument("--folds", type=int, default=10, help="folds of models calibrating the intervals (default 10)")


def add_parsers(sub) -> None:
    s = sub.add_parser("select", help="the items a new model should answer (item-level methods)")
    _common(s)
    s.add_argument("--budget", type=int, required=True, help="how many items the model may answer")
    s.add_argument(
        "--answers", help="answers so far (CSV item_id,score or JSON), for the next batch of adaptive methods"
    )
    s.add_argument(
        "--out", required=True, help="CSV to write: item_id, subtask, selection_id, score (blank, to fill in)"
    )
    e = sub.add_parser("estimate", help="a new model's full-benchmark score from its answers, with an interval")
    _common(e)
    e.add_argument("--answers", required=True, help="CSV (item_id,score[,selection_id]) or JSON ({item_id: score})")
    e.add_argument(
        "--budget", type=int, help="the budget selected with (default: the selection_id's, else the number of answers)"
    )
    e.add_argument("--level", type=float, default=0.9, help="interval level (default 0.9)")
    e.add_argument(
        "--interval",
        choices=("auto", "own", "conformal"),
        default="auto",
        help="the method's own interval (AIPW's central-limit one) or split-conformal; auto: its own where it has one",
    )
    e.add_argument("--out", help="also write the result as JSON here")


def _log(text: str) -> None:
    print(text, file=sys.stderr)


def run_select(args) -> int:
    from benchcast.deploy import select

    sel = select(
        args.dataset,
        args.method,
        args.budget,
        args.answers,
        params=_params(args.params),
        data_dir=args.data_dir,
        seed=args.seed,
        folds=args.folds,
        log=_log,
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    items = sel.items.assign(score="")
    tmp = out.with_name(f".{out.name}.tmp")
    items.to_csv(tmp, index=False)
    tmp.replace(out)
    if sel.complete:
        print(
            f"selection {sel.selection_id} is complete: all {sel.answered} items the method asks for are answered "
            f"(wrote an empty {out}); run: benchcast estimate {args.dataset} --method {args.method} --answers {args.answers}"
        )
    else:
        then = (
            f"benchcast estimate {args.dataset} --method {args.method} --answers {out}"
            if sel.answered + len(items) >= sel.budget
            else f"benchcast select ... --answers <all answers so far> for the next batch (adaptive: {args.method})"
        )
        print(
            f"wrote {len(items)} items to {out} (selection {sel.selection_id}; {sel.answered} answered before, "
            f"budget {sel.budget}). Run the model on them, write 1 (correct) or 0 (wrong) in the score column, then: {then}"
        )
    return 0


def run_estimate(args) -> int:
    from benchcast.deploy import estimate

    result = estimate(
        args.dataset,
        args.method,
        args.answers,
        budget=args.budget,
        level=args.level,
        interval=args.interval,
        params=_params(args.params),
        data_dir=args.data_dir,
        seed=args.seed,
        folds=args.folds,
        log=_log,
    )
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(json.dumps(result, indent=1) + "\n")
        tmp.replace(out)
    r = result
    print(
        f"{r['dataset']}, {r['method']} from {r['items_used']} items: {100 * r['estimate']:.1f}% "
        f"[{100 * r['lower']:.1f}, {100 * r['upper']:.1f}] ({r['level']:.0%} interval); rank {r['rank']} of "
        f"{r['models'] + 1} [{r['rank_best']}, {r['rank_worst']}]\ninterval: {r['interval']}"
    )
    return 0
