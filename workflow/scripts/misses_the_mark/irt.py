from pathlib import Path

import pandas as pd

from benchcast.data.item_level import load_response_matrix, write_parquet_atomic
from benchcast.harness import splits_by_trial
from benchcast.methods.irt_methods import anchors_to_frame, fit_irt_trials, fits_to_frames, trial_anchors
from benchcast.workflow_support import job_logger

log = job_logger(snakemake)
w = snakemake.wildcards
matrix = load_response_matrix(Path(snakemake.input.models).parent, w.dataset)
by_trial = splits_by_trial(pd.read_parquet(snakemake.input.splits), matrix)
params = dict(snakemake.params.irt)
share = bool(snakemake.params.share_identical_sources)
log(f"{w.dataset} {w.split}: IRT fits of {len(by_trial)} trials, params={params}, bias={snakemake.params.with_bias}, "
    f"share_identical_sources={share}")
fits = fit_irt_trials(matrix.scores, by_trial, snakemake.params.seed, params, snakemake.params.with_bias,
                      share_identical_sources=share, log=log)
# P-IRT's and GP-IRT's k-means anchors of every trial and budget, once for both methods
budgets = [int(n) for n in snakemake.params.budgets if int(n) <= matrix.scores.shape[1]]
for trial, fit in fits.items():
    fit.anchors, fit.anchor_seconds = trial_anchors(fit, budgets, snakemake.params.seed, trial)
log(f"anchors for budgets {budgets}: {sum(sum(f.anchor_seconds.values()) for f in fits.values()):.1f}s")
items, trials = fits_to_frames(fits)
write_parquet_atomic(anchors_to_frame(fits), snakemake.output.anchors)
timing = pd.DataFrame({"trial": list(fits), "fit_seconds": [f.fit_seconds for f in fits.values()],
                       "bias_seconds": [f.bias_seconds for f in fits.values()],
                       "shared_from": [f.shared_from for f in fits.values()],
                       **{f"anchor_seconds_n{n}": [f.anchor_seconds[n] for f in fits.values()] for n in budgets}})
write_parquet_atomic(timing, snakemake.output.timing)
write_parquet_atomic(trials, snakemake.output.trials)
write_parquet_atomic(items, snakemake.output.item_params)
made = timing.shared_from == timing.trial
log(f"done: {int(made.sum())} distinct fits, {timing.fit_seconds[made].sum():.1f}s full fits, "
    f"{timing.bias_seconds[made].sum():.1f}s bias refits")
