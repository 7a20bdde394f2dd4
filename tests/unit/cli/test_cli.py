"""`benchcast complete` and the reliability model behind it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from benchcast.cli import main
from benchcast.completion.complete import ReliabilityModel, build_reliability_model, complete_new_model
from benchcast.completion.predictors import PredictorConfig, PredictorSet
from benchcast.completion.reliability import FEATURE_SETS
from benchcast.data.aggregate import read_benchpress, write_aggregate
from benchcast.errors import DataError
from benchcast.studies.benchpress.settings import DEFAULT_GRID, PAPER_PREDICTORS, SELECTED_CONFIG


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """A 20 x 8 BenchPress-style dump (one Elo column) ingested to Parquet, and a reliability
    model with a constant risk of 2 points, conformal scale 3 and a two-point trust map."""
    root = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(5)
    logits = rng.normal(size=(20, 2)) @ rng.normal(size=(2, 8))
    scores = 100 / (1 + np.exp(-logits))
    scores[:, 7] = 1200 + 50 * logits[:, 7]
    observed = rng.random(scores.shape) < 0.7
    observed[:, 0] = True
    doc = {
        "models": [{"id": f"m{i}", "name": f"M{i}"} for i in range(20)],
        "benchmarks": [{"id": f"bench_{j}", "name": f"Bench {j}"} for j in range(8)],
        "observed": [[round(float(scores[i, j]), 2) if observed[i, j] else None for j in range(8)] for i in range(20)],
        "sources": [[None] * 8 for _ in range(20)],
    }
    (root / "data.json").write_text(json.dumps(doc))
    write_aggregate(read_benchpress(root / "data.json"), root / "data")
    names = list(FEATURE_SETS["hybrid"])
    rel = ReliabilityModel(
        features=names,
        architecture=[],
        layers=[{"weight": [[0.0]] * len(names), "bias": [float(np.log1p(2.0))]}],
        scaler_mean=[0.0] * len(names),
        scaler_scale=[1.0] * len(names),
        conformal_scale=3.0,
        level=0.9,
        trust_threshold=10.0,
        trust_risk=[1.0, 3.0],
        trust_probability=[0.9, 0.5],
        predictors=PAPER_PREDICTORS.to_dict(),
    )
    rel.to_json(root / "rel_folds.json")
    # the same network calibrated for new models: k = 3 known scores, then k = 5 (narrower)
    rel.calibration, rel.trust_scale = "new_model", "percent_of_scale"
    rel.by_k = {
        "3": {"conformal_scale": 3.0, "trust_risk": [1.0, 3.0], "trust_probability": [0.9, 0.5], "cells": 100},
        "5": {"conformal_scale": 2.0, "trust_risk": [1.0, 3.0], "trust_probability": [0.95, 0.6], "cells": 100},
    }
    rel.to_json(root / "rel.json")
    return root


def _run(toy, tmp_path, text, suffix=".csv", extra=()):
    f = tmp_path / f"known{suffix}"
    f.write_text(text)
    return main(["complete", str(f), "--data", str(toy / "data"), "--reliability", str(toy / "rel.json"), *extra])


def test_complete_writes_every_benchmark_with_intervals(toy, tmp_path, capsys):
    out = tmp_path / "pred.csv"
    assert _run(toy, tmp_path, "benchmark_id,score\nbench_0,55.5\nbench_3,20\n", extra=("--out", str(out))) == 0
    table = pd.read_csv(out)
    assert list(table.benchmark_id) == [f"bench_{j}" for j in range(8)]
    known = table[table.known]
    assert known.set_index("benchmark_id").score.to_dict() == {"bench_0": 55.5, "bench_3": 20.0}
    assert known[["lower", "upper", "trust_probability"]].isna().all().all()
    pred = table[~table.known]
    # constant risk 2 x conformal scale 3: +-6 points, clipped to [0, 100] on percentage columns
    width = pred.upper - pred.lower
    assert np.allclose(width[pred.benchmark_id == "bench_7"], 12.0)
    assert (width <= 12.0 + 1e-9).all() and (pred.lower >= 0).all()
    # trust is scale-aware: risk 2 is 2 points on percentage benchmarks, halfway between (1, 0.9) and (3, 0.5)
    pct = pred.benchmark_id != "bench_7"
    assert np.allclose(pred.trust_probability[pct], 0.7) and (pred.calibrated_k == 3).all()
    elo_range = np.ptp(pd.read_parquet(toy / "data" / "scores.parquet").query("benchmark_id == 'bench_7'").score)
    assert np.allclose(pred.trust_probability[~pct], np.interp(2 * 100 / elo_range, [1, 3], [0.9, 0.5]))
    printed = capsys.readouterr().out
    assert "predictions for 6 benchmarks" in printed and "calibrated for new models with 3 known scores" in printed
    assert "% of the observed range on others" in printed
    # the point predictions are the default predictor's on the matrix with the new row appended
    from benchcast.data.aggregate import load_score_matrix as load_matrix

    M, _, _ = load_matrix(*(toy / "data" / f"{k}.parquet" for k in ("scores", "models", "benchmarks")))
    row = np.full(8, np.nan)
    row[[0, 3]] = [55.5, 20.0]
    expect = SELECTED_CONFIG.predict(np.vstack([M, row]))[-1]
    np.testing.assert_allclose(pred.score.to_numpy(), expect[~np.isin(np.arange(8), [0, 3])], atol=1e-4)


def test_json_inputs_and_point_only_mode(toy, tmp_path):
    assert _run(toy, tmp_path, '{"bench_0": 50, "bench_1": 61.0}', ".json") == 0
    assert _run(toy, tmp_path, '[{"benchmark_id": "bench_0", "score": 50}]', ".json", ("--no-intervals",)) == 0


@pytest.mark.parametrize(
    "text,suffix,message",
    [
        ("benchmark_id,score\nbench_9,50\n", ".csv", "unknown benchmark id"),
        ("benchmark_id,score\nbench_O,50\n", ".csv", "did you mean bench_"),
        ("benchmark_id,score\nbench_0,50\nbench_0,51\n", ".csv", "given twice"),
        ('{"bench_0": 50, "bench_0": 51}', ".json", "given twice"),
        ("benchmark_id,score\nbench_0,150\n", ".csv", "outside [0, 100]"),
        ("benchmark_id,score\nbench_7,-3\n", ".csv", "negative"),
        ("benchmark_id,score\nbench_0,abc\n", ".csv", "not a number"),
        ("benchmark_id,score\nbench_0,nan\n", ".csv", "not a finite number"),
        ("model,value\nbench_0,50\n", ".csv", "missing column"),
        ("benchmark_id,score\n", ".csv", "no scores given"),
        ('[{"id": "bench_0"}]', ".json", "'benchmark_id' and 'score'"),
        ("benchmark_id,score\nbench_0,71,2\n", ".csv", "has 3 fields"),
        ("benchmark_id,score\nbench_0,0.712\n", ".csv", "looks like a fraction"),
        ("{not json", ".json", "JSON"),
    ],
)
def test_bad_input_gets_a_clear_error(toy, tmp_path, capsys, text, suffix, message):
    assert _run(toy, tmp_path, text, suffix) == 2
    err = capsys.readouterr().err
    assert message in err and "Fix:" in err


def test_missing_reliability_model_and_matrix_say_how_to_build_them(toy, tmp_path, capsys):
    f = tmp_path / "k.csv"
    f.write_text("benchmark_id,score\nbench_0,50\n")
    assert main(["complete", str(f), "--data", str(toy / "data"), "--reliability", str(tmp_path / "none.json")]) == 2
    assert "rule bp_complete" in capsys.readouterr().err
    assert main(["complete", str(f), "--data", str(tmp_path / "nodata")]) == 2
    assert "ingested BenchPress matrix is missing" in capsys.readouterr().err


def test_deployed_model_roundtrip_and_calibration(tmp_path):
    """build_reliability_model on a synthetic feature table: the exported network reproduces the fitted
    risk model after a JSON round trip, and its conformal intervals cover ~90% of held-out cells."""
    rng = np.random.default_rng(0)
    names = list(FEATURE_SETS["hybrid"])
    n = 3000
    X = np.abs(rng.normal(size=(n, len(names))))
    scale = 0.5 + 2.0 * X[:, 0]
    err = np.abs(rng.normal(size=n) * scale)
    feats = pd.DataFrame(X, columns=names).assign(abs_err=err, fold_id=np.repeat(np.arange(6), n // 6))
    model, ev = build_reliability_model(feats, "hybrid", predictors=PAPER_PREDICTORS, seed=1, grid=DEFAULT_GRID)
    assert 0.87 <= ev["conformal"].coverage <= 0.93
    model.to_json(tmp_path / "m.json")
    again = ReliabilityModel.from_json(tmp_path / "m.json")
    np.testing.assert_allclose(again.risk(X[:50]), model.risk(X[:50]))
    assert again.predictor_set() == PAPER_PREDICTORS
    assert np.corrcoef(model.risk(X), scale)[0, 1] > 0.5  # the risk tracks the planted noise scale
    t = again.trust(np.array([0.0, 1.0, 5.0, 1e6]))
    assert (np.diff(t) <= 1e-12).all() and ((t >= 0) & (t <= 1)).all()
    bad = json.loads((tmp_path / "m.json").read_text())
    bad["format_version"] = 99
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(DataError, match="format_version"):
        ReliabilityModel.from_json(tmp_path / "bad.json")


def test_complete_new_model_without_reliability_is_point_only():
    rng = np.random.default_rng(1)
    M = 100 / (1 + np.exp(-(rng.normal(size=(12, 2)) @ rng.normal(size=(2, 5)))))
    M[rng.random(M.shape) < 0.2] = np.nan
    out = complete_new_model(M, [f"b{j}" for j in range(5)], {"b0": 40.0}, None, predictor=SELECTED_CONFIG)
    assert out.known.sum() == 1 and out.score.notna().all() and out.lower.isna().all()
    with pytest.raises(ValueError, match="point predictor"):
        complete_new_model(M, [f"b{j}" for j in range(5)], {"b0": 40.0}, None)


def test_a_reliability_model_completes_with_the_predictors_it_records(toy):
    """The deployed model's ``predictors`` (not a library default) make the point predictions."""
    from benchcast.data.aggregate import load_score_matrix

    M, _, benchmarks = load_score_matrix(*(toy / "data" / f"{k}.parquet" for k in ("scores", "models", "benchmarks")))
    ids = list(benchmarks["benchmark_id"])
    other = PredictorConfig.of("identity", "soft_impute", rank=2)
    rel = ReliabilityModel.from_json(toy / "rel.json")
    rel.predictors = PredictorSet(other, PAPER_PREDICTORS.lambda_stack, PAPER_PREDICTORS.strong_stack).to_dict()
    out = complete_new_model(M, ids, {"bench_0": 55.5, "bench_3": 20.0}, rel)
    row = np.full(M.shape[1], np.nan)
    row[[0, 3]] = [55.5, 20.0]
    missing = ~out["known"].to_numpy()
    expect = other.predict(np.vstack([M, row]))[-1]
    np.testing.assert_allclose(out["score"].to_numpy()[missing], expect[missing])
    assert not np.allclose(expect[missing], SELECTED_CONFIG.predict(np.vstack([M, row]))[-1][missing])


def test_k_known_picks_the_calibration_and_bounds_stay_valid(toy, tmp_path, capsys):
    """5 known scores use the k = 5 calibration (+-4 points); a huge interval stops at 0 on the
    Elo column (all its scores are positive) and within [0, 100] on percentages."""
    out = tmp_path / "pred.csv"
    known = "benchmark_id,score\n" + "".join(f"bench_{j},{40 + j}\n" for j in range(5))
    assert _run(toy, tmp_path, known, extra=("--out", str(out))) == 0
    pred = pd.read_csv(out).query("not known")
    assert (pred.calibrated_k == 5).all() and np.allclose(
        (pred.upper - pred.lower)[pred.benchmark_id == "bench_7"], 8.0
    )
    assert "optimistic" not in capsys.readouterr().out
    rel = json.loads((toy / "rel.json").read_text())
    rel["by_k"]["5"]["conformal_scale"] = 1e4
    (tmp_path / "wide.json").write_text(json.dumps(rel))
    f = tmp_path / "k.csv"
    f.write_text(known)
    assert (
        main(
            [
                "complete",
                str(f),
                "--data",
                str(toy / "data"),
                "--reliability",
                str(tmp_path / "wide.json"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    wide = pd.read_csv(out).query("not known")
    assert (wide.lower == 0).all() and (wide.upper[wide.benchmark_id != "bench_7"] == 100).all()


def test_fold_calibrated_model_is_flagged_and_fractions_can_be_accepted(toy, tmp_path, capsys):
    f = tmp_path / "k.csv"
    f.write_text("benchmark_id,score\nbench_0,0.712\n")
    assert (
        main(
            [
                "complete",
                str(f),
                "--data",
                str(toy / "data"),
                "--reliability",
                str(toy / "rel_folds.json"),
                "--accept-low-scores",
            ]
        )
        == 0
    )
    assert "not on new models" in capsys.readouterr().out


def test_top_must_be_positive_and_names_are_not_cut(toy, tmp_path, capsys):
    f = tmp_path / "k.csv"
    f.write_text("benchmark_id,score\nbench_0,50\n")
    with pytest.raises(SystemExit):
        main(["complete", str(f), "--data", str(toy / "data"), "--top", "-3"])
    assert "expected a whole number >= 1" in capsys.readouterr().err
    import pyarrow.parquet as pq

    long_data = tmp_path / "data"
    long_data.mkdir()
    for k in ("scores", "models"):
        (long_data / f"{k}.parquet").write_bytes((toy / "data" / f"{k}.parquet").read_bytes())
    b = pq.read_table(toy / "data" / "benchmarks.parquet").to_pandas()
    b.loc[3, "name"] = "A benchmark name that is much longer than forty-two characters in all"
    b.to_parquet(long_data / "benchmarks.parquet")
    assert main(["complete", str(f), "--data", str(long_data), "--no-intervals"]) == 0
    assert "A benchmark name that is much longer than forty-two characters in all" in capsys.readouterr().out


def test_benchmarks_lists_ids_scales_and_ranges(toy, tmp_path, capsys):
    out = tmp_path / "b.csv"
    assert main(["benchmarks", "--data", str(toy / "data"), "--out", str(out)]) == 0
    table = pd.read_csv(out)
    assert list(table.benchmark_id) == [f"bench_{j}" for j in range(8)]
    assert table.loc[7, "min"] > 1000 and table.models_observed.iloc[0] == 20
    assert "bench_7" in capsys.readouterr().out
    assert main(["benchmarks", "--data", str(toy / "data"), "--grep", "BENCH 7"]) == 0
    printed = capsys.readouterr().out
    assert "bench_7" in printed and "bench_6" not in printed


def test_the_command_line_starts_without_scipy_stats():
    """scipy.stats is half a second of import: `select` / `estimate` (2-second budget per call)
    must not pay it for `plan`'s and `complete`'s sake; they import it on first use."""
    import subprocess
    import sys

    code = "import sys, benchcast.cli; assert 'scipy.stats' not in sys.modules, 'scipy.stats imported at start'"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
