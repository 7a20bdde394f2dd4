import numpy as np
import pandas as pd

from benchcast.studies.mdad import figures
from benchcast.studies.mdad.analysis import same_size_rows
from benchcast.tables import write_table
from benchcast.workflow_support import job_logger

log = job_logger(snakemake)
p = snakemake.params
rows, gaps = [], {}
for (dataset, group, method), path in zip(p.cells, snakemake.input.runs, strict=True):
    estimates = pd.read_parquet(path)
    first = estimates[(estimates.trial == 0) & (estimates.k == estimates.k.min())]
    accuracy = ((first.seen_correct + first.unseen_correct) / (first.n_seen + first.n_unseen)).to_numpy()
    a, b = np.triu_indices(len(accuracy), k=1)
    gaps[(dataset, group)] = 100 * np.abs(accuracy[a] - accuracy[b])
    rows += same_size_rows(estimates, accuracy, dataset, group, method, p.agreement, p.seed)
table = pd.DataFrame(rows)
write_table(table, csv=snakemake.output.table)
figures.same_size(table, gaps, snakemake.output.figure)
log(f"{len(p.cells)} runs; groups {sorted(gaps)}")
