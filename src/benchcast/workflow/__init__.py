"""The machinery of the Snakemake workflow (not needed to use the library):

* :mod:`benchcast.workflow.support` -- what every rule script uses: one-thread BLAS, logging to the
  rule's log, config includes;
* :mod:`benchcast.workflow.resources` -- cluster requests sized from measured ``benchmark:`` files;
* :mod:`benchcast.workflow.dag`, :mod:`benchcast.workflow.schedule`,
  :mod:`benchcast.workflow.performance` -- the job graph, its projected wall time on P cores and the
  performance table;
* :mod:`benchcast.workflow.paper_index` -- ``results/index.md``, each paper's sections linked to
  the outputs that reproduce them.
"""
