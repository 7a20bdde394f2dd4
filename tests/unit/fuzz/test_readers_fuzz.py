"""Fuzzed inputs (issue 39): every reader a user feeds, given generated files -- arbitrary bytes, and
near-valid files whose cells, keys and values are drawn from what such a file holds and what it
should not -- returns a valid result or stops with a :class:`~benchcast.errors.BenchcastError`
(DataError / ConfigError: one line naming the file, the field and the fix), never another exception.

Reproducible: Hypothesis runs derandomized (a fixed seed from each test's name), without an example
database, with a fixed number of examples per strategy (:data:`EXAMPLES`); ``pytest
--hypothesis-show-statistics`` reports how many inputs each reader was given."""

from __future__ import annotations

import copy
import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import yaml
from helpers import REPO
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from benchcast.cli.complete import read_known_scores, validate_known_scores
from benchcast.data.answers import read_answers
from benchcast.data.catalog import load_catalog
from benchcast.errors import BenchcastError, ConfigError, DataError
from benchcast.lm_eval.board import build_board
from benchcast.new_model.leaderboard import load_leaderboard
from benchcast.studies import registry
from benchcast.workflow.config_check import ConfigSources, load_schema, validate

#: examples per strategy and reader (x2 strategies per file reader)
EXAMPLES = 200

FUZZ = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

ITEMS = [f"q{j}" for j in range(6)]

#: cell values: what the files should hold, what they may, and what they must not
cells = st.one_of(
    st.sampled_from(["0", "1", "0.0", "1.0", "", " ", "nan", "inf", "-1", "0.5", "2", "1e300", "true", "NULL", "q1"]),
    st.sampled_from(["TRUE", "FALSE", "True", "False", "false", "0,5", "1;0"]),  # a spreadsheet's
    st.text(max_size=12),
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
#: JSON values of the same kinds, nested a little
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=10),
        st.sampled_from([0, 1, 0.0, 1.0, "0", "1", "q0", "q1", "score", "item_id"]),
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)


def csv_text(header_names: list[str]) -> st.SearchStrategy[str]:
    """A CSV whose header is drawn mostly from ``header_names``, its rows of :data:`cells`, with a
    ragged row now and then."""
    header = st.lists(st.one_of(st.sampled_from(header_names), st.text(max_size=8)), min_size=0, max_size=5)

    def table(names):
        row = st.lists(cells, min_size=max(0, len(names) - 1), max_size=len(names) + 1)
        return st.tuples(st.lists(row, max_size=8), csv_forms).map(lambda t: _render_csv([names, *t[0]], t[1]))

    return header.flatmap(table)


def _render_csv(rows, form: str = "plain") -> str:
    """``rows`` as CSV text; ``form`` ``bom``: with the byte-order mark a spreadsheet's "CSV UTF-8"
    writes first; ``semicolons``: separated by semicolons, as a spreadsheet in a decimal-comma locale."""
    out = io.StringIO()
    csv.writer(out, delimiter=";" if form == "semicolons" else ",").writerows(rows)
    return ("\ufeff" if form == "bom" else "") + out.getvalue()


#: how a spreadsheet may save a table (:func:`_render_csv`), plain most of the time
csv_forms = st.sampled_from(["plain", "plain", "plain", "bom", "semicolons"])


def json_records(keys: list[str]) -> st.SearchStrategy[str]:
    """A JSON object ``{id: value}`` or a list of records with keys drawn mostly from ``keys``."""
    key = st.one_of(st.sampled_from(keys), st.text(max_size=8))
    record = st.dictionaries(key, json_values, max_size=4)
    doc = st.one_of(st.dictionaries(key, json_values, max_size=6), st.lists(record, max_size=6), json_values)
    return doc.map(lambda d: json.dumps(d, allow_nan=True))


@st.composite
def mutated_csv(draw, header: list[str], ids: list[str], values: list[str], id_column: bool = True):
    """A valid CSV (``header``; one row per drawn id, cells from ``values``) with up to three
    mutations: a cell replaced by any of :data:`cells`, a cell dropped or added, a row repeated, a
    header entry renamed. About a third are left valid."""
    chosen = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=len(ids), unique=True))
    rows = [list(header)] + [
        [i, *[draw(st.sampled_from(values)) for _ in header[1:]]] if id_column else [draw(st.sampled_from(values))]
        for i in chosen
    ]
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2, 3]))):
        r = draw(st.integers(0, len(rows) - 1))
        kind = draw(st.sampled_from(["cell", "drop", "add", "repeat", "header"]))
        if kind == "cell" and rows[r]:
            rows[r][draw(st.integers(0, len(rows[r]) - 1))] = draw(cells)
        elif kind == "drop" and rows[r]:
            rows[r].pop()
        elif kind == "add":
            rows[r].append(draw(cells))
        elif kind == "repeat" and len(rows) > 1:
            rows.append(list(rows[draw(st.integers(1, len(rows) - 1))]))
        elif kind == "header" and rows[0]:
            rows[0][draw(st.integers(0, len(rows[0]) - 1))] = draw(st.sampled_from([*header, "", "x", "model"]))
    return _render_csv(rows, draw(csv_forms))


@st.composite
def mutated_json(draw, ids: list[str], values: list, key: str):
    """A valid JSON document of scores -- ``{id: value}`` or ``[{key: id, "score": value}]`` -- with up
    to two mutations: a value or an id replaced by any JSON value, an entry added."""
    chosen = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=len(ids), unique=True))
    pairs = [[i, draw(st.sampled_from(values))] for i in chosen]
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):
        r = draw(st.integers(0, len(pairs) - 1))
        kind = draw(st.sampled_from(["value", "id", "add"]))
        if kind == "value":
            pairs[r][1] = draw(json_values)
        elif kind == "id":
            pairs[r][0] = draw(st.one_of(st.sampled_from(ids), st.text(max_size=5)))
        else:
            pairs.append([draw(st.sampled_from(ids)), draw(json_values)])
    if draw(st.booleans()):
        return json.dumps({str(i): v for i, v in pairs}, allow_nan=True)
    return json.dumps([{key: i, "score": v} for i, v in pairs], allow_nan=True)


def expect_clean(call) -> None:
    """``call()`` returns, or raises a BenchcastError of one line; any other exception fails."""
    try:
        call()
    except BenchcastError as exc:
        assert "Traceback" not in str(exc)
        event(f"refused: {type(exc).__name__}")  # --hypothesis-show-statistics counts the outcomes
    else:
        event("read")


# ---- files a user gives: answers (estimate/select --answers), a leaderboard (select/estimate BOARD),
# ---- known scores (complete --known)

MODELS = [f"m{i}" for i in range(5)]
BENCHMARKS = pd.DataFrame({"benchmark_id": ["b0", "b1", "b2"], "is_percentage": [True, False, True]})
MATRIX = np.array([[50.0, 0.3, 80.0], [60.0, 0.7, np.nan], [70.0, 1.5, 90.0]])


def _answers(path: Path) -> None:
    """Read, and if read, valid: known items, 0/1 scores."""
    answers = read_answers(path, ITEMS)
    assert set(answers.scores) <= set(range(len(ITEMS)))
    assert all(v in (0.0, 1.0) for v in answers.scores.values())


def _board(path: Path) -> None:
    """Read, and if read, valid: a 0/1 matrix with one id per row and per column."""
    board = load_leaderboard(str(path), path.parent / "res")
    scores = board.matrix.scores
    assert scores.ndim == 2 and set(np.unique(scores)) <= {0.0, 1.0}
    assert len(board.matrix.model_ids) == scores.shape[0] and len(board.matrix.item_ids) == scores.shape[1]


def _known(path: Path) -> None:
    """Read, and if read, valid: known benchmarks, finite scores."""
    known = validate_known_scores(read_known_scores(path), BENCHMARKS, MATRIX, path)
    assert set(known) <= {"b0", "b1", "b2"} and all(math.isfinite(v) for v in known.values())


READERS = {"answers": _answers, "leaderboard": _board, "known scores": _known}

#: near-valid files of each reader and format: drawn freely, or a valid file mutated
NEAR_VALID = {
    ("answers", ".csv"): st.one_of(
        csv_text(["item_id", "score", "selection_id", "subtask"]), mutated_csv(["item_id", "score"], ITEMS, ["0", "1"])
    ),
    ("answers", ".json"): st.one_of(
        json_records(["item_id", "score", "selection_id", *ITEMS]), mutated_json(ITEMS, [0, 1], "item_id")
    ),
    ("leaderboard", ".csv"): st.one_of(
        csv_text(["model_id", "model", *ITEMS]),
        st.lists(st.sampled_from(ITEMS), min_size=1, max_size=6, unique=True).flatmap(
            lambda items: mutated_csv(["model_id", *items], MODELS, ["0", "1"])
        ),
    ),
    ("known scores", ".csv"): st.one_of(
        csv_text(["benchmark_id", "score", "b0", "b1"]),
        mutated_csv(["benchmark_id", "score"], ["b0", "b1", "b2"], ["0.5", "55", "80.5", "0"]),
    ),
    ("known scores", ".json"): st.one_of(
        json_records(["benchmark_id", "score", "b0", "b1", "b2"]),
        mutated_json(["b0", "b1", "b2"], [0.5, 55, 80.5, 0], "benchmark_id"),
    ),
}
ANY_BYTES = [("answers", ".csv"), ("answers", ".json"), ("leaderboard", ".csv"), ("leaderboard", ".parquet")]
ANY_BYTES += [("known scores", ".csv"), ("known scores", ".json")]


@pytest.mark.parametrize(("reader", "suffix"), ANY_BYTES)
@FUZZ
@given(data=st.binary(max_size=400))
def test_any_bytes(tmp_path, reader, suffix, data):
    path = tmp_path / f"input{suffix}"
    path.write_bytes(data)
    expect_clean(lambda: READERS[reader](path))


@pytest.mark.parametrize(("reader", "suffix"), sorted(NEAR_VALID))
@FUZZ
@given(data=st.data())
def test_near_valid(tmp_path, reader, suffix, data):
    path = tmp_path / f"input{suffix}"
    path.write_text(data.draw(NEAR_VALID[reader, suffix], label="file"))
    expect_clean(lambda: READERS[reader](path))


# found by test_near_valid (issue 39): a row with more cells than the header, a nameless column, a
# repeated model column with a row without a model name -- each was a traceback
@pytest.mark.parametrize(
    "text", ["model_id\r\n0\r\n0,0\r\n", "model_id,\r\n", "model_id,model_id\r\n0,0,0\r\n0\r\n0\r\n0,0\r\n"]
)
def test_leaderboards_that_were_tracebacks(tmp_path, text):
    path = tmp_path / "board.csv"
    path.write_text(text)
    with pytest.raises(DataError):
        _board(path)


parquet_columns = st.one_of(
    st.lists(st.sampled_from([0, 1]), min_size=3, max_size=3),
    st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=3, max_size=3),
    st.lists(st.one_of(st.none(), st.integers(-3, 3)), min_size=3, max_size=3),
    st.lists(st.text(max_size=4), min_size=3, max_size=3),
    st.lists(st.booleans(), min_size=3, max_size=3),
)


@st.composite
def parquet_board(draw) -> tuple[pd.DataFrame, bool]:
    """A valid board (``model_id`` then 0/1 item columns) with up to two mutations: a column
    replaced by one of :data:`parquet_columns`, renamed, or the frame's index stored; or a frame
    of drawn names and columns."""
    if draw(st.booleans()):
        names = draw(
            st.lists(st.one_of(st.sampled_from(["model_id", "model", *ITEMS]), st.text(max_size=6)), max_size=5)
        )
        columns = draw(st.lists(parquet_columns, min_size=5, max_size=5))
        return dict(zip(names, columns)), draw(st.booleans())
    items = draw(st.lists(st.sampled_from(ITEMS), min_size=2, max_size=5, unique=True))
    frame = {
        "model_id": ["m0", "m1", "m2"],
        **{i: draw(st.lists(st.sampled_from([0, 1]), min_size=3, max_size=3)) for i in items},
    }
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):
        name = draw(st.sampled_from(list(frame)))
        if draw(st.booleans()):
            frame[name] = draw(parquet_columns)
        else:
            frame[draw(st.one_of(st.sampled_from(ITEMS), st.text(max_size=4)))] = frame.pop(name)
    return frame, draw(st.sampled_from([False, False, True]))


@FUZZ
@given(board=parquet_board())
def test_leaderboard_parquet_near_valid(tmp_path, board):
    columns, index = board
    path = tmp_path / "board.parquet"
    try:
        frame = pd.DataFrame(columns)
        frame.to_parquet(path, index=index)
    except (ValueError, TypeError, pa.ArrowException):  # pandas or pyarrow refuses the frame: no file to read
        return
    expect_clean(lambda: _board(path))


# ---- lm-evaluation-harness logs (benchcast leaderboard from-lm-eval) ---------------------------------

harness_line = st.one_of(
    st.fixed_dictionaries(
        {"doc_id": st.one_of(st.integers(-1, 3), json_values), "filter": st.sampled_from(["none", "strict", ""])},
        optional={"acc": json_values, "exact_match": st.sampled_from([0, 1, 0.0, 1.0, 0.5, None, "1"])},
    ),
    json_values,
)


@st.composite
def harness_log(draw) -> list[str]:
    """One model's log of a 4-document task, valid (``doc_id``, ``filter``, ``metrics``, ``acc`` 0/1),
    then up to two lines replaced by any line or text, or dropped."""
    lines = [
        json.dumps({"doc_id": d, "filter": "none", "metrics": ["acc"], "acc": draw(st.sampled_from([0, 1, 0.0, 1.0]))})
        for d in range(4)
    ]
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):
        r = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["line", "text", "drop"]))
        if kind == "line":
            lines[r] = json.dumps(draw(harness_line), allow_nan=True)
        elif kind == "text":
            lines[r] = draw(st.text(max_size=20))
        elif len(lines) > 1:
            lines.pop(r)
    return lines


any_lines = st.lists(
    st.one_of(harness_line.map(lambda d: json.dumps(d, allow_nan=True)), st.text(max_size=20)), max_size=5
)


@FUZZ
@given(
    logs=st.lists(st.one_of(harness_log(), any_lines), min_size=2, max_size=2),
    results=st.one_of(st.just("named"), json_records(["model_name"]), st.text(max_size=20)),
)
def test_harness_logs_near_valid(tmp_path, logs, results):
    folders = []
    for k, lines in enumerate(logs):
        folder = tmp_path / f"model{k}"
        folder.mkdir(exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        (folder / "samples_task_2026-01-01T00-00-00.000000.jsonl").write_text("\n".join(lines) + "\n")
        named = json.dumps({"model_name": f"model {k}"})  # the harness's results file, one model per folder
        (folder / "results_2026-01-01T00-00-00.000000.json").write_text(named if results == "named" else results)
        folders.append(folder)
    expect_clean(lambda: build_board(folders))


# ---- the workflow's config, through the library (the schema, then the study's own checks) -----------

DEFAULT_CONFIG = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
STUDIES = sorted(s for s in registry() if isinstance(DEFAULT_CONFIG.get(s), dict))
CATALOG = load_catalog(REPO / "src" / "benchcast" / "data" / "catalog.yaml")


def _paths(node, prefix=()):
    """Every key path of a nested config section."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


@st.composite
def mutated_section(draw, study: str):
    """The default run's section of ``study`` with one to three edits: a value replaced by any
    JSON-like value, a key removed, or an unknown key added."""
    section = copy.deepcopy(DEFAULT_CONFIG[study])
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(section))
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = section
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "remove", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(json_values)
        elif action == "remove":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(json_values)
    return section


@pytest.mark.parametrize("study", STUDIES)
@settings(FUZZ, max_examples=EXAMPLES // 2)
@given(data=st.data())
def test_config_section_mutated(study, data):
    section = data.draw(mutated_section(study))
    schema = load_schema(REPO / "workflow" / "schemas" / f"{study}.schema.yaml")
    sources = ConfigSources([("config/config.yaml", {study: section})])

    def check():
        validate(section, schema, study, sources)
        unit = registry()[study](section, CATALOG)
        unit.outputs(), unit.datasets()

    expect_clean(check)


# found by test_config_section_mutated (issue 39): an empty list where a study needs at least one
# entry was a ValueError deep inside the study (max() of nothing); the schemas require one now
@pytest.mark.parametrize(
    ("study", "key"),
    [(s, k) for s in ["misses_the_mark"] for k in ("datasets", "splits", "budgets", "methods")]
    + [("tailoredbench", "budgets")],
)
def test_configs_that_were_tracebacks(study, key):
    section = {**copy.deepcopy(DEFAULT_CONFIG[study]), key: []}
    schema = load_schema(REPO / "workflow" / "schemas" / f"{study}.schema.yaml")
    with pytest.raises(ConfigError, match=f"'{study}.{key}': \\[\\] should be non-empty"):
        validate(section, schema, study, ConfigSources([("config/config.yaml", {study: section})]))


def test_every_study_of_the_default_config_is_fuzzed():
    assert STUDIES and set(STUDIES) == {s for s in DEFAULT_CONFIG.get("studies", STUDIES) if s in registry()}


def test_the_fuzzing_is_reproducible():
    assert FUZZ.derandomize and FUZZ.database is None and FUZZ.max_examples == EXAMPLES
