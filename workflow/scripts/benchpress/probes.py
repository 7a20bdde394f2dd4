import json

from benchcast.data.io import write_csv_atomic
from benchcast.output.plots import probe_curves_plot
from benchcast.studies.benchpress import analysis as bp
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
out = snakemake.output
M, _, benchmarks = bp.load_matrix(snakemake.input.scores, snakemake.input.models, snakemake.input.benchmarks)
allow = json.loads(open(snakemake.input.allowlist).read())["benchmark_ids"]
res = bp.section5_probes(
    M,
    list(benchmarks["benchmark_id"]),
    allow,
    steps=p.steps,
    runs=[tuple(r.split("/")) for r in p.runs],
    n_random_seeds=p.n_random_seeds,
)
write_csv_atomic(res["greedy"], out.table5, index=False, float_format="%.6f")
write_csv_atomic(res["random"], out.random, index=False, float_format="%.6f")
write_csv_atomic(res["figure6"], out.figure6, index=False, float_format="%.6f")
probe_curves_plot(res["greedy"], res["random"], out.figure5_png)
for r in res["greedy"][res["greedy"]["step"] == min(5, p.steps)].to_dict("records"):
    log(f"{r['objective']}/{r['pool']} k={r['step']}: MedAE {r['medae']:.3f}, MedAPE {r['medape']:.3f}")
