"""Statistics shared by the studies and the command line: the estimation metrics
(:mod:`benchcast.stats.metrics`) and pairwise agreement / the minimum detectable ability difference
(:mod:`benchcast.stats.mdad`)."""
