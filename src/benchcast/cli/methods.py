"""``benchcast methods``: the item-level methods ``select`` and ``estimate`` take (``--method``), with
what each needs (a shared prefit, the items' subtasks, answers in rounds, a smallest budget) and,
where the held-out test of the new-model intervals measured it, the seconds of its first fit and its
MAE and interval coverage per budget. The measured figures come from ``method_facts.json``
(:mod:`benchcast.new_model.facts`), which ``scripts/method_facts.py`` writes from the test's tables and which records their
provenance (file, sha256, date, command).

::

    benchcast methods --grep irt
    benchcast methods --dataset musr --json
"""

from __future__ import annotations

import argparse
import re
import sys

import numpy as np
import pandas as pd

from benchcast.cli.common import add_listing, print_listing
from benchcast.new_model.facts import load_facts


def summary(doc: str | None, width: int = 72) -> str:
    """A docstring's first sentence as plain text, cut to ``width`` characters."""
    text = " ".join((doc or "").strip().split("\n\n")[0].split()).replace("``", "")
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", text)
    text = re.split(r"\.\s+(?=[A-Z])", text)[0].rstrip(".")
    return text if len(text) <= width else text[: width - 3].rstrip() + "..."


def add_parser(sub) -> None:
    m = sub.add_parser(
        "methods",
        help="list the item-level methods select / estimate take (--method), what each needs and, where "
        "measured, its first fit's seconds and held-out MAE and coverage",
    )
    m.add_argument(
        "--dataset", help="the held-out figures of this dataset only (default: the mean over the datasets measured)"
    )
    add_listing(m)


def measured(facts: dict, dataset: str | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The held-out cells and the first-fit seconds as tables (``dataset``'s only, if given)."""
    cells, fits = [], []
    for name, m in facts["methods"].items():
        cells += [{"method": name, **c} for c in m.get("heldout", [])]
        fits += [{"method": name, **c} for c in m.get("first_fit_seconds", [])]
    cells = pd.DataFrame(cells, columns=["method", "dataset", "budget", "mae", "coverage"])
    fits = pd.DataFrame(fits, columns=["method", "dataset", "budget", "seconds"])
    if dataset is not None:
        cells, fits = cells[cells.dataset == dataset], fits[fits.dataset == dataset]
    return cells, fits


def run(args: argparse.Namespace) -> int:
    from benchcast.methods import FAILED, REGISTRY, load_plugins, make_method, origin

    load_plugins()
    facts = load_facts()
    cells, fits = measured(facts, args.dataset)
    budgets = sorted(cells.budget.unique().tolist())
    rows = []
    for name in sorted(REGISTRY):
        cls = REGISTRY[name]
        row = {
            "method": name,
            "what": summary(cls.__doc__, 60),
            "scores": getattr(cls, "scores", "0/1"),  # the item scores its estimator takes
            "prefit": cls.needs_prefit or "",
            "subtasks": "yes" if cls.uses_item_groups else "",
            "rounds": "yes" if cls.asks_in_rounds else "",
            "min_budget": make_method(name).min_budget(),
            "first_fit_s": fits.seconds[fits.method == name].max() if (fits.method == name).any() else np.nan,
        }
        mine = cells[cells.method == name]
        for b in budgets:  # mean over the datasets measured: MAE in points, coverage in percent
            at = mine[mine.budget == b]
            row[f"mae_{b}"] = round(100 * at.mae.mean(), 2) if len(at) else np.nan
            row[f"coverage_{b}"] = round(100 * at.coverage.mean(), 1) if len(at) else np.nan
        row["heldout_on"] = ",".join(sorted(mine.dataset.unique()))
        row["module"] = cls.__module__.removeprefix("benchcast.methods.")
        row["source"] = origin(name).label()
        rows.append(row)
    code = print_listing(pd.DataFrame(rows), args)
    if not args.json:
        print(footnote(facts, args.dataset, cells), file=sys.stderr)
    for name, why in sorted(FAILED.items()):  # a package's method that could not be registered
        print(f"not registered: {name}: {why}", file=sys.stderr)
    return code


def footnote(facts: dict, dataset: str | None, cells: pd.DataFrame) -> str:
    """What the measured columns are and where they come from."""
    prov = facts.get("provenance")
    if not prov:
        return "no measured figures: this installation has no method_facts.json (scripts/method_facts.py writes it)"
    src = prov["sources"][0]
    where = f"{src['file']} (sha256 {src['sha256'][:12]}, {src['modified'][:10]})"
    if dataset is not None and cells.empty:
        known = sorted({c["dataset"] for m in facts["methods"].values() for c in m.get("heldout", [])})
        return f"no held-out figures for {dataset!r}; measured on {', '.join(known)} ({where})"
    over = f"on {dataset}" if dataset else "mean over the datasets in heldout_on"
    return (
        f"first_fit_s: seconds of the first select's fit and calibration (largest measured); mae_N: mean absolute "
        f"error in points and coverage_N: % of held-out models inside the {prov['level']:.0%} interval at budget N, "
        f"{over}; blank: not measured. From the held-out test, {where}."
    )
