"""The comparison's output files: each protocol's ranking (CSV and Markdown), the summary of all
of them and the rank figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from benchcast.data.io import write_csv_atomic, write_text_atomic
from benchcast.output.plots import rank_plot
from benchcast.studies.method_comparison.analysis import (
    ranking_markdown,
    rankings,
    summary,
    summary_columns,
    summary_markdown,
)


def write_outputs(
    scores: Mapping[str, pd.DataFrame],
    methods: Mapping[str, Sequence[str]],
    described: Mapping[str, str],
    outputs: Mapping[str, str],
    log=print,
) -> None:
    """``scores``: per protocol, :func:`~.analysis.protocol_scores`' table; ``methods``: per protocol
    the compared labels in order; ``described``: per protocol what its score is; ``outputs``: the
    rule's output paths (``<protocol>``, ``<protocol>_md``, ``summary``, ``summary_md``, ``figure``)."""
    tables = {}
    for protocol, table in scores.items():
        ranked = rankings(table, methods[protocol])
        tables[protocol] = ranked
        write_csv_atomic(ranked, outputs[protocol], index=False)
        head = f"# {protocol}\n\nScore: {described[protocol]}. Lower is better; rank 1 is the best.\n\n"
        write_text_atomic(outputs[f"{protocol}_md"], head + ranking_markdown(ranked))
        log(f"{protocol}: {len(ranked)} rows")
    order = list(dict.fromkeys(m for ms in methods.values() for m in ms))
    table = summary(tables, order)
    write_csv_atomic(table, outputs["summary"], index=False)
    head = (
        "# Every method under every protocol\n\nMean rank over trials (1 = best) ± its trial-to-trial SD, per "
        "protocol and budget; methods whose mean ranks differ by less than the SD are not told apart.\n\n"
    )
    write_text_atomic(outputs["summary_md"], head + summary_markdown(table, order, list(scores)))
    rank_plot(table, order, summary_columns(table, list(scores)), outputs["figure"])
