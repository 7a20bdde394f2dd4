import numpy as np

from benchcast.completion.calibration import check_new_models, check_summary, pick_models
from benchcast.data.aggregate import load_score_matrix as load_matrix
from benchcast.data.io import write_parquet_atomic
from benchcast.output.tables import write_table
from benchcast.studies.benchpress.complete import complete_reliability
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
M, models, benchmarks = load_matrix(snakemake.input.scores, snakemake.input.models, snakemake.input.benchmarks)
rel, settings = snakemake.params.reliability, dict(snakemake.params.complete)
check = settings.pop("check")
held_out = pick_models(M, check["models"], check["min_observed"], settings["seed"], "new_model_check_models")
log(f"held out: {', '.join(models['model_id'].iloc[held_out])}")
# complete's reliability model rebuilt on the matrix without the held-out models
_, model, _ = complete_reliability(np.delete(M, held_out, axis=0), settings, rel, n_jobs=snakemake.threads, log=log)
cells = check_new_models(
    M, list(benchmarks["benchmark_id"]), held_out, check["k"], model, draws=check["draws"], seed=settings["seed"]
)
cells.insert(1, "model_id", models["model_id"].to_numpy()[cells["model"].to_numpy()])
write_parquet_atomic(cells, snakemake.output.cells)
summary = check_summary(cells, rel["level"])
write_table(
    summary,
    snakemake.output.summary,
    snakemake.output.md,
    digits=3,
    title=f"benchcast complete on {len(held_out)} held-out models (k = {check['k']} known scores, "
    f"{check['draws']} draws each)",
)
r = summary.iloc[0]
log(
    f"coverage {r.coverage:.4f} (nominal {rel['level']}), stated trust {r.stated_trust:.4f}, "
    f"observed within threshold {r.observed_within:.4f}, {int(r.cells)} cells"
)
