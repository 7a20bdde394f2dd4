"""``python -m benchcast`` and the ``benchcast`` command: the command line (:mod:`benchcast.cli`).

The command line takes about a second to import; a Ctrl-C or a SIGTERM in that second ends the
command in one line too: it is loaded with SIGTERM raised as an interrupt and interrupts held
while modules load (:mod:`benchcast.new_model.interrupts`, a module without dependencies)."""

import sys


def run() -> int:
    from benchcast.new_model.interrupts import ended_by, imports_held, terminate_as_interrupt

    try:
        with terminate_as_interrupt(), imports_held():
            from benchcast.cli import main

            return main()
    except KeyboardInterrupt as exc:  # before main's own handling starts: nothing was written yet
        line, status = ended_by(exc)
        print(line, file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(run())
