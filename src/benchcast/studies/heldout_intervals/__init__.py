"""The item-level tools for a user with a new model, as a workflow unit: stored fits of the
configured datasets and methods (what ``benchcast select`` / ``estimate`` read) and the held-out
test of their intervals (:mod:`benchcast.studies.heldout_intervals.heldout`). The tools themselves live in
:mod:`benchcast.new_model`."""
