"""Check the lm-evaluation-harness identity that the ``lm_eval`` blocks of ``src/benchcast/data/catalog.yaml``
claim for musr, ifeval, openllm_math, arc_challenge and mdad_gpqa, against the sloth aggregate
tables (``<raw-dir>/sloth/data/``).

Each item-level response matrix (``<data-dir>/data/<name>/``, every model, excluded ones included)
is joined by model name to the aggregate tables, and its per-model means are compared with:

* ``data_v2.csv``: the per-subtask columns at full precision (``musr_*``, ``math_*_hard``,
  ``gpqa_*``) and the 2-decimal totals;
* ``open-llm-leaderboard_new.csv``: the ``Raw`` columns (2 decimals) and the displayed scores;
* ``open-llm-leaderboard_old.csv``: ARC (percent, 2 decimals).

And it runs these tests:

* MuSR subtask order: each of the 6 block orders of the 756 items against the three data_v2
  subtask columns (the catalog's order should win);
* MATH 894-item subset: which subsets of the seven ``leaderboard_math_*_hard`` sizes sum to 894,
  and which contiguous order of that subset matches the data_v2 subtask columns best;
* IFEval j/834 grid: if the display is the mean of prompt- and instruction-level strict accuracy
  and the matrix holds prompt-level strict, ``2 * display - matrix mean`` lies on the j/834 grid;
* display normalisation: MuSR as the mean of per-subtask ``max(0, (acc - b) / (1 - b))`` with
  baselines 1/2, 1/5, 1/3; GPQA with baseline 1/4; MATH as raw * 100.

Usage: python scripts/dev/check_lm_eval_identity.py --data-dir results --raw-dir ../shared/raw
    --out results/tables/lm_eval_identity_check.csv
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from benchcast.data.item_level import load_response_matrix

DATASETS = ("musr", "ifeval", "openllm_math", "arc_challenge", "mdad_gpqa")
TABLES = {"v1": "data_v1.csv", "v2": "data_v2.csv", "new": "open-llm-leaderboard_new.csv"}
TABLES["old"] = "open-llm-leaderboard_old.csv"
RULES = {"v1": ("short",), "v2": ("short",), "new": ("exact", "ci"), "old": ("exact", "ci")}
MATH_SIZES = {"algebra": 307, "counting_and_prob": 123, "geometry": 132, "intermediate_algebra": 280}
MATH_SIZES |= {"num_theory": 154, "prealgebra": 193, "precalculus": 135}
GPQA_SIZES = {"diamond": 198, "extended": 546, "main": 448}
MUSR_SIZES = {"murder_mysteries": 250, "object_placements": 256, "team_allocation": 250}  # catalog order
MUSR_BASE = {"murder_mysteries": 1 / 2, "object_placements": 1 / 5, "team_allocation": 1 / 3}
R2 = 0.005 + 1e-9  # a value rounded to 2 decimals
FP = 1e-6  # full precision
COLUMNS = ["ds", "table", "rule", "col", "n", "amb_dropped", "max", "median", "tol", "agree", "agree_1/size", "note"]


def load(folder: Path, name: str) -> tuple[np.ndarray, list[str]]:
    """Scores and sloth-style model names; identical rows repeated under one name are collapsed."""
    m = load_response_matrix(folder, include_excluded=True)
    names = [n.replace("__", "/", 1) if name == "mdad_gpqa" else n for n in m.model_names]
    names = [re.sub(r"#\d+$", "", n) for n in names]
    first, keep = {}, []
    for i, n in enumerate(names):
        if n in first and np.array_equal(m.scores[first[n]], m.scores[i]):
            continue
        first.setdefault(n, i)
        keep.append(i)
    print(f"[{name}] {len(names)} rows, {len(names) - len(keep)} identical repeated-name rows collapsed")
    return m.scores[keep], [names[i] for i in keep]


def join_keys(names: list[str], table: pd.DataFrame, rule: str) -> tuple[list[str], list[str]]:
    """Both sides' join keys: ``exact`` name, ``ci`` lower-cased, ``short`` lower-cased without the org."""
    models = table["Model"].astype(str)
    if rule == "exact":
        return list(names), models.tolist()
    if rule == "ci":
        return [n.lower() for n in names], models.str.lower().tolist()
    return [n.split("/")[-1].lower() for n in names], models.str.split("/").str[-1].str.lower().tolist()


def joined(names: list[str], tables: dict, tab: str):
    """Yield (rule, table, matrix rows, table rows, #keys dropped as ambiguous) for each join rule of a table;
    a key found more than once on either side is dropped."""
    for rule in RULES[tab]:
        mk, tk = join_keys(names, tables[tab], rule)
        mcount, tcount, tpos = Counter(mk), Counter(tk), {k: i for i, k in enumerate(tk)}
        pairs = [(i, tpos[k]) for i, k in enumerate(mk) if mcount[k] == 1 and tcount[k] == 1]
        amb = sum(1 for k in mcount if k in tcount and (mcount[k] > 1 or tcount[k] > 1))
        mi, ti = (np.array(p, dtype=int) for p in zip(*pairs))
        yield rule, tables[tab], mi, ti, amb


def sub_means(S: np.ndarray, sizes) -> list[np.ndarray]:
    """Per-row means of consecutive column blocks of the given sizes (which must cover S)."""
    bounds = np.cumsum([0, *sizes])
    assert bounds[-1] == S.shape[1], (bounds[-1], S.shape)
    return [S[:, a:b].mean(1) for a, b in itertools.pairwise(bounds)]


def err(a, b, within=False) -> str:
    """n, max and median of |a - b| over the non-missing pairs (and how many are within .005)."""
    d = np.abs(np.asarray(a, float) - np.asarray(b, float))
    d = d[~np.isnan(d)]
    tail = f"  within .005: {(d <= R2).sum()}" if within else ""
    return f"n={len(d)} max={d.max():.4f} median={np.median(d):.4f}{tail}"


def misses(labels, x, y, digits: int) -> list:
    """(label, x, y) wherever x and y differ by more than 2-decimal rounding."""
    return [(labels[i], round(float(x[i]), digits), float(y[i])) for i in np.flatnonzero(np.abs(x - y) > R2)]


class Summary(list):
    """The summary rows, one per comparison of matrix-derived values x with table values y."""

    def bind(self, ds, table, rule, amb):
        """An ``add`` for one dataset, table and join."""
        return lambda col, x, y, tol, size=None, note="": self.add(ds, table, rule, amb, col, x, y, tol, size, note)

    def add(self, ds, table, rule, amb, col, x, y, tol, size=None, note=""):
        d = np.abs(np.asarray(x, float) - np.asarray(y, float))
        d = d[~np.isnan(d)]
        row = dict(ds=ds, table=table, rule=rule, col=col, n=len(d), amb_dropped=amb, tol=tol, note=note)
        row.update(max=d.max() if len(d) else np.nan, median=np.median(d) if len(d) else np.nan)
        row.update(agree=int((d <= tol + 1e-9).sum()))
        row["agree_1/size"] = int((d <= 1 / size + 1e-9).sum()) if size else np.nan
        self.append(row)


def check_musr(S, names, tables, out: Summary):
    """Subtask columns, totals, the block-order permutation test and the display hypothesis."""
    print("=== musr", S.shape)
    for rule, tab, mi, ti, amb in joined(names, tables, "v2"):
        add, means, y = out.bind("musr", "v2", rule, amb), sub_means(S[mi], MUSR_SIZES.values()), tab["MUSR"].values[ti]
        for (sub, n), mm in zip(MUSR_SIZES.items(), means):
            add(f"musr_{sub}", mm, tab[f"musr_{sub}"].values[ti], FP, n)
        add("MUSR(micro mean)", S[mi].mean(1), y, R2)
        add("MUSR(macro mean)", np.mean(means, 0), y, R2)
        print("musr permutations vs data_v2 subtask columns (order of blocks in matrix):")
        best = (-1, None)
        for perm in itertools.permutations(MUSR_SIZES):
            means = sub_means(S[mi], [MUSR_SIZES[s] for s in perm])
            d = np.concatenate([np.abs(mm - tab[f"musr_{s}"].values[ti]) for s, mm in zip(perm, means)])
            d = d[~np.isnan(d)]
            exact = int((d <= FP).sum())
            best = max(best, (exact, perm))
            print(f"  {perm}: n_pairs={len(d)} max={d.max():.6f} median={np.median(d):.6f} within1e-6={exact}/{len(d)}")
        tag = "the catalog order" if best[1] == tuple(MUSR_SIZES) else "NOT the catalog order"
        print(f"  best order: {best[1]} ({tag}), within1e-6={best[0]}")
    for rule, tab, mi, ti, amb in joined(names, tables, "new"):
        add, means = out.bind("musr", "new", rule, amb), sub_means(S[mi], MUSR_SIZES.values())
        raw, shown = tab["MUSR Raw"].values[ti], tab["MUSR"].values[ti]
        disp = 100 * np.mean([np.maximum(0, (mm - b) / (1 - b)) for b, mm in zip(MUSR_BASE.values(), means)], 0)
        add("MUSR Raw(micro)", S[mi].mean(1), raw, R2)
        add("MUSR Raw(macro)", np.mean(means, 0), raw, R2)
        add("MUSR display vs hyp(matrix subtasks)", disp, shown, R2, note="display has 2 dec (percent) -> tol .005")
        if rule == "exact":
            labels = [names[i] for i in mi]
            print("musr display-hypothesis misses (>0.005):", misses(labels, disp, shown, 3))
            print("musr Raw(macro) misses:", misses(labels, np.mean(means, 0), raw, 4))


def check_ifeval(S, names, tables, out: Summary):
    """Matrix mean vs IFEval totals, and the j/834 grid test of the implied instruction-level score."""
    print("=== ifeval", S.shape)
    for rule, tab, mi, ti, amb in joined(names, tables, "v2"):
        out.add("ifeval", "v2", rule, amb, "IFEval", S[mi].mean(1), tab["IFEval"].values[ti], R2)
    for rule, tab, mi, ti, amb in joined(names, tables, "new"):
        x, raw, disp = S[mi].mean(1), tab["IFEval Raw"].values[ti], tab["IFEval"].values[ti] / 100
        out.add("ifeval", "new", rule, amb, "IFEval Raw", x, raw, R2)
        out.add("ifeval", "new", rule, amb, "IFEval display/100", x, disp, 5e-5)
        if rule != "exact":
            continue
        n, gap = len(x), disp - x
        inst = 2 * disp - x  # instruction-level strict, if display = mean(prompt, inst) and the matrix is prompt-level
        on_grid = lambda v: int((np.abs(v * 834 - np.round(v * 834)) <= 834 * 1e-4 + 1e-9).sum())
        within = lambda a, b: f"{(np.abs(a - b) <= R2).sum()}/{n}"
        stats = f"min={gap.min():.4f} median={np.median(gap):.4f} max={gap.max():.4f}"
        print(f"ifeval: display/100 - prompt_strict(matrix): {stats}  (n={n})")
        stats = f"min={inst.min():.4f} max={inst.max():.4f}; inst>=prompt for {(inst >= x - 1e-4).sum()}/{n}"
        print(f"ifeval: implied inst_strict = 2*disp-prompt: {stats}")
        stats = f"max={np.max(np.abs(raw - disp)):.4f}, within .005: {within(raw, disp)}"
        print(f"ifeval: |Raw - display/100| {stats}; |Raw - prompt| within .005: {within(raw, x)}")
        chance = f"(chance ~{834 * 2e-4:.3f})"
        print(f"ifeval grid test: 2*display/100 - matrix_mean on j/834 grid (tol 1e-4): {on_grid(inst)}/{n} {chance}")
        for label, shift in (("+", 1 / 541), ("-", -1 / 541)):
            print(f"   control matrix_mean{label}1/541: {on_grid(2 * disp - x - shift)}/{n}")


def best_orders(S, cols, subset):
    """Every contiguous order of the subset's blocks, best first: (#pairs within 1e-6, median, max, order, n)."""
    res = []
    for perm in itertools.permutations(subset):
        means = sub_means(S, [MATH_SIZES[s] for s in perm])
        d = np.concatenate([np.abs(mm - cols[s]) for s, mm in zip(perm, means)])
        res.append((int((d <= FP).sum()), np.median(d), d.max(), perm, len(d)))
    return sorted(res, key=lambda r: (-r[0], r[1]))


def check_math(S, names, tables, out: Summary):
    """The 894-item subset search, its best contiguous order, and the totals."""
    print("=== openllm_math", S.shape, "all-zero rows:", int((S.sum(1) == 0).sum()))
    subs, n_items = list(MATH_SIZES), S.shape[1]
    combos = itertools.chain.from_iterable(itertools.combinations(subs, k) for k in range(1, 8))
    subsets = [c for c in combos if sum(MATH_SIZES[s] for s in c) == n_items]
    print("subsets of math subtasks summing to", n_items, ":", subsets)
    for rule, tab, mi, ti, amb in joined(names, tables, "v2"):
        add, Sj, total, lvl5 = out.bind("math", "v2", rule, amb), S[mi], S[mi].sum(1), tab["MATH Lvl 5"].values[ti]
        C = np.column_stack([np.round(tab[f"math_{s}_hard"].values[ti] * MATH_SIZES[s]) for s in subs])  # correct
        ok = ~np.isnan(C).any(1) & (total > 0)  # all-zero rows are failed runs
        cols = {s: tab[f"math_{s}_hard"].values[ti][ok] for s in subs}
        add("MATH Lvl5 (2dec)", Sj.mean(1), lvl5, R2)
        add("weighted mean of 7 subtask cols (1324)", Sj.mean(1), C.sum(1) / 1324, 1 / n_items)
        add("MATH Lvl5 (2dec) vs 7-subtask wmean", C.sum(1) / 1324, lvl5, R2, note="sloth-internal check")
        print(f"math/v2 {rule}: joined={len(mi)}, with subtask data & nonzero matrix row={ok.sum()}")
        best = None
        for c in subsets:
            d = np.abs(C[:, [subs.index(s) for s in c]].sum(1)[ok] - total[ok])
            stats = f"{(d == 0).sum()}/{ok.sum()} models; max|diff|={d.max():.0f} median={np.median(d):.0f}"
            print(f"  subset {c}: total-correct equal for {stats}")
            res = best_orders(Sj[ok], cols, c)
            best = best if best and best[0] >= res[0][0] else res[0]
            print(f"    {len(res)} contiguous orders; top 3 by #(model,subtask) pairs within 1e-6:")
            for r in res[:3]:
                print(f"      {r[3]}: within1e-6={r[0]}/{r[4]} median|d|={r[1]:.4f} max={r[2]:.4f}")
        order = best[3]
        kind = "alphabetical" if list(order) == sorted(order) else "best found"
        for s, mm in zip(order, sub_means(Sj[ok], [MATH_SIZES[s] for s in order])):
            label = f"math_{s}_hard [block order {kind}, {n_items}={len(order)} subtasks]"
            add(label, mm, cols[s], FP, MATH_SIZES[s], note="nonzero rows only")
        counted = C[:, [subs.index(s) for s in order]].sum(1)
        miss = [(names[mi[k]], int(total[k]), int(counted[k])) for k in np.flatnonzero(ok & (counted != total))]
        print(f"  models whose total correct differs from sloth {len(order)}-subtask count:", miss)
        zero = total == 0
        print(
            f"  all-zero matrix rows among v2-joined: {zero.sum()}; their sloth MATH Lvl 5:",
            lvl5[zero].round(2).tolist(),
        )
    for rule, tab, mi, ti, amb in joined(names, tables, "new"):
        x, raw, nz = S[mi].mean(1), tab["MATH Lvl 5 Raw"].values[ti], S[mi].sum(1) > 0
        out.add("math", "new", rule, amb, "MATH Lvl 5 Raw", x, raw, R2)
        out.add("math", "new", rule, amb, "MATH Lvl 5 Raw (nonzero rows)", x[nz], raw[nz], R2)


def check_arc(S, names, tables, out: Summary):
    """Matrix mean vs ARC in the old leaderboard (percent) and data_v1/v2."""
    print("=== arc", S.shape)
    note = "old: percent 2dec -> tol 5e-5; v1/v2: mixed precision"
    for tn in ("old", "v2", "v1"):
        col, scale, tol = ("ARC/100", 100, 5e-5) if tn == "old" else ("ARC", 1, FP)
        for rule, tab, mi, ti, amb in joined(names, tables, tn):
            out.add("arc", tn, rule, amb, col, S[mi].mean(1), tab["ARC"].values[ti] / scale, tol, 1172, note)


def check_gpqa(S, names, tables, out: Summary):
    """Matrix mean vs gpqa_main (the other two subsets as controls) and the GPQA totals."""
    print("=== gpqa", S.shape)
    for rule, tab, mi, ti, amb in joined(names, tables, "v2"):
        add, x, main_ = out.bind("gpqa", "v2", rule, amb), S[mi].mean(1), tab["gpqa_main"].values[ti]
        add("gpqa_main", x, main_, FP, 448)
        k = np.round((x - main_) * 448)
        dist = pd.Series(k[~np.isnan(k)].astype(int)).value_counts().sort_index().to_dict()
        print("gpqa: (matrix correct - sloth gpqa_main*448) distribution:", dist)
        add("GPQA (2dec)", x, tab["GPQA"].values[ti], R2)
        for s in ("diamond", "extended"):
            add(f"gpqa_{s} (control)", x, tab[f"gpqa_{s}"].values[ti], FP)
    for rule, tab, mi, ti, amb in joined(names, tables, "new"):
        out.add("gpqa", "new", rule, amb, "GPQA Raw", S[mi].mean(1), tab["GPQA Raw"].values[ti], R2)


def check_sloth_duplicates(matrices, tables):
    """For names the joins dropped as duplicated in sloth: does any of their table rows match?"""
    checks = [("musr", "new", "MUSR Raw", 1, R2), ("ifeval", "new", "IFEval Raw", 1, R2)]
    checks += [("arc_challenge", "old", "ARC", 100, 5e-5), ("mdad_gpqa", "new", "GPQA Raw", 1, R2)]
    for ds, tn, col, scale, tol in checks:
        (S, names), tab = matrices[ds], tables[tn]
        idx = tab.groupby(tab["Model"].astype(str)).indices
        dups = [(i, idx[n]) for i, n in enumerate(names) if n in idx and len(idx[n]) > 1]
        hits = sum(min(abs(S[i].mean() - tab[col].values[j] / scale)) <= tol for i, j in dups)
        print(f"{ds}: sloth-duplicate names joined={len(dups)}, any-row within tol: {hits}")


def check_normalisation(tables):
    """How the new leaderboard's displayed scores follow from raw accuracies and data_v2 subtasks."""
    print("\n=== normalization (open-llm-leaderboard_new.csv)")
    new, v2 = tables["new"], tables["v2"]
    norm = lambda raw, b: 100 * np.maximum(0, (raw - b) / (1 - b))
    print(
        "GPQA display vs max(0,(Raw-.25)/.75)*100:",
        err(new["GPQA"], norm(new["GPQA Raw"], 1 / 4)),
        "(Raw-rounding bound 0.667)",
    )
    zero = new["GPQA"] == 0
    print("GPQA: display==0 count:", zero.sum(), "raw<=0.25 among them:", (zero & (new["GPQA Raw"] <= 0.25)).sum())
    print("MATH display vs Raw*100:", err(new["MATH Lvl 5"], new["MATH Lvl 5 Raw"] * 100), "(bound 0.5)")
    print("IFEval display vs Raw*100:", err(new["IFEval"], new["IFEval Raw"] * 100), "(bound 0.5)")
    print("MUSR display vs raw-based single-baseline guesses:")
    for b in (1 / 2, 1 / 3, 1 / 5, 0.0):
        print(f"   b={b:.3f}: ", err(new["MUSR"], norm(new["MUSR Raw"], b)))
    key = new["Model"].str.split("/").str[-1].str.lower()
    new = new[key.map(key.value_counts()) == 1].assign(key=key)
    j = v2.assign(key=v2["Model"].str.lower()).merge(new, on="key", suffixes=("_v2", "_new"))
    print("data_v2 <-> _new joined by short name (unique):", len(j))
    wmean = lambda fmt, sizes: sum(j[fmt.format(s)] * n for s, n in sizes.items()) / sum(sizes.values())
    mean = lambda fmt, sizes: np.mean([j[fmt.format(s)] for s in sizes], 0)
    musr = np.mean([norm(j[f"musr_{s}"], b) for s, b in MUSR_BASE.items()], 0)
    gpqa, math = wmean("gpqa_{}", GPQA_SIZES), wmean("math_{}_hard", MATH_SIZES)
    print("  MUSR display vs hypothesis(data_v2 subtasks):", err(j["MUSR_new"], musr, within=True))
    print("  GPQA display vs hyp(size-weighted 3 subtasks):", err(j["GPQA_new"], norm(gpqa, 1 / 4), within=True))
    print("  GPQA display vs hyp(macro mean 3 subtasks):", err(j["GPQA_new"], norm(mean("gpqa_{}", GPQA_SIZES), 1 / 4)))
    print("  GPQA Raw vs size-weighted 3 subtasks:", err(j["GPQA Raw"], gpqa))
    print("  MATH display vs 100*size-weighted 7 subtasks:", err(j["MATH Lvl 5_new"], math * 100, within=True))
    print(
        "  MATH display vs 100*macro mean 7 subtasks:", err(j["MATH Lvl 5_new"], mean("math_{}_hard", MATH_SIZES) * 100)
    )
    musr_raw = err(j["MUSR Raw"], wmean("musr_{}", MUSR_SIZES)), err(j["MUSR Raw"], mean("musr_{}", MUSR_SIZES))
    print("  MUSR Raw vs size-weighted subtasks: {} | vs macro: {}".format(*musr_raw))
    ifeval = err(j["IFEval_v2"], j["IFEval Raw"]), err(j["IFEval_v2"], j["IFEval_new"] / 100)
    print("  data_v2 IFEval vs _new IFEval Raw: {} | vs _new display/100: {}".format(*ifeval))
    same = err(j["MUSR_v2"], j["MUSR Raw"]), err(j["GPQA_v2"], j["GPQA Raw"])
    print("  data_v2 MUSR vs _new MUSR Raw: {} | data_v2 GPQA vs GPQA Raw: {}".format(*same))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", type=Path, default=Path("results"), help="reads <data-dir>/data/<name>/")
    ap.add_argument("--raw-dir", type=Path, default=Path("../shared/raw"), help="sloth tables in <raw-dir>/sloth/data/")
    ap.add_argument("--out", type=Path, default=Path("results/tables/lm_eval_identity_check.csv"), help="summary CSV")
    args = ap.parse_args(argv)
    for name in DATASETS:
        folder = (args.data_dir / "data" / name).as_posix()
        if not Path(folder, "responses.parquet").exists():
            print(
                f"{folder} is missing; build it with: snakemake --cores all {folder}/responses.parquet", file=sys.stderr
            )
            return 2
    sloth = args.raw_dir / "sloth" / "data"
    missing = [f for f in TABLES.values() if not (sloth / f).exists()]
    if missing:
        print(f"{sloth} lacks the sloth tables {', '.join(missing)}", file=sys.stderr)
        return 2
    pd.set_option("display.width", 250)
    tables = {k: pd.read_csv(sloth / f).copy() for k, f in TABLES.items()}  # copy: de-fragment the wide frames
    matrices = {name: load(args.data_dir / "data" / name, name) for name in DATASETS}
    out = Summary()
    check_musr(*matrices["musr"], tables, out)
    check_ifeval(*matrices["ifeval"], tables, out)
    check_math(*matrices["openllm_math"], tables, out)
    check_arc(*matrices["arc_challenge"], tables, out)
    check_gpqa(*matrices["mdad_gpqa"], tables, out)
    check_sloth_duplicates(matrices, tables)
    summary = pd.DataFrame(out)[COLUMNS]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    summary.to_csv(args.out, index=False)
    print(summary.to_string(float_format=lambda v: f"{v:.6g}"))
    check_normalisation(tables)
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
