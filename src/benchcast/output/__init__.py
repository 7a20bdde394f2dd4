"""What the studies write: tables as CSV and Markdown with the paper-vs-ours tolerance rule
(:mod:`benchcast.output.tables`) and reproducible Matplotlib figures (:mod:`benchcast.output.plots`)."""
