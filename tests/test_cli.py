"""`benchcast complete` and the deployable reliability model behind it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from benchcast.cli import main
from benchcast.completion.deploy import DeployedReliability, build_deployed, complete_new_model
from benchcast.completion.reliability import FEATURE_SETS, SELECTED_CONFIG
from benchcast.data.aggregate import read_benchpress, write_aggregate
from benchcast.errors import DataError


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
    doc = {"models": [{"id": f"m{i}", "name": f"M{i}"} for i in range(20)],
           "benchmarks": [{"id": f"bench_{j}", "name": f"Bench {j}"} for j in range(8)],
           "observed": [[round(float(scores[i, j]), 2) if observed[i, j] else None for j in range(8)] for i in range(20)],
           "sources": [[None] * 8 for _ in range(20)]}
    (root / "data.json").write_text(json.dumps(doc))
    write_aggregate(read_benchpress(root / "data.json"), root / "data")
    names = list(FEATURE_SETS["hybrid"])
    rel = DeployedReliability(
        features=names, architecture=[], layers=[{"weight": [[0.0]] * len(names), "bias": [float(np.log1p(2.0))]}],
        scaler_mean=[0.0] * len(names), scaler_scale=[1.0] * len(names), conformal_scale=3.0, level=0.9,
        trust_threshold=10.0, trust_risk=[1.0, 3.0], trust_probability=[0.9, 0.5])
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
    assert np.allclose(pred.trust_probability, 0.7)            # risk 2: halfway between (1, 0.9) and (3, 0.5)
    printed = capsys.readouterr().out
    assert "predictions for 6 benchmarks" in printed and "only 2 known scores" in printed
    # the point predictions are the default predictor's on the matrix with the new row appended
    from benchcast.studies.benchpress import load_matrix
    M, _, _ = load_matrix(*(toy / "data" / f"{k}.parquet" for k in ("scores", "models", "benchmarks")))
    row = np.full(8, np.nan)
    row[[0, 3]] = [55.5, 20.0]
    expect = SELECTED_CONFIG.predict(np.vstack([M, row]))[-1]
    np.testing.assert_allclose(pred.score.to_numpy(), expect[~np.isin(np.arange(8), [0, 3])], atol=1e-4)


def test_json_inputs_and_point_only_mode(toy, tmp_path):
    assert _run(toy, tmp_path, '{"bench_0": 50, "bench_1": 61.0}', ".json") == 0
    assert _run(toy, tmp_path, '[{"benchmark_id": "bench_0", "score": 50}]', ".json", ("--no-intervals",)) == 0


@pytest.mark.parametrize("text,suffix,message", [
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
    ("{not json", ".json", "JSON"),
])
def test_bad_input_gets_a_clear_error(toy, tmp_path, capsys, text, suffix, message):
    assert _run(toy, tmp_path, text, suffix) == 2
    err = capsys.readouterr().err
    assert message in err and "Fix:" in err


def test_missing_reliability_model_and_matrix_say_how_to_build_them(toy, tmp_path, capsys):
    f = tmp_path / "k.csv"
    f.write_text("benchmark_id,score\nbench_0,50\n")
    assert main(["complete", str(f), "--data", str(toy / "data"), "--reliability", str(tmp_path / "none.json")]) == 2
    assert "snakemake benchpress" in capsys.readouterr().err
    assert main(["complete", str(f), "--data", str(tmp_path / "nodata")]) == 2
    assert "ingested BenchPress matrix is missing" in capsys.readouterr().err


def test_deployed_model_roundtrip_and_calibration(tmp_path):
    """build_deployed on a synthetic feature table: the exported network reproduces the fitted
    risk model after a JSON round trip, and its conformal intervals cover ~90% of held-out cells."""
    rng = np.random.default_rng(0)
    names = list(FEATURE_SETS["hybrid"])
    n = 3000
    X = np.abs(rng.normal(size=(n, len(names))))
    scale = 0.5 + 2.0 * X[:, 0]
    err = np.abs(rng.normal(size=n) * scale)
    feats = pd.DataFrame(X, columns=names).assign(abs_err=err, fold_id=np.repeat(np.arange(6), n // 6))
    model, ev = build_deployed(feats, "hybrid", seed=1)
    assert 0.87 <= ev["conformal"].coverage <= 0.93
    model.to_json(tmp_path / "m.json")
    again = DeployedReliability.from_json(tmp_path / "m.json")
    np.testing.assert_allclose(again.risk(X[:50]), model.risk(X[:50]))
    assert np.corrcoef(model.risk(X), scale)[0, 1] > 0.5      # the risk tracks the planted noise scale
    t = again.trust(np.array([0.0, 1.0, 5.0, 1e6]))
    assert (np.diff(t) <= 1e-12).all() and ((t >= 0) & (t <= 1)).all()
    bad = json.loads((tmp_path / "m.json").read_text())
    bad["format_version"] = 99
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(DataError, match="format_version"):
        DeployedReliability.from_json(tmp_path / "bad.json")


def test_complete_new_model_without_reliability_is_point_only():
    rng = np.random.default_rng(1)
    M = 100 / (1 + np.exp(-(rng.normal(size=(12, 2)) @ rng.normal(size=(2, 5)))))
    M[rng.random(M.shape) < 0.2] = np.nan
    out = complete_new_model(M, [f"b{j}" for j in range(5)], {"b0": 40.0}, None)
    assert out.known.sum() == 1 and out.score.notna().all() and out.lower.isna().all()
