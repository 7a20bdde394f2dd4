"""Runs lm-evaluation-harness models through the harness's Python API (``simple_evaluate`` and
``EvaluationTracker``, as ``lm-eval run`` does), several models in one process over one task index of
only the given folder's tasks: the harness's command line indexes its thousands of built-in task
configs on every call (about 15 s), which a test of the round trip need not pay for every model.

    python lm_eval_driver.py TASKS_DIR OUTPUT_PATH TASKS MODEL=SEED [MODEL=SEED ...] [--samples FILE]
        [--model dummy|parrot]

``dummy`` is the harness's built-in model (random log-likelihoods, "lol" as every generation);
``parrot`` (:class:`Parrot`, registered here through the harness's ``register_model``, its documented
hook for a model of one's own) repeats the words of its prompt after ``Repeat:``, some of them: the
answers a per-item F1 scores between 0 and 1.
"""

import json
import math
import sys
import zlib

import lm_eval.models  # noqa: F401  (registers the harness's own models, its dummy among them, before ours)
import numpy as np
from lm_eval import simple_evaluate
from lm_eval.api.model import LM
from lm_eval.api.registry import register_model
from lm_eval.loggers import EvaluationTracker
from lm_eval.tasks import TaskManager


@register_model("parrot")
class Parrot(LM):
    """Keeps each word after ``Repeat:`` with probability ``sigmoid(skill + 1.5 - 0.25 * words)``:
    a longer prompt is harder, a higher ``skill`` better; the draws are fixed by the model's name and
    the prompt, so a model answers a document alike in every run."""

    def __init__(self, pretrained: str = "parrot", skill: float = 0.0, **_):
        super().__init__()
        self.name, self.skill = str(pretrained), float(skill)

    def generate_until(self, requests, disable_tqdm: bool = False):
        out = []
        for request in requests:
            prompt = request.arguments[0]
            words = prompt.split("Repeat:", 1)[-1].split()
            keep = 1.0 / (1.0 + math.exp(-(self.skill + 1.5 - 0.25 * len(words))))
            rng = np.random.default_rng(zlib.crc32(f"{self.name}|{prompt}".encode()))
            out.append(" ".join(w for w in words if rng.random() < keep))
        return out

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError("parrot only generates")

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError("parrot only generates")


args = sys.argv[1:]
samples, model = None, "dummy"
if "--samples" in args:
    k = args.index("--samples")
    samples = json.loads(open(args[k + 1]).read())
    del args[k : k + 2]
if "--model" in args:
    k = args.index("--model")
    model = args[k + 1]
    del args[k : k + 2]
tasks_dir, output_path, tasks, *models = args
manager = TaskManager(include_path=tasks_dir, include_defaults=False)
for spec in models:
    name, seed = spec.rsplit("=", 1)
    tracker = EvaluationTracker(output_path=output_path)
    # a parrot's skill: its seed's draw (the dummy's log-likelihoods draw from the seed itself)
    skill = float(np.random.default_rng(int(seed)).normal())
    results = simple_evaluate(
        model=model,
        model_args=f"pretrained={name}" + (f",skill={skill!r}" if model == "parrot" else ""),
        tasks=tasks.split(","),
        task_manager=manager,
        samples=samples,
        log_samples=True,
        evaluation_tracker=tracker,
        random_seed=int(seed),
        numpy_random_seed=int(seed),
    )
    logged = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=logged)
    for task in results["configs"]:
        tracker.save_results_samples(task_name=task, samples=logged[task])
