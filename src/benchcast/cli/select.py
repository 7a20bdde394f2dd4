"""``benchcast select``: the items a new model should answer (then ``benchcast estimate``, :mod:`benchcast.cli.estimate`).

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

from pathlib import Path

from benchcast.cli.common import add_item_level, json_params, log


def add_parser(sub) -> None:
    s = sub.add_parser("select", help="the items a new model should answer (item-level methods)")
    add_item_level(s)
    s.add_argument("--budget", type=int, required=True, help="how many items the model may answer")
    s.add_argument(
        "--answers", help="answers so far (CSV item_id,score or JSON), for the next batch of adaptive methods"
    )
    s.add_argument(
        "--out", required=True, help="CSV to write: item_id, subtask, selection_id, score (blank, to fill in)"
    )


def run(args) -> int:
    from benchcast.new_model import select

    sel = select(
        args.dataset,
        args.method,
        args.budget,
        args.answers,
        params=json_params(args.params),
        data_dir=args.data_dir,
        seed=args.seed,
        folds=args.folds,
        log=log,
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
