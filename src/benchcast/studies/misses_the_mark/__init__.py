""" "How benchmark prediction from fewer data misses the mark" (Zhang, Dorner & Hardt): 11 methods
estimating a target model's full-benchmark accuracy from n items, on interpolation and
extrapolation splits of 12 leaderboards (workflow: ``workflow/rules/misses_the_mark.smk``)."""
