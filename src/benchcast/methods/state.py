"""A fitted method stored without pickle: its attributes as JSON, its arrays in one Parquet table.

``fit.json`` holds the method's attributes (hyper-parameters and fitted state) as a JSON tree in
which every array is a reference ``{"__array__": key}`` into ``arrays.parquet`` (columns ``key``,
``dtype``, ``shape``, ``data``: the array's little-endian bytes). Floats are written with
``repr`` precision, so a stored fit estimates bit for bit what the fit in memory estimates.

Reading never runs code from the file: the only objects rebuilt are instances of classes defined
in ``benchcast`` modules (a registry method, or a dataclass / plain class of the library such as
the IRT fit), created with ``object.__new__`` and given their stored attributes; their
constructors are not called. Any other class name, dtype or tag is refused with a DataError.

``fit.json`` carries the format's version (``format``). A fit of an older format (before 0.2.0,
when several classes lived in modules since renamed, there was none; format 2 had no checksums)
raises :class:`OldFitFormat`: ``benchcast select`` / ``estimate`` rebuild it; a newer one is refused
(upgrade benchcast).

``fit.json`` also carries the sha256 of every file of the fit (``files``: ``arrays.parquet`` and
the files a caller names, such as the calibration) and of its own content (``sha256``, over the
document without that key). A fit that does not match them -- truncated, edited, or read while
another process replaced it -- raises :class:`CorruptFit` before anything of it is used.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from benchcast.data.io import atomic_path, write_text_atomic
from benchcast.errors import DataError

#: the version of the stored-fit format this benchcast writes and reads
FORMAT = 3


class OldFitFormat(DataError):
    """A stored fit written by an older benchcast: rebuild it."""


class CorruptFit(DataError):
    """A stored fit whose files do not match the checksums it was written with: rebuild it."""


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _doc_sha256(doc: dict) -> str:
    """The checksum of a ``fit.json`` document: of its canonical JSON without the ``sha256`` key."""
    body = {k: v for k, v in doc.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()


def resealed(doc: dict) -> dict:
    """``doc`` with the checksum of its content: what a deliberate edit of a fit would write. The
    checksum catches damage, not intent; reading stays safe without it (module docstring)."""
    return {**doc, "sha256": _doc_sha256(doc)}


#: dtypes an array may have in ``arrays.parquet`` (no object arrays: they would need pickle)
DTYPES = ("float64", "float32", "int64", "int32", "int16", "int8", "uint8", "bool")


class _Writer:
    def __init__(self):
        self.arrays: list[tuple[str, np.ndarray]] = []

    def encode(self, value, where: str):
        if isinstance(value, np.ndarray):
            if value.dtype.name not in DTYPES:
                raise DataError(None, where, f"an array of dtype {value.dtype}", "store arrays of numbers only")
            key = f"a{len(self.arrays)}"
            self.arrays.append((key, value))
            return {"__array__": key}
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, (np.bool_,)):
            return bool(value)
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, (float, np.floating)):
            value = float(value)
            return value if math.isfinite(value) else {"__float__": repr(value)}
        if isinstance(value, tuple):
            return {"__tuple__": [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]}
        if isinstance(value, list):
            return [self.encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {"__dict__": [[self.encode(k, where), self.encode(v, f"{where}[{k!r}]")] for k, v in value.items()]}
        cls = type(value)
        top = cls.__module__.split(".")[0]
        if (top == "benchcast" or top in _stored_packages()) and hasattr(value, "__dict__"):
            attrs = (
                {
                    f.name: getattr(value, f.name) if f.metadata.get("stored", True) else _default(f)
                    for f in dataclasses.fields(value)
                }
                if _is_dataclass(value)
                else vars(value)
            )
            return {
                "__object__": f"{cls.__module__}:{cls.__qualname__}",
                "attrs": {k: self.encode(v, f"{where}.{k}") for k, v in attrs.items()},
            }
        raise DataError(
            None,
            where,
            f"a {cls.__module__}.{cls.__qualname__}, which benchcast cannot store without pickle",
            "keep a method's fitted state in arrays, numbers, strings and classes of benchcast or of the method's package",
        )


def _stored_packages() -> set[str]:
    from benchcast.methods.plugins import allowed_top_levels

    return allowed_top_levels()


def _default(f: dataclasses.Field):
    """What a stored fit holds for a field marked ``NOT_STORED`` (:mod:`benchcast.methods.base`)."""
    return f.default_factory() if f.default is dataclasses.MISSING else f.default


def _is_dataclass(value) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _allowed_class(name: str, path: Path):
    from benchcast.methods.plugins import allowed_top_levels

    module, _, qualname = name.partition(":")
    top = module.split(".")[0]
    if (top != "benchcast" and top not in allowed_top_levels()) or not qualname or "<" in qualname:
        raise DataError(
            path,
            name,
            "is not a benchcast class (nor a registered method package's)",
            "rebuild the fit with this version of benchcast",
        )
    try:
        obj = importlib.import_module(module)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError):
        raise DataError(path, name, "names no class of this benchcast version", "rebuild the fit") from None
    if not isinstance(obj, type):
        raise DataError(path, name, "is not a class", "rebuild the fit")
    return obj


class _Reader:
    def __init__(self, arrays: dict[str, np.ndarray], path: Path):
        self.arrays, self.path = arrays, path

    def decode(self, node):
        if isinstance(node, list):
            return [self.decode(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "__array__" in node:
            if node["__array__"] not in self.arrays:
                raise DataError(self.path, node["__array__"], "no such array in arrays.parquet", "rebuild the fit")
            return self.arrays[node["__array__"]]
        if "__float__" in node:
            text = node["__float__"]
            if text not in ("nan", "inf", "-inf"):
                raise DataError(self.path, "__float__", f"unknown value {text!r}", "rebuild the fit")
            return float(text)
        if "__tuple__" in node:
            return tuple(self.decode(v) for v in node["__tuple__"])
        if "__dict__" in node:
            return {self.decode(k): self.decode(v) for k, v in node["__dict__"]}
        if "__object__" in node:
            cls = _allowed_class(node["__object__"], self.path)
            obj = object.__new__(cls)
            for k, v in node["attrs"].items():
                object.__setattr__(obj, k, self.decode(v))  # frozen dataclasses too
            return obj
        raise DataError(self.path, ",".join(sorted(node)), "unknown entry", "rebuild the fit")


def write_state(obj, meta: dict, folder: str | Path, files: tuple[str, ...] = ()) -> None:
    """``folder/fit.json`` (``meta`` and ``obj``'s state) and ``folder/arrays.parquet``, each
    written to a temporary name first (removed on an error or interrupt), so a folder never holds
    half a fit. ``fit.json``, written last, holds the checksums of ``arrays.parquet``, of the
    ``files`` of the folder already written (e.g. ``calibration.parquet``) and of itself."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    writer = _Writer()
    doc = {"format": FORMAT, "meta": meta, "state": writer.encode(obj, "fit")}
    table = pa.table(
        {
            "key": [k for k, _ in writer.arrays],
            "dtype": [a.dtype.name for _, a in writer.arrays],
            "shape": pa.array([list(a.shape) for _, a in writer.arrays], type=pa.list_(pa.int64())),
            "data": pa.array(
                [np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes() for _, a in writer.arrays],
                type=pa.binary(),
            ),
        }
    )
    (folder / "fit.json").unlink(missing_ok=True)  # a fit being replaced is no fit until the new one is whole
    with atomic_path(folder / "arrays.parquet") as tmp:
        pq.write_table(table, tmp)
        arrays_sha = file_sha256(tmp)
    doc["files"] = {"arrays.parquet": arrays_sha, **{name: file_sha256(folder / name) for name in files}}
    doc = resealed(doc)
    write_text_atomic(folder / "fit.json", json.dumps(doc, indent=1, sort_keys=True) + "\n")  # last: whole


def read_state(folder: str | Path) -> tuple[object, dict]:
    """Inverse of :func:`write_state`: ``(obj, meta)``, after every checksum has been checked."""
    folder = Path(folder)
    path = folder / "fit.json"
    if not path.is_file():
        raise DataError(path, "(file)", "no stored fit here", "build it (benchcast select builds a missing fit)")
    doc = _checked_doc(path)
    frame = pd.read_parquet(folder / "arrays.parquet")
    arrays = {}
    for key, dtype, shape, data in zip(frame["key"], frame["dtype"], frame["shape"], frame["data"]):
        if dtype not in DTYPES:
            raise DataError(folder / "arrays.parquet", key, f"dtype {dtype!r} is not allowed", "rebuild the fit")
        array = np.frombuffer(data, dtype=np.dtype(dtype).newbyteorder("<")).astype(dtype)
        arrays[key] = array.reshape([int(s) for s in shape])
    return _Reader(arrays, path).decode(doc["state"]), doc["meta"]


def _checked_doc(path: Path) -> dict:
    """``fit.json``'s document, its format and every checksum checked (module docstring)."""
    rebuild = "delete the folder or rerun the command: benchcast select / estimate rebuild a damaged fit"
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise CorruptFit(path, "(file)", f"is not UTF-8 text (byte {exc.start}): a damaged fit", rebuild) from None
    except json.JSONDecodeError as exc:
        raise CorruptFit(path, f"(JSON line {exc.lineno})", f"{exc.msg}: a truncated or damaged fit", rebuild) from None
    version = doc.get("format", 1) if isinstance(doc, dict) else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise CorruptFit(path, "format", f"is {version!r}, not a format version", rebuild)
    if version < FORMAT:
        raise OldFitFormat(path, "format", f"a fit of format {version} (this benchcast reads {FORMAT})", "rebuild it")
    if version > FORMAT:
        raise DataError(
            path, "format", f"a fit of format {version}, newer than this benchcast's {FORMAT}", "upgrade benchcast"
        )
    if doc.get("sha256") != _doc_sha256(doc):
        raise CorruptFit(
            path, "sha256", "the content does not match the checksum it holds: an edited or damaged fit", rebuild
        )
    files = doc.get("files")
    if not isinstance(files, dict) or "arrays.parquet" not in files or not all(isinstance(k, str) for k in files):
        raise CorruptFit(path, "files", "does not list the fit's files with their checksums", rebuild)
    for name, digest in sorted(files.items()):
        other = path.parent / name
        if Path(name).name != name:
            raise CorruptFit(path, "files", f"names {name!r}, not a file of the fit's folder", rebuild)
        if not other.is_file():
            raise CorruptFit(other, "(file)", "is missing (the fit's fit.json lists it)", rebuild)
        if file_sha256(other) != digest:
            raise CorruptFit(
                other, "(file)", "does not match the sha256 fit.json holds for it: a truncated, edited or replaced file",
                rebuild,
            )  # fmt: skip
    return doc
