"""Runs lm-evaluation-harness's dummy model through the harness's Python API (``simple_evaluate`` and
``EvaluationTracker``, as ``lm-eval run`` does), several models in one process over one task index of
only the given folder's tasks: the harness's command line indexes its thousands of built-in task
configs on every call (about 15 s), which a test of the round trip need not pay for every model.

    python lm_eval_driver.py TASKS_DIR OUTPUT_PATH TASKS MODEL=SEED [MODEL=SEED ...] [--samples FILE]
"""

import json
import sys

from lm_eval import simple_evaluate
from lm_eval.loggers import EvaluationTracker
from lm_eval.tasks import TaskManager

args = sys.argv[1:]
samples = None
if "--samples" in args:
    k = args.index("--samples")
    samples = json.loads(open(args[k + 1]).read())
    del args[k : k + 2]
tasks_dir, output_path, tasks, *models = args
manager = TaskManager(include_path=tasks_dir, include_defaults=False)
for spec in models:
    name, seed = spec.rsplit("=", 1)
    tracker = EvaluationTracker(output_path=output_path)
    results = simple_evaluate(
        model="dummy",
        model_args=f"pretrained={name}",
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
