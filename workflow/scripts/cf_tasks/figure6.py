from pathlib import Path

import pandas as pd

from benchcast.data.task_matrix import load_task_matrix
from benchcast.output.tables import write_table
from benchcast.studies.cf_tasks import analysis, figures
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
root = Path(snakemake.input.models[0]).parents[1]
tables, points = [], {}
for name, spec in snakemake.params.matrices.items():
    matrix = load_task_matrix(root, name, **spec)
    summary = analysis.figure6(name, matrix.scores, matrix.tasks, matrix.task_names)
    tables.append(summary)
    # the representative task: the one whose correlation is the median of the matrix's tasks
    task = int((summary.pearson - summary.pearson.median()).abs().fillna(2).idxmin())
    points[(name, matrix.task_names[task])] = analysis.pair_correlations(matrix.scores, matrix.tasks, task)
table = pd.concat(tables, ignore_index=True)
write_table(table, csv=snakemake.output.table)
figures.figure6(points, snakemake.output.png)
log(table.to_string(index=False))
