"""The studies benchcast reproduces, one package each.

A study package holds what is particular to one paper: ``analysis`` (its tables, figures' data and
the comparison with the paper's numbers), ``plan`` where the workflow needs more than constants (the
jobs a config asks for, their inputs and parameters), ``settings`` for the paper's fixed choices that
shared code takes as arguments, and the paper's own procedures. What two
studies share -- data, methods, metrics, IRT, completion -- lives in the layers above
(``benchcast.data``, ``benchcast.methods``, ``benchcast.irt``, ``benchcast.completion``).
"""
