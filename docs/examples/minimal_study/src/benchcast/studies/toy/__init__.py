"""A minimal study: each model's accuracy from its first n items (docs/examples/minimal_study)."""
