"""Parquet writing shared by every ingest and job: atomic and byte-reproducible."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq


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
