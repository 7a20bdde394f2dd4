"""``python -m benchcast`` and the ``benchcast`` command: the command line (:mod:`benchcast.cli`).

The command line takes about a second to import; a Ctrl-C or a SIGTERM in that second ends the
command in one line too: it is loaded with SIGTERM raised as an interrupt and interrupts held
while modules load (:mod:`benchcast.new_model.interrupts`, a module without dependencies)."""

import sys


def run() -> int:
    from benchcast.new_model.interrupts import Terminated, exit_status, imports_held, terminate_as_interrupt

    try:
        with terminate_as_interrupt(), imports_held():
            from benchcast.cli import main

            return main()
    except KeyboardInterrupt as exc:  # before main's own handling starts: nothing was written yet
        word = "terminated" if isinstance(exc, Terminated) else "interrupted"
        print(f"benchcast: {word}; nothing was left half-written", file=sys.stderr)
        return exit_status(exc)


if __name__ == "__main__":
    sys.exit(run())
