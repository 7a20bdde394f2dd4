"""Does an evaluator's run reproduce ours? Expected outputs of a named config's run
(:mod:`~benchcast.verify.expected`, ``resources/expected/<run>/``), the check of a results folder
against them, study by study (:mod:`~benchcast.verify.check`), its report and exit code
(:mod:`~benchcast.verify.report`), and the digest rules every byte comparison of the project uses
(:mod:`~benchcast.verify.digests`). The command line: ``benchcast verify``."""
