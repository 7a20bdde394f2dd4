"""Writing shared by every ingest, job and command: atomic (a temporary file beside the target,
then a rename; removed on any error or interrupt) and, for Parquet, byte-reproducible. Reading a
file a person wrote (:func:`open_text`, :func:`read_text`): UTF-8 with or without the byte-order
mark a spreadsheet's "CSV UTF-8" writes first; a binary file is a
:class:`~benchcast.errors.DataError`, not a decoding traceback; a CSV separated by semicolons is
named as such (:func:`check_separator`); ``TRUE``/``FALSE`` scores mean 1/0 where a score is 0/1
(:data:`BOOLEAN_SCORES`)."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from benchcast.errors import DataError, DiskFull


def write_parquet_atomic(df: pd.DataFrame, path: str | Path, metadata: dict[bytes, bytes] | None = None) -> None:
    """Write to a temp file beside ``path``, fsync, then rename: a crash never leaves a
    complete-looking file. The pandas schema metadata (which embeds library versions) is
    dropped so the same frame gives the same bytes anywhere; ``metadata`` is the file's own
    key-value metadata (e.g. a leaderboard's harness facts), kept."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(metadata or None)
    try:
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp, compression="zstd")
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
    except DiskFull as full:
        sink = pa.BufferOutputStream()  # the file's exact size, for the message
        pq.write_table(table, sink, compression="zstd")
        raise full.needing(sink.getvalue().size) from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to: renamed onto ``path`` when the block ends,
    removed when it raises (Ctrl-C included), so ``path`` is whole or untouched."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        full = disk_full(exc, path, None)
        if full is not None:
            raise full from None
        raise DataError(
            path, "(file)", f"cannot be written ({exc.strerror})", "write to a folder you can write in"
        ) from None
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual file mode
        os.replace(tmp, path)
    except BaseException as exc:
        full = disk_full(exc, path, tmp)
        Path(tmp).unlink(missing_ok=True)
        if full is not None:
            raise full from None
        raise


#: the errors of a full filesystem: no space left, the user's disk quota reached
FULL = (errno.ENOSPC, errno.EDQUOT)


def disk_full(exc: BaseException, path: Path, tmp: str | None, needed: int | None = None) -> DiskFull | None:
    """A :class:`DiskFull` for ``path`` when ``exc`` says the filesystem is full (an ``OSError``
    with ENOSPC/EDQUOT; pyarrow's own I/O errors carry only the text), else None. ``tmp``: the
    temporary file being written, whose size tells how far the write got; ``needed``: the
    file's size, where it is known (a download's Content-Length)."""
    if not isinstance(exc, OSError) or isinstance(exc, DiskFull):
        return None
    if exc.errno not in FULL and "No space left on device" not in str(exc) and "Disk quota exceeded" not in str(exc):
        return None
    written = os.path.getsize(tmp) if tmp is not None and os.path.exists(tmp) else None
    try:
        usage = shutil.disk_usage(path.parent)
        free, total = usage.free, usage.total
    except OSError:
        free = total = None
    return DiskFull(path, free, total, written, needed)


def write_text_atomic(path: str | Path, text: str) -> None:
    data = text.encode("utf-8")
    try:
        with atomic_path(path) as tmp:
            tmp.write_bytes(data)
    except DiskFull as full:
        raise full.needing(len(data)) from None


def write_csv_atomic(df: pd.DataFrame, path: str | Path, **to_csv) -> None:
    """``df.to_csv(path, **to_csv)`` through a temporary file: whole or absent."""
    try:
        with atomic_path(path) as tmp:
            df.to_csv(tmp, **to_csv)
    except DiskFull as full:
        raise full.needing(len(df.to_csv(**to_csv).encode("utf-8"))) from None


def write_figure_atomic(fig, path: str | Path, **savefig) -> None:
    """``fig.savefig(path, **savefig)`` through a temporary file (the format from ``path``'s suffix,
    which the temporary name does not carry)."""
    path = Path(path)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip(".") or None, **savefig)


#: how a file a person wrote is decoded: UTF-8, a leading byte-order mark dropped
TEXT_ENCODING = "utf-8-sig"

#: a 0/1 score as a spreadsheet or pandas writes a boolean
BOOLEAN_SCORES = {"TRUE": 1.0, "FALSE": 0.0, "True": 1.0, "False": 0.0, "true": 1.0, "false": 0.0}


def read_text(path: str | Path, fix: str) -> str:
    """A UTF-8 text file's content (without a byte-order mark); a binary (or otherwise
    undecodable) file stops with the file, the byte offset and ``fix``."""
    try:
        return Path(path).read_text(encoding=TEXT_ENCODING)
    except UnicodeDecodeError as exc:
        raise not_text(path, exc, fix) from None


@contextmanager
def open_text(path: str | Path, fix: str) -> Iterator[TextIO]:
    """A UTF-8 text file open for reading as :func:`read_text` decodes it (for :mod:`csv`:
    ``newline=""``); a decoding error while reading stops as there."""
    with open(path, newline="", encoding=TEXT_ENCODING) as fh:
        try:
            yield fh
        except UnicodeDecodeError as exc:
            raise not_text(path, exc, fix) from None


def check_separator(path: str | Path, header: list[str]) -> None:
    """Stop, naming the cause and the fix, when a CSV's header is one cell holding semicolons: the
    file is separated by semicolons, as a spreadsheet in a locale with decimal commas saves it."""
    if len(header) == 1 and ";" in header[0]:
        raise DataError(
            path,
            "(header)",
            f"is separated by semicolons ({header[0][:60]!r}), as a spreadsheet in a locale with decimal commas "
            "saves CSV",
            "save it as CSV with commas (e.g. 'CSV UTF-8 (comma delimited)'), or replace each ; by a comma and each "
            "decimal comma by a point",
        )


def not_text(path: str | Path, exc: UnicodeDecodeError, fix: str) -> DataError:
    return DataError(path, "(file)", f"is not UTF-8 text (byte {exc.start} cannot be decoded: a binary file?)", fix)
