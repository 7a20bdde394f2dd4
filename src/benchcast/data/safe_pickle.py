"""Allow-list unpickler for the joblib ``.jbl`` dumps of the benchmark-prediction repository.

The raw score files are pickles downloaded from the internet. ``pickle.load`` (and
``joblib.load``) would execute whatever callable the file names, so we never use them.
This module reads the two shapes those files actually have:

* a numpy array written by ``joblib.dump``: a pickled ``joblib.numpy_pickle.NumpyArrayWrapper``
  whose raw array bytes follow the wrapper directly in the file stream (joblib >= 0.12
  format, with an alignment padding byte), and
* a plain pickled ``list`` of ``str`` (the model-name lists), and
* the pickle inside an object-dtype ``.npy`` file (:func:`safe_load_npy`): an array whose cells
  are numeric arrays or numbers (TailoredBench's per-option probabilities).

Only these globals may be referenced: ``joblib.numpy_pickle.NumpyArrayWrapper`` (replaced
by an inert stand-in), ``numpy.ndarray`` and ``numpy.dtype`` (used only as data in the
wrapper's state), numpy's plain ``_reconstruct`` for arrays pickled by numpy itself and its
``scalar`` for numeric scalars.
Anything else -- ``os.system``, ``builtins.eval``, a custom class -- raises
:class:`~benchcast.errors.UnsafePickleError` before it is called.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np

from benchcast.errors import UnsafePickleError

_FIX = "re-download the file from its public URL (checksums in the catalog) or delete it"


class _ArrayWrapperStub:
    """Inert stand-in for joblib's NumpyArrayWrapper: holds the state dict, never executes."""

    def __init__(self) -> None:
        self.state: dict[str, Any] = {}


def _numpy_reconstruct(subtype, shape, dtype):
    if subtype is not np.ndarray:
        raise pickle.UnpicklingError("only plain numpy.ndarray may be reconstructed")
    return np.ndarray.__new__(np.ndarray, shape, dtype)


def _numpy_scalar(dtype, data=None):
    if not isinstance(dtype, np.dtype) or dtype.kind not in "biuf" or not isinstance(data, bytes):
        raise pickle.UnpicklingError("only numeric numpy scalars may be reconstructed")
    return np.frombuffer(data, dtype=dtype, count=1)[0]


_ALLOWED_GLOBALS: dict[tuple[str, str], Any] = {
    ("joblib.numpy_pickle", "NumpyArrayWrapper"): _ArrayWrapperStub,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("numpy.core.multiarray", "_reconstruct"): _numpy_reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _numpy_reconstruct,
    ("numpy.core.multiarray", "scalar"): _numpy_scalar,
    ("numpy._core.multiarray", "scalar"): _numpy_scalar,
}


class _AllowListUnpickler(pickle._Unpickler):  # type: ignore[name-defined]
    """Pure-Python unpickler (so BUILD can be intercepted) with an allow-list of globals."""

    def __init__(self, file: io.BufferedIOBase, path: str):
        super().__init__(file)
        self._raw = file
        self._path = path
        # The dispatch table is class-level; copy it so only this instance changes BUILD.
        self.dispatch = dict(self.dispatch)
        self.dispatch[pickle.BUILD[0]] = _AllowListUnpickler._load_build

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _ALLOWED_GLOBALS[(module, name)]
        except KeyError:
            raise UnsafePickleError(
                self._path,
                f"global {module}.{name}",
                "the pickle references a class or function outside the allow-list (numpy arrays and lists of str only)",
                _FIX,
            ) from None

    def _load_build(self) -> None:
        state = self.stack.pop()
        inst = self.stack[-1]
        if isinstance(inst, _ArrayWrapperStub):
            self.stack[-1] = self._read_joblib_array(state)
            return
        if isinstance(inst, (np.dtype, np.ndarray)):
            inst.__setstate__(state)
            return
        raise UnsafePickleError(self._path, "BUILD", f"refusing to set state on {type(inst).__name__}", _FIX)

    def _read_joblib_array(self, state: dict[str, Any]) -> np.ndarray:
        """Read the raw bytes joblib writes right after the wrapper (joblib/numpy_pickle.py)."""
        if not isinstance(state, dict) or not {"shape", "order", "dtype"} <= set(state):
            raise UnsafePickleError(self._path, "NumpyArrayWrapper", "malformed array header", _FIX)
        if state.get("subclass", np.ndarray) is not np.ndarray:
            raise UnsafePickleError(self._path, "NumpyArrayWrapper.subclass", "not numpy.ndarray", _FIX)
        dtype = state["dtype"]
        if not isinstance(dtype, np.dtype) or dtype.hasobject:
            raise UnsafePickleError(
                self._path, "NumpyArrayWrapper.dtype", f"dtype {dtype!r} is not a plain numeric dtype", _FIX
            )
        shape = tuple(int(s) for s in state["shape"])
        if state.get("numpy_array_alignment_bytes") is not None:
            pad = self._raw.read(1)
            if len(pad) != 1:
                raise UnsafePickleError(self._path, "array data", "file ends inside the array header", _FIX)
            self._raw.read(pad[0])
        count = int(np.prod(shape, dtype=np.int64))
        nbytes = count * dtype.itemsize
        data = self._raw.read(nbytes)
        if len(data) != nbytes:
            raise UnsafePickleError(
                self._path, "array data", f"expected {nbytes} bytes of array data, file has {len(data)}", _FIX
            )
        array = np.frombuffer(data, dtype=dtype, count=count).copy()
        order = "F" if state["order"] == "F" else "C"
        return array.reshape(shape, order=order)


def _unpickle(fh: io.BufferedIOBase, path: Path) -> Any:
    try:
        return _AllowListUnpickler(fh, str(path)).load()
    except UnsafePickleError:
        raise
    except Exception as exc:  # truncated/corrupt stream: pickle raises many types
        raise UnsafePickleError(path, "pickle stream", f"corrupt pickle ({exc})", _FIX) from exc


def safe_load(path: str | Path) -> Any:
    """Load a ``.jbl``/pickle file that may contain only numpy arrays and lists of str.

    Raises
    ------
    UnsafePickleError
        If the file references anything outside the allow-list, is truncated, or is not
        a pickle at all (compressed joblib files are rejected too: the mirror has none).
    """
    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(2)
        fh.seek(0)
        if not head or head[0] != pickle.PROTO[0]:
            raise UnsafePickleError(path, "header", "not an uncompressed pickle (protocol >= 2)", _FIX)
        obj = _unpickle(fh, path)
    return _check_result(obj, path)


def _check_result(obj: Any, path: Path) -> Any:
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biuf":
            raise UnsafePickleError(path, "array dtype", f"dtype {obj.dtype} is not a plain numeric/bool dtype", _FIX)
        return obj
    if isinstance(obj, list) and all(isinstance(x, str) for x in obj):
        return obj
    raise UnsafePickleError(
        path, "top-level object", f"got {type(obj).__name__}; expected a numpy array or a list of str", _FIX
    )


def _numeric_cell(cell: Any) -> bool:
    if isinstance(cell, np.ndarray):
        return cell.dtype.kind in "biuf"
    if isinstance(cell, (list, tuple)):
        return all(isinstance(x, (int, float, np.integer, np.floating)) for x in cell)
    return isinstance(cell, (int, float, np.integer, np.floating))


def safe_load_npy(path: str | Path) -> np.ndarray:
    """Load a ``.npy`` file without ``allow_pickle``'s risk.

    A numeric array is read by numpy itself (no pickle involved). An object-dtype array --
    stored as a pickle after the ``.npy`` header -- goes through the allow-list unpickler and
    must be an array of the header's shape whose every cell is a numeric array, a list of
    numbers or a number; anything else raises :class:`~benchcast.errors.UnsafePickleError`.
    """
    path = Path(path)
    with open(path, "rb") as fh:
        try:
            version = np.lib.format.read_magic(fh)
            read_header = (
                np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            )
            shape, _, dtype = read_header(fh)
        except ValueError as exc:
            raise UnsafePickleError(path, "header", f"not a .npy file ({exc})", _FIX) from exc
        if not dtype.hasobject:
            fh.seek(0)
            return np.load(fh, allow_pickle=False)
        obj = _unpickle(fh, path)
    if not isinstance(obj, np.ndarray) or obj.dtype != object or obj.shape != tuple(shape):
        got = f"{type(obj).__name__} {getattr(obj, 'shape', '')}".strip()
        raise UnsafePickleError(path, "object array", f"header says an object array of shape {shape}, got {got}", _FIX)
    for index, cell in np.ndenumerate(obj):
        if not _numeric_cell(cell):
            raise UnsafePickleError(path, f"cell {list(index)}", f"holds a {type(cell).__name__}, not numbers", _FIX)
    return obj
