"""benchcast's console for Snakemake runs (``--logger benchcast``; profiles/default picks it when
standard error is a terminal).

It is the Rich logger plugin (snakemake-logger-plugin-rich, pinned in requirements.txt) with the
columns a person watching a run needs, which that plugin does not show: jobs done of all jobs, jobs
running, time elapsed and an estimate of the time left (the pace so far: elapsed time per finished
job times the jobs left). It also counts running jobs from zero (the plugin counts one job too many
on every bar). Rule-by-rule detail stays in Snakemake's own log, ``.snakemake/log/*.snakemake.log``,
which the plugin does not touch.

Snakemake imports every installed ``snakemake_logger_plugin_*`` module on each start, so this one
imports nothing heavy and, without the Rich plugin, still imports (and says what to install when
selected).
"""

from __future__ import annotations

try:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        ProgressColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.text import Text
    from snakemake_logger_plugin_rich import LogHandler as _RichLogHandler
    from snakemake_logger_plugin_rich.event_handler import ProgressDisplay
except ImportError as _missing:  # the plugin's package is not installed: fail only when selected
    from snakemake_interface_logger_plugins.base import LogHandlerBase

    _why = str(_missing)

    class LogHandler(LogHandlerBase):
        def __post_init__(self) -> None:
            raise ImportError(
                f"--logger benchcast needs snakemake-logger-plugin-rich ({_why}); pip install -r requirements.txt"
            )

        writes_to_stream = True
        writes_to_file = False
        has_filter = True
        has_formatter = True
        needs_rulegraph = False

else:
    #: the key (and description) of the plugin's bar over all jobs
    TOTAL = "Total Progress"

    class _Display(ProgressDisplay):
        """The plugin's bars, with a new bar's running count starting at 0 (the plugin starts it
        at 1 before any job of the rule runs, so every bar showed one job too many)."""

        def add_or_update(self, rule, completed, total, visible=True, decrement_active=False):
            new = rule not in self.rule_tasks
            task_id = super().add_or_update(rule, completed, total, visible, decrement_active)
            if new and completed < total:
                self.progress.update(task_id, active=0)
            return task_id

    class RunningColumn(ProgressColumn):
        """'N running' while jobs of the bar run."""

        def render(self, task) -> Text:
            active = task.fields.get("active")
            running = active if isinstance(active, int) and task.completed < (task.total or 0) else 0
            return Text(f"{running} running" if running else "", style="cyan")

    class TimeLeftColumn(ProgressColumn):
        """The estimated time left, on the bar over all jobs only: the elapsed time per finished
        job times the jobs left ('?' until the first job has finished)."""

        def __init__(self, display: ProgressDisplay):
            super().__init__()
            self.display = display

        def render(self, task) -> Text:
            if task.id != self.display.rule_tasks.get(TOTAL):
                return Text("")
            if task.finished:
                return Text("done", style="green")
            if not task.completed or not task.elapsed:
                return Text("left ?", style="yellow")
            left = int(task.elapsed / task.completed * (task.total - task.completed))
            hours, rest = divmod(left, 3600)
            minutes, seconds = divmod(rest, 60)
            text = f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"
            return Text(f"~{text} left", style="yellow")

    #: redraws of the display a second (the plugin's 8 took ~5% of a core from the jobs)
    REFRESH_PER_SECOND = 2

    class LogHandler(_RichLogHandler):
        """The Rich plugin's handler with benchcast's columns, redrawn twice a second."""

        def __post_init__(self) -> None:
            super().__post_init__()
            events = self.event_handler
            events.progress_display.live_display.refresh_per_second = REFRESH_PER_SECOND
            display = _Display(self.progress, events.progress_display.live_display, self.console)
            events.progress_display = display
            self.progress.columns = (
                SpinnerColumn(spinner_name="dots", style="default", finished_text="[dim green]✓"),
                TextColumn("[bold blue]{task.description}"),
                BarColumn(bar_width=None, complete_style="green", finished_style="dim green"),
                MofNCompleteColumn(),
                RunningColumn(),
                TimeElapsedColumn(),
                TimeLeftColumn(display),
            )
