"""TailoredBench (Yuan et al.): a global probe (G-set), native source models and a core set (N-set)
tailored to each target model, reproduced on GSM8K with the paper's 75 source and 75 target models
(workflow: ``workflow/rules/tailoredbench.smk``; the method: :mod:`benchcast.methods.tailored_bench`)."""
