"""The measured facts of the new-model commands: each method's held-out MAE and interval coverage
per dataset and budget, and the seconds its first fit took, from the held-out test of the new-model
intervals (``docs/studies/heldout_intervals.md``). ``method_facts.json`` beside this module is
package data, written by ``scripts/method_facts.py`` from the test's tables with their provenance
(file, sha256, date, command). ``benchcast methods`` shows them; the first ``select`` quotes the
first-fit seconds before it builds a fit.
"""

from __future__ import annotations

import json

#: the measured facts (package data; ``python scripts/method_facts.py`` writes it)
FACTS = "method_facts.json"


def load_facts() -> dict:
    """The measured facts, or none (``methods`` empty) where the file is missing."""
    from importlib.resources import files

    try:
        return json.loads(files("benchcast.new_model").joinpath(FACTS).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"provenance": None, "methods": {}}


def first_fit_seconds(method: str, dataset: str, budget: int, facts: dict | None = None) -> tuple[float, int] | None:
    """The measured seconds of ``method``'s first fit (the fit and its calibration, one core) on
    ``dataset`` at the measured budget nearest ``budget``, with that budget; None if not measured."""
    facts = load_facts() if facts is None else facts
    rows = [r for r in facts["methods"].get(method, {}).get("first_fit_seconds", []) if r["dataset"] == dataset]
    if not rows:
        return None
    row = min(rows, key=lambda r: (abs(int(r["budget"]) - int(budget)), int(r["budget"])))
    return float(row["seconds"]), int(row["budget"])
