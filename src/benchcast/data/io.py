"""Writing shared by every ingest, job and command: atomic (a temporary file beside the target,
then a rename; removed on any error or interrupt) and, for Parquet, byte-reproducible. Reading a
user's text file: a binary file is a :class:`~benchcast.errors.DataError`, not a decoding traceback."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from benchcast.errors import DataError


def write_parquet_atomic(df: pd.DataFrame, path: str | Path, metadata: dict[bytes, bytes] | None = None) -> None:
    """Write to a temp file beside ``path``, fsync, then rename: a crash never leaves a
    complete-looking file. The pandas schema metadata (which embeds library versions) is
    dropped so the same frame gives the same bytes anywhere; ``metadata`` is the file's own
    key-value metadata (e.g. a leaderboard's harness facts), kept."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(metadata or None)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression="zstd")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual file mode
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to: renamed onto ``path`` when the block ends,
    removed when it raises (Ctrl-C included), so ``path`` is whole or untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual file mode
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_csv_atomic(df: pd.DataFrame, path: str | Path, **to_csv) -> None:
    """``df.to_csv(path, **to_csv)`` through a temporary file: whole or absent."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, **to_csv)


def write_figure_atomic(fig, path: str | Path, **savefig) -> None:
    """``fig.savefig(path, **savefig)`` through a temporary file (the format from ``path``'s suffix,
    which the temporary name does not carry)."""
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip(".") or None, **savefig)


def read_text(path: str | Path, fix: str) -> str:
    """A UTF-8 text file's content; a binary (or otherwise undecodable) file stops with the
    file, the byte offset and ``fix``."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise not_text(path, exc, fix) from None


def not_text(path: str | Path, exc: UnicodeDecodeError, fix: str) -> DataError:
    return DataError(path, "(file)", f"is not UTF-8 text (byte {exc.start} cannot be decoded: a binary file?)", fix)
