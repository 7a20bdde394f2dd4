"""Layouts for a stored user leaderboard: write and read seconds and size of a models x items 0/1 matrix.

Compares the user's own wide Parquet (one column per item), one row per model with the scores as a
fixed-size binary column (uncompressed, zstd, snappy), the same with the scores packed eight to a
byte (what ``benchcast.new_model.board_cache`` stores), and a NumPy ``.npy`` file.

    python scripts/performance/board_layouts.py --size 5000x50000 --folder /tmp/layouts
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchcast.scaling.synthetic import leaderboard


def timed(f):
    t0 = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t0


def rows_table(ids, data: np.ndarray, name: str) -> pa.Table:
    width = data.shape[1]
    column = pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), len(data), [None, pa.py_buffer(data.tobytes())])
    return pa.table({"model_id": ids, name: column})


def read_rows(path: Path, name: str, n_models: int) -> np.ndarray:
    column = pq.read_table(path, columns=[name])[name].combine_chunks()
    width = column.type.byte_width
    return np.frombuffer(column.buffers()[1], np.uint8, count=n_models * width, offset=column.offset * width).reshape(
        n_models, width
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="5000x50000")
    ap.add_argument("--folder", required=True)
    a = ap.parse_args()
    R, N = (int(x) for x in a.size.split("x"))
    folder = Path(a.folder)
    folder.mkdir(parents=True, exist_ok=True)
    S = leaderboard(R, N, 0).scores.astype(np.uint8)
    ids = pa.array([f"model-{i:05d}" for i in range(R)])
    results = []

    wide = pa.table({"model_id": ids, **{f"item-{j:05d}": pa.array(S[:, j]) for j in range(N)}})
    _, w = timed(lambda: pq.write_table(wide, folder / "wide.parquet"))
    got, r = timed(lambda: np.column_stack([c.to_numpy() for c in pq.read_table(folder / "wide.parquet").columns[1:]]))
    assert (got == S).all()
    results.append(("wide Parquet (one column per item)", w, r, folder / "wide.parquet"))
    for comp in ("none", "zstd", "snappy"):
        path = folder / f"rows_{comp}.parquet"
        _, w = timed(lambda: pq.write_table(rows_table(ids, S, "scores"), path, compression=comp))
        got, r = timed(lambda: read_rows(path, "scores", R))
        assert (got == S).all()
        results.append((f"one row per model, bytes, {comp}", w, r, path))
    path = folder / "rows_bits.parquet"
    _, w = timed(lambda: pq.write_table(rows_table(ids, np.packbits(S, axis=1), "bits"), path, compression="none"))
    got, r = timed(lambda: np.unpackbits(read_rows(path, "bits", R), axis=1, count=N))
    assert (got == S).all()
    results.append(("one row per model, bits, none (stored boards)", w, r, path))
    path = folder / "scores.npy"
    _, w = timed(lambda: np.save(path, S))
    got, r = timed(lambda: np.load(path))
    assert (got == S).all()
    results.append(("NumPy .npy, bytes", w, r, path))
    print(f"{R} x {N}: layout | write s | read s (to a uint8 matrix) | MB")
    for name, w, r, p in results:
        print(f"{name} | {w:.2f} | {r:.2f} | {p.stat().st_size / 1e6:.0f}")


if __name__ == "__main__":
    main()
