from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import expit

from benchcast.data.io import write_csv_atomic, write_text_atomic
from benchcast.data.item_level import load_response_matrix
from benchcast.studies.irt_validation import analysis as iv
from benchcast.workflow.support import job_logger

log = job_logger(snakemake)
p = snakemake.params
LABEL = {"pyirt": "py-irt 0.7.1 multidim_2pl", "paper": "py-irt 0.7.1 trainer, paper's multidim_2pl"}
rows, comparisons = [], []
for i, ds in enumerate(p.datasets):
    matrix = load_response_matrix(Path(snakemake.input.models[i]).parent, ds)
    Y, heldout = matrix.scores, np.load(snakemake.input.masks[i], allow_pickle=False)
    fits = {iv.OURS: iv.load_pyirt_npz(snakemake.input.ours[i])}
    for v in p.variants:
        fits[LABEL[v]] = iv.load_pyirt_npz(next(f for f in snakemake.input.pyirt if f"/{ds}/pyirt_{v}.npz" in f))
    for name, f in fits.items():
        P = expit(iv.logits(f["ability"], f["disc"], f["diff"]))
        rows.append(
            {
                "dataset": ds,
                "n_models": Y.shape[0],
                "n_items": Y.shape[1],
                "fitter": name,
                "fit_seconds": float(f["fit_seconds"]),
                "heldout_loglik": iv.heldout_log_likelihood(Y, P, heldout),
                "heldout_accuracy": iv.heldout_accuracy(Y, P, heldout),
                "diverged": bool(f.get("diverged", False)),
                "epochs_completed": f.get("epochs_completed", np.nan),
            }
        )
    table = iv.validation_table(rows)
    for name in fits:
        if name == iv.OURS:
            continue
        corr = {ds: iv.compare_item_parameters(fits[iv.OURS], fits[name])}
        c = iv.comparison_table(table[table.dataset == ds], corr, theirs=name)
        comparisons.append(c.assign(versus=name))
fits_table = iv.validation_table(rows)
comparison = pd.concat(comparisons, ignore_index=True)
write_csv_atomic(fits_table, snakemake.output.fits, index=False, float_format="%.5f")
write_csv_atomic(comparison, snakemake.output.comparison, index=False, float_format="%.5f")
settings = {k: v for k, v in dict(p.settings).items() if k != "pyirt_python"}
write_text_atomic(snakemake.output.summary, iv.render_markdown(fits_table, comparison, settings=settings) + "\n")
for r in comparison.itertuples():
    log(f"{r.dataset} vs {r.versus}: speedup {r.speedup:.1f}x, loglik ours - theirs {r.loglik_difference:+.4f}")
