"""Methods from other packages (issue 40): the repository's example package, installed by pip into a
folder of its own, is found through the ``benchcast.methods`` entry points -- listed by ``benchcast
methods`` with its package as its source, selected and estimated with through the command line
(its fit stored and read back without pickle) -- and a package whose method cannot be loaded is
named in one line, in the listing and when its method is asked for. Run as a user types it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from helpers import REPO

EXAMPLE = REPO / "examples" / "benchcast-example-method"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A folder holding the example package as pip installs it, and a broken package's metadata."""
    target = tmp_path_factory.mktemp("site")
    source = shutil.copytree(EXAMPLE, tmp_path_factory.mktemp("source") / EXAMPLE.name)  # the build's files stay there
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(source)]
    done = subprocess.run(pip, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    broken = target / "broken_method-0.1.dist-info"  # an installed distribution whose module fails on import
    broken.mkdir()
    (broken / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-method\nVersion: 0.1\n")
    (broken / "entry_points.txt").write_text("[benchcast.methods]\nbroken = broken_method:Nope\n")
    (target / "broken_method.py").write_text("raise RuntimeError('this package is broken')\n")
    careless = target / "careless_method-0.1.dist-info"  # loads, but breaks the contract three ways
    careless.mkdir()
    (careless / "METADATA").write_text("Metadata-Version: 2.1\nName: careless-method\nVersion: 0.1\n")
    (careless / "entry_points.txt").write_text("[benchcast.methods]\ncareless = careless_method:Careless\n")
    (target / "careless_method.py").write_text(CARELESS)
    return target


#: a copy of the example that breaks the contract: one item over the budget, items from NumPy's global
#: generator (not the rng it is given), and a function kept in its fitted state
CARELESS = """
import numpy as np
from benchcast.methods import Method


class Careless(Method):
    def fit(self, source, budget, rng):
        self.items_ = np.random.choice(source.shape[1], size=budget + 1, replace=False)
        self.weight_ = lambda x: x
        return self

    def estimate(self, oracle, rng):
        return oracle.query(self.items_).mean(axis=1)
"""


def benchcast(site, *args, cwd=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "benchcast", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)


def test_the_example_package_is_listed_with_its_source(site):
    run = benchcast(site, "methods", "--json")
    assert run.returncode == 0, run.stderr
    rows = {r["method"]: r for r in json.loads(run.stdout)}
    assert rows["example_random_sampling"]["source"] == "benchcast-example-method 0.1.0"
    assert rows["random_sampling"]["source"] == "benchcast"
    assert "broken" not in rows


def test_a_package_whose_method_cannot_load_is_named_in_one_line(site, tmp_path):
    listing = benchcast(site, "methods")
    assert listing.returncode == 0
    said = [line for line in listing.stderr.splitlines() if line.startswith("not registered: broken:")]
    assert len(said) == 1 and "broken-method 0.1" in said[0] and "this package is broken" in said[0], listing.stderr
    pd.DataFrame({"model_id": ["a", "b"], "q0": [0, 1], "q1": [1, 1]}).to_csv(tmp_path / "board.csv", index=False)
    asked = benchcast(site, "select", "board.csv", "--method", "broken", "--budget", 1, "--out", "x.csv", cwd=tmp_path)
    assert asked.returncode == 2 and "Traceback" not in asked.stderr
    assert asked.stderr.strip().startswith("benchcast: error: method 'broken' could not be registered: broken-method")


def test_the_example_method_selects_and_estimates_through_the_command_line(site, tmp_path):
    rng = np.random.default_rng(0)
    scores = (rng.random((30, 80)) < np.linspace(0.2, 0.8, 30)[:, None]).astype(int)
    board = pd.DataFrame(scores, columns=[f"q{j}" for j in range(80)])
    board.insert(0, "model_id", [f"m{i}" for i in range(30)])
    board.to_csv(tmp_path / "board.csv", index=False)
    args = ("--method", "example_random_sampling", "--budget", 20, "--data-dir", "res", "--folds", 3)
    picked = benchcast(site, "select", "board.csv", *args, "--out", "items.csv", cwd=tmp_path)
    assert picked.returncode == 0, picked.stderr
    items = pd.read_csv(tmp_path / "items.csv")
    assert len(items) == 20 and items.item_id.is_unique
    truth = dict(zip(board.columns[1:], scores[0]))
    items.assign(score=items.item_id.map(truth)).to_csv(tmp_path / "items.csv", index=False)
    est = benchcast(site, "estimate", "board.csv", *args, "--answers", "items.csv", "--out", "e.json", cwd=tmp_path)
    assert est.returncode == 0, est.stderr
    result = json.loads((tmp_path / "e.json").read_text())
    assert result["estimate"] == pytest.approx(items.item_id.map(truth).mean())  # a mean of the answers
    assert result["lower"] <= result["estimate"] <= result["upper"]
    (fit_json,) = (tmp_path / "res" / "models").rglob("fit.json")
    assert "benchcast_example_method:UniformSample" in fit_json.read_text()  # stored without pickle, read back


def test_a_jobs_parameters_hold_the_package_and_its_code_so_an_edit_reruns_its_jobs(site, tmp_path):
    """The workflow reruns a job when its parameters change: a package's method adds its package,
    version and code sha256 to them (a built-in method's stay as they were); after an edit of the
    package's code the parameters differ, and a job planned before the edit is refused in one line,
    not run with the new code."""
    own = shutil.copytree(site, tmp_path / "site")  # this test edits the package
    script = (
        "import json, sys\n"
        "from benchcast.methods import job_params, make_method\n"
        "from benchcast.errors import ConfigError\n"
        "make_method('example_random_sampling')\n"
        "print(json.dumps([job_params('example_random_sampling', {}), job_params('random_sampling', {'a': 1})]))\n"
        "if len(sys.argv) > 1:\n"
        "    try:\n"
        "        make_method('example_random_sampling', json.loads(sys.argv[1]), where='job')\n"
        "    except ConfigError as exc:\n"
        "        print(exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(own), os.environ.get("PYTHONPATH", "")])}

    def run(*args):
        done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    plugin, builtin = json.loads(run()[0])
    assert builtin == {"a": 1}  # a built-in method's parameters are unchanged: its jobs do not rerun
    origin = plugin.pop("benchcast_plugin")
    assert plugin == {} and origin["package"] == "benchcast-example-method" and origin["version"] == "0.1.0"
    assert len(origin["code_sha256"]) == 64
    module = own / "benchcast_example_method" / "__init__.py"
    module.write_text(module.read_text() + "\n# an edit\n")
    lines = run(json.dumps({"benchcast_plugin": origin}))
    after = json.loads(lines[0])[0]["benchcast_plugin"]
    assert after["code_sha256"] != origin["code_sha256"] and after["version"] == "0.1.0"
    assert lines[1].startswith("job: method 'example_random_sampling' was planned for benchcast-example-method 0.1.0")
    assert "Fix: run the workflow again" in lines[1]


def test_check_method_passes_the_example_and_names_the_three_faults_of_a_careless_copy(site):
    good = benchcast(site, "check-method", "example_random_sampling")
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout.count("PASS ") == 7 and "FAIL" not in good.stdout
    bad = benchcast(site, "check-method", "careless")
    assert bad.returncode == 1 and "Traceback" not in bad.stdout + bad.stderr
    failed = {
        line.split(":")[0].removeprefix("FAIL "): line for line in bad.stdout.splitlines() if line.startswith("FAIL")
    }
    assert set(failed) == {"budget", "seed", "stored fit"}, bad.stdout
    assert "more than the budget of 20 items" in failed["budget"]
    assert "not drawn from the rng benchcast passes" in failed["seed"]
    assert "cannot be stored without pickle" in failed["stored fit"] and "function" in failed["stored fit"]
    assert "careless: 3 of 7 checks failed (budget, seed, stored fit)" in bad.stderr
