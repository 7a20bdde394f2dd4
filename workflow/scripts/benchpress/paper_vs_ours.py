import pandas as pd

from benchcast.data.io import write_csv_atomic
from benchcast.output.tables import write_table
from benchcast.studies.benchpress import analysis as bp
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
inp = snakemake.input
parts = {name: pd.read_csv(getattr(inp, name)) for name in ("grid", "geometry", "reliability", "section5")}
paper = pd.read_csv(inp.paper)
parts["matrix"] = bp.matrix_paper_vs_ours(pd.read_csv(inp.matrix), paper)
parts["predictability"] = bp.predictability_paper_vs_ours(pd.read_csv(inp.predictability), paper)
pvo = bp.combined_paper_vs_ours(parts, pd.read_csv(inp.hypotheses))
p = snakemake.params
pvo = bp.judge(pvo, p.tolerance, settings=p.settings, folds=p.folds, seeds=p.seeds).assign(run=p.run)
write_csv_atomic(pvo, snakemake.output.csv, index=False, float_format="%.6g")
both = pvo.dropna(subset=["ours", "paper"])
apart = int((both.not_comparable != "").sum())
within = int(both.within_tolerance.map(lambda v: str(v) == "True").sum())
write_table(
    both,
    None,
    snakemake.output.md,
    digits=4,
    title=f"BenchPress: {len(both)} numbers with both ours and the paper's ({len(pvo)} rows in the CSV)"
    + (f"; this run is {p.run}; {apart} not comparable (column not_comparable)" if p.slice else ""),
)
log(f"{len(pvo)} rows, {len(both)} with both values, {within} within tolerance, {apart} not comparable")
