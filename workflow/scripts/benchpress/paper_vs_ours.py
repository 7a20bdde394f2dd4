import pandas as pd

from benchcast.output.tables import within_tolerance, write_table
from benchcast.studies.benchpress import analysis as bp
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
inp = snakemake.input
parts = {name: pd.read_csv(getattr(inp, name)) for name in ("grid", "geometry", "reliability", "section5")}
paper = pd.read_csv(inp.paper)
parts["matrix"] = bp.matrix_paper_vs_ours(pd.read_csv(inp.matrix), paper)
parts["predictability"] = bp.predictability_paper_vs_ours(pd.read_csv(inp.predictability), paper)
pvo = bp.combined_paper_vs_ours(parts, pd.read_csv(inp.hypotheses))
cells = snakemake.params.tolerance
pvo["abs_tolerance"] = pvo["column"].map(cells["abs_by_column"]).fillna(cells["abs"]).astype(float)
pvo["within_tolerance"] = within_tolerance(pvo.ours, pvo.paper, pvo.abs_tolerance, cells["rel"])
pvo.to_csv(snakemake.output.csv, index=False, float_format="%.6g")
both = pvo.dropna(subset=["ours", "paper"])
write_table(
    both,
    None,
    snakemake.output.md,
    digits=4,
    title=f"BenchPress: {len(both)} numbers with both ours and the paper's ({len(pvo)} rows in the CSV)",
)
log(f"{len(pvo)} rows, {len(both)} with both values, {int(both.within_tolerance.sum())} within tolerance")
