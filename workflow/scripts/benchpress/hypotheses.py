import pandas as pd

from benchcast.data.io import write_csv_atomic
from benchcast.studies.benchpress import analysis as bp
from benchcast.studies.benchpress import hypotheses as H
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
out = snakemake.output
M, models, benchmarks, folds = bp.load_study_inputs(snakemake.input, p.max_folds)
if benchmarks["category"].isna().any():
    raise SystemExit("benchmarks.parquet has no category for some benchmarks: ingest benchpress with its inventory")
bench_seeds = max(1, p.trials // 2)
t7 = H.benchmark_hypotheses(
    M,
    folds,
    benchmarks["category"].tolist(),
    n_seeds_h4=bench_seeds,
    n_seeds_h5=bench_seeds,
    n_seeds_h6=bench_seeds,
    n_seeds_h7=p.trials,
)
holdout = H.model_holdout_cells(M, H.default_predict_batch(), n_seeds=p.trials)  # shared with E.1 below
t8 = H.model_hypotheses(
    M,
    models["provider"].tolist(),
    models["reasoning"].tolist(),
    bp.release_date_strings(models),
    None,
    n_seeds=p.trials,
    peer_baseline=p.peer_baseline,
    holdout_cells_df=holdout,
)
write_csv_atomic(t7, out.table7, index=False, float_format="%.6g")
write_csv_atomic(t8, out.table8, index=False, float_format="%.6g")
paper = pd.read_csv(snakemake.input.paper)
# Appendix E.1: per-benchmark / per-model predictability from the same hide-half holdout
rows = []
for by, ids in (("benchmark", benchmarks["benchmark_id"]), ("model", models["model_id"])):
    tab, summ = H.predictability(holdout, by)
    write_csv_atomic(
        tab.assign(**{f"{by}_id": ids.to_numpy()[tab.index.to_numpy()]}),
        getattr(out, f"predictability_{by}"),
        float_format="%.4f",
    )
    rows.append({"by": by, **summ})
write_csv_atomic(pd.DataFrame(rows), out.predictability, index=False, float_format="%.4f")
cmp = pd.concat([H.compare_with_paper(t7, paper), H.compare_with_paper(t8, paper)], ignore_index=True)
write_csv_atomic(cmp, out.paper_vs_ours, index=False, float_format="%.6g")
ran = cmp[cmp["our_p"].notna()]
log(
    f"{int(ran['agree'].sum())}/{len(ran)} (hypothesis, metric) verdicts we could test agree with the paper "
    f"({len(cmp) - len(ran)} not testable: no data)"
)
