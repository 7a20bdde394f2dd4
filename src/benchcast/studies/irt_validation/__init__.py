"""IRT validation: benchcast's MIRT-2PL fitters against py-irt 0.7.1 on held-out cells of the same
matrices (workflow: ``workflow/rules/irt_validation.smk``)."""
