from pathlib import Path

import pandas as pd

from benchcast.data.item_level import load_response_matrix, write_parquet_atomic
from benchcast.harness import run_job
from benchcast.workflow_support import job_logger

log = job_logger(snakemake)
w = snakemake.wildcards
matrix = load_response_matrix(Path(snakemake.input.models).parent, w.dataset)
splits = pd.read_parquet(snakemake.input.splits)
params = dict(snakemake.params.method_params)
method = snakemake.params.get("method_name", w.method)  # {method} may be a label of a registered method
log(f"{w.dataset} {w.split} {w.method} ({method}) n={w.n} params={params}")
prefit = None
if "irt_items" in snakemake.input.keys():  # P-IRT / GP-IRT: the trial's IRT fit, made once by mtm_irt
    from benchcast.methods.irt_methods import frames_to_fits

    prefit = frames_to_fits(pd.read_parquet(snakemake.input.irt_items), pd.read_parquet(snakemake.input.irt_trials),
                            pd.read_parquet(snakemake.input.irt_anchors))
    irt_timing = pd.read_parquet(snakemake.input.irt_timing).set_index("trial")
    # training time: the IRT fit (+ GP-IRT's bias refit) and this budget's k-means anchors
    kmeans = irt_timing.get(f"anchor_seconds_n{w.n}", 0.0)
    prefit_seconds = irt_timing.fit_seconds + (irt_timing.bias_seconds if method == "gp_irt" else 0.0) + kmeans
if "lasso_fits" in snakemake.input.keys():  # Lasso: the trial's path selections, made once by mtm_lasso
    from benchcast.methods.lasso import frames_to_selections

    prefit = frames_to_selections(pd.read_parquet(snakemake.input.lasso_fits), pd.read_parquet(snakemake.input.lasso_items))
    prefit_seconds = pd.read_parquet(snakemake.input.lasso_timing).set_index("trial").fit_seconds
result = run_job(matrix, splits, method, params, int(w.n), snakemake.params.seed, log=log, prefit=prefit)
if prefit is not None:  # Table 2 counts the shared per-trial fit in these methods' training time
    result.timing["prefit_seconds"] = result.timing.trial.map(prefit_seconds).to_numpy()
write_parquet_atomic(result.timing, snakemake.output.timing)
write_parquet_atomic(result.estimates, snakemake.output.estimates)
log(f"done: fit {result.timing.fit_seconds.sum():.1f}s, estimate {result.timing.estimate_seconds.sum():.1f}s")
