"""Every table and figure of the TailoredBench study from the per-run metrics (rule ``tb_tables``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pandas as pd

from benchcast.output import plots
from benchcast.output.tables import write_table
from benchcast.studies.tailoredbench import analysis

FIGURE_AXES = {
    "figure3a": (
        "share of the native sources kept (at random)",
        "Figure 3a: number of native sources, same consistency",
    ),
    "figure3b": (
        "consistency band of the sources (quantiles)",
        "Figure 3b: consistency of native sources, same number",
    ),
    "figure4": ("native sources (nearest first)", "Figure 4: number of nearest native sources"),
}


def _label(value) -> str:
    return "-".join(f"{v:g}" for v in value) if isinstance(value, (list, tuple)) else f"{value:g}"


def write_outputs(
    per_run: pd.DataFrame,
    paper: pd.DataFrame,
    table6_rows: Mapping[str, str],
    ablations: Mapping[str, Mapping],
    figures: Mapping[str, list],
    tolerance: Mapping[str, Mapping[str, float]],
    outputs: Mapping[str, str],
    log: Callable[[str], None] = print,
    run: str | None = None,
) -> None:
    """``outputs`` maps each table name (table6, the ablations, z_test, summary, paper_vs_ours,
    acceptance_summary) to its CSV and each figure name to its PNG; ``run``, the run in words (a slice
    or the full study), goes into paper_vs_ours's ``run`` column."""
    summary = analysis.summarize(per_run)
    tables = {"table6": analysis.table6(summary, table6_rows)}
    for name, spec in ablations.items():
        tables[name] = analysis.ablation(summary, spec["rows"], int(spec["budget"]))
    ours_setting = table6_rows.get("tailoredbench")
    others = {m: s for m, s in table6_rows.items() if m != "tailoredbench"}
    z = analysis.z_tests(per_run, ours_setting, others) if ours_setting else pd.DataFrame()
    comparison = analysis.paper_vs_ours(tables, paper, tolerance)
    if run is not None:
        comparison["run"] = run
    for name, table in {**tables, "z_test": z, "summary": summary, "paper_vs_ours": comparison}.items():
        write_table(table, outputs[name])
    accept = analysis.acceptance_summary(comparison)
    write_table(accept, outputs["acceptance_summary"])
    for row in accept.itertuples(index=False):
        log(f"{row.table}: {row.within} of {row.cells} paper cells within tolerance")

    for fig, points in figures.items():
        at = summary.set_index("setting")
        rows = [dict(x=_label(v), **at.loc[s, ["tau", "tau_se", "mae", "mae_se"]].to_dict()) for v, s in points]
        xlabel, title = FIGURE_AXES[fig]
        plots.metric_curves(pd.DataFrame(rows), outputs[fig], xlabel, title)
    plots.metric_boxplots(
        per_run,
        dict(zip(table6_rows.values(), table6_rows.keys(), strict=True)),
        outputs["figure7"],
        "Figure 7: spread over runs",
    )
