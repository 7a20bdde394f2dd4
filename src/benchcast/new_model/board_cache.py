"""A user's leaderboard file, read once: its 0/1 matrix kept as bits beside the fits.

A user's models x items CSV or Parquet is read, validated and checksummed on the first call that
names it; that costs a full parse (a wide Parquet of 50,000 item columns takes seconds to open) and
a float64 matrix (2 GB at 5,000 x 50,000). Every later call on the same file bytes reads
``<data_dir>/boards/<stem>-<file sha256 prefix>/matrix.parquet`` instead: one row per model, the
model's scores packed eight to a byte in one fixed-size binary column (31 MB at 5,000 x 50,000,
uncompressed: unpacking is faster than decompressing), the item ids, subtasks and the matrix
checksum in the file's metadata. The matrix is :class:`PackedResponseMatrix`, whose float64
``scores`` are made only when a method needs them (building a fit); a ``select`` or ``estimate``
with a built fit reads the ids, the shape and the models' accuracies from the bits.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchcast.data.io import atomic_path
from benchcast.data.item_level import ResponseMatrix
from benchcast.errors import DataError

FORMAT = 1
_KEY = b"benchcast.board"
_ROWS_PER_BLOCK = 256  # rows unpacked (or hashed) at a time: a fixed number, so results never depend on memory


class PackedResponseMatrix(ResponseMatrix):
    """A :class:`ResponseMatrix` of 0/1 scores held as bits (``np.packbits`` along each row);
    ``scores`` (float64) is unpacked on first use and kept."""

    def __init__(self, dataset: str, bits: np.ndarray, n_items: int, model_ids, item_ids, subtasks):
        self.dataset, self.bits, self.n_items = dataset, bits, int(n_items)
        self.model_ids, self.model_names = list(model_ids), list(model_ids)
        self.item_ids, self.subtasks, self.file_roles = list(item_ids), list(subtasks), None
        self._scores: np.ndarray | None = None

    @property
    def scores(self) -> np.ndarray:  # type: ignore[override]
        if self._scores is None:
            out = np.empty((self.bits.shape[0], self.n_items))
            for i in range(0, len(out), _ROWS_PER_BLOCK):
                out[i : i + _ROWS_PER_BLOCK] = np.unpackbits(
                    self.bits[i : i + _ROWS_PER_BLOCK], axis=1, count=self.n_items
                )
            self._scores = out
        return self._scores

    @property
    def shape(self) -> tuple[int, int]:
        return (self.bits.shape[0], self.n_items)

    def accuracy(self) -> np.ndarray:
        """Each model's mean score: the count of its ones over the items, which is exactly what
        ``scores.mean(axis=1)`` gives (every partial sum of 0/1 values is an exact integer)."""
        return np.bitwise_count(self.bits).sum(axis=1, dtype=np.int64) / self.n_items


def matrix_checksum(matrix: ResponseMatrix) -> str:
    """sha256 of the model ids, the item ids and the scores as little-endian float64, row after
    row (hashed a block of rows at a time: no copy of the whole matrix)."""
    h = hashlib.sha256()
    for ids in (matrix.model_ids, matrix.item_ids):
        h.update("\x1f".join(map(str, ids)).encode("utf-8") + b"\x1e")
    scores = matrix.scores
    for i in range(0, scores.shape[0], _ROWS_PER_BLOCK):
        h.update(np.ascontiguousarray(scores[i : i + _ROWS_PER_BLOCK], dtype="<f8").tobytes())
    return h.hexdigest()


def cache_file(boards_dir: Path, path: Path, file_digest: str) -> Path:
    return boards_dir / f"{path.stem}-{file_digest[:16]}" / "matrix.parquet"


def write(matrix: ResponseMatrix, checksum: str, source: Path, file_digest: str, target: Path) -> None:
    """Store a binary ``matrix`` as bits at ``target`` (atomically: whole or absent)."""
    n_models, n_items = matrix.shape
    bits = np.packbits(matrix.scores.astype(np.uint8), axis=1)
    column = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(bits.shape[1]), n_models, [None, pa.py_buffer(bits.tobytes())]
    )
    meta = {
        "format": FORMAT, "source": source.name, "source_sha256": file_digest, "checksum": checksum,
        "items": n_items, "item_ids": list(map(str, matrix.item_ids)), "subtasks": list(map(str, matrix.subtasks)),
    }  # fmt: skip
    table = pa.table({"model_id": pa.array(list(map(str, matrix.model_ids))), "bits": column})
    table = table.replace_schema_metadata({_KEY: json.dumps(meta).encode("utf-8")})
    with atomic_path(target) as tmp:
        pq.write_table(table, tmp, compression="none", row_group_size=_ROWS_PER_BLOCK * 16)


def read(target: Path, dataset: str) -> tuple[PackedResponseMatrix, str]:
    """``(matrix, checksum)`` from a stored board; a file that is not one stops with what to do."""
    fix = f"delete the folder {target.parent} (the next call rebuilds it from your file)"
    try:
        table = pq.read_table(target)
        meta = json.loads(table.schema.metadata[_KEY])
        if meta.get("format") != FORMAT:
            raise ValueError(f"format {meta.get('format')!r}, this benchcast reads {FORMAT}")
        n_items, n_models = int(meta["items"]), table.num_rows
        column = table.column("bits").combine_chunks()
        width = column.type.byte_width
        bits = np.frombuffer(column.buffers()[1], np.uint8, count=n_models * width, offset=column.offset * width)
        bits = bits.reshape(n_models, width)
        if width != (n_items + 7) // 8 or len(meta["item_ids"]) != n_items:
            raise ValueError("the bits do not match the item count")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DataError(target, "(file)", f"is not a readable stored leaderboard ({exc})", fix) from None
    matrix = PackedResponseMatrix(
        dataset, bits, n_items, table.column("model_id").to_pylist(), meta["item_ids"], meta["subtasks"]
    )
    return matrix, meta["checksum"]
