"""lm-evaluation-harness in and out: the harness question behind each item
(:mod:`~benchcast.data.harness_identity`), a selection as the harness's ``--samples`` file
(:mod:`~benchcast.lm_eval.samples`), a new model's answers read from the harness's per-item logs
(:mod:`~benchcast.lm_eval.logs`) and leaderboards built from a lab's harness logs
(:mod:`~benchcast.lm_eval.board`). benchcast reads the harness's files; it never imports the
harness."""
