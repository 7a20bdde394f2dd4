"""Tests for benchcast.data.safe_pickle: the allow-list loader of the raw ``.jbl`` dumps.

Every file is written by the test into tmp_path. Malicious payloads only ever try to
``touch`` a marker file inside tmp_path, and each test asserts the marker was not created.
"""

from __future__ import annotations

import os
import pickle
import pickletools
import shlex

import joblib
import numpy as np
import pytest

from benchcast.data.safe_pickle import safe_load
from benchcast.errors import DataError, UnsafePickleError

# --------------------------------------------------------------------------- helpers


class _OsSystemPayload:
    """Unpickling this would run ``os.system(cmd)``."""

    def __init__(self, cmd: str):
        self.cmd = cmd

    def __reduce__(self):
        return (os.system, (self.cmd,))


class _EvalPayload:
    """Unpickling this would run ``builtins.eval(expr)``."""

    def __init__(self, expr: str):
        self.expr = expr

    def __reduce__(self):
        return (eval, (self.expr,))


class PlainCustom:
    """A harmless user class: still outside the allow-list."""

    def __init__(self):
        self.x = 1


def _globals_in(data: bytes) -> list[tuple[str, str]]:
    """(module, name) of every global a pickle references (without loading it)."""
    out, strings = [], []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL":
            out.append((strings[-2], strings[-1]))
        elif op.name == "GLOBAL":
            mod, name = arg.split(" ")
            out.append((mod, name))
    return out


def _assert_rejected(path, match: str | None = None) -> UnsafePickleError:
    with pytest.raises(UnsafePickleError) as info:
        safe_load(path)
    err = info.value
    assert isinstance(err, DataError)
    assert isinstance(err, ValueError)
    assert str(path) in str(err), f"message does not name the file: {err}"
    assert err.path == str(path)
    if match is not None:
        assert match in str(err), str(err)
    return err


# --------------------------------------------------------------------------- round trips

ROUND_TRIP_ARRAYS = {
    "float64_2d": np.random.default_rng(0).normal(size=(7, 5)),
    "int64_2d": np.arange(-12, 12, dtype=np.int64).reshape(4, 6),
    "bool_2d": np.random.default_rng(1).random((6, 9)) < 0.5,
    "float64_fortran": np.asfortranarray(np.arange(35, dtype=np.float64).reshape(5, 7) / 3.0),
    "int64_fortran": np.asfortranarray(np.arange(24, dtype=np.int64).reshape(4, 6) * 7 - 50),
    "bool_fortran": np.asfortranarray(np.eye(5, 3, dtype=bool)),
    "float32_1d": np.linspace(0, 1, 11, dtype=np.float32),
    "uint8_3d": np.arange(60, dtype=np.uint8).reshape(3, 4, 5),
    "binary_scores": (np.random.default_rng(2).random((13, 29)) < 0.3).astype(np.float64),
}


@pytest.mark.parametrize("name", sorted(ROUND_TRIP_ARRAYS))
def test_joblib_array_round_trip(tmp_path, name):
    arr = ROUND_TRIP_ARRAYS[name]
    path = tmp_path / f"{name}.jbl"
    joblib.dump(arr, path)
    got = safe_load(path)
    assert isinstance(got, np.ndarray)
    assert type(got) is np.ndarray
    assert got.dtype == arr.dtype
    assert got.shape == arr.shape
    np.testing.assert_array_equal(got, arr)
    # the raw bytes joblib wrote are exactly what joblib itself reads back
    np.testing.assert_array_equal(got, joblib.load(path))


def test_fortran_order_is_respected_not_just_values_by_luck(tmp_path):
    # A non-symmetric Fortran array: reading its bytes in C order would scramble it.
    arr = np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4))
    path = tmp_path / "f.jbl"
    joblib.dump(arr, path)
    got = safe_load(path)
    assert got[0].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert got[:, 0].tolist() == [0.0, 4.0, 8.0]


@pytest.mark.parametrize("protocol", [3, 4])
def test_numpy_native_pickle_round_trip(tmp_path, protocol):
    # (protocol 2 pickles bytes through _codecs.encode and protocol 5 through
    # numpy._core.numeric._frombuffer; both are outside the allow-list and rejected, which
    # is safe -- the mirror's files are all joblib dumps.)
    arr = np.arange(20, dtype=np.float64).reshape(4, 5) / 7
    path = tmp_path / "np.pkl"
    path.write_bytes(pickle.dumps(arr, protocol=protocol))
    got = safe_load(path)
    np.testing.assert_array_equal(got, arr)
    assert got.dtype == arr.dtype


@pytest.mark.parametrize("writer", ["joblib", "pickle2", "pickle5"])
def test_list_of_str_round_trip(tmp_path, writer):
    names = ["gpt-4", "llama-2-70b", "ünïcode/model", "", "a" * 300]
    path = tmp_path / "models.jbl"
    if writer == "joblib":
        joblib.dump(names, path)
    else:
        path.write_bytes(pickle.dumps(names, protocol=int(writer[-1])))
    got = safe_load(path)
    assert got == names
    assert type(got) is list


def test_empty_list_is_a_list_of_str(tmp_path):
    path = tmp_path / "empty.pkl"
    path.write_bytes(pickle.dumps([], protocol=4))
    assert safe_load(path) == []


# --------------------------------------------------------------------------- rejections


def test_rejects_os_system_reduce_without_executing(tmp_path):
    marker = tmp_path / "pwned_os_system"
    payload = pickle.dumps(_OsSystemPayload(f"touch {shlex.quote(str(marker))}"), protocol=4)
    # the payload really names os.system (posix.system on Linux)
    assert any(name == "system" for _, name in _globals_in(payload))
    path = tmp_path / "evil.jbl"
    path.write_bytes(payload)
    err = _assert_rejected(path, match="system")
    assert "allow-list" in str(err)
    assert not marker.exists(), "the payload was executed"


def test_rejects_os_system_with_harmless_echo(tmp_path):
    path = tmp_path / "echo.jbl"
    path.write_bytes(pickle.dumps(_OsSystemPayload("echo"), protocol=2))
    _assert_rejected(path, match="system")


def test_rejects_builtins_eval_without_executing(tmp_path):
    marker = tmp_path / "pwned_eval"
    payload = pickle.dumps(_EvalPayload(f"__import__('pathlib').Path({str(marker)!r}).touch()"), protocol=4)
    assert ("builtins", "eval") in _globals_in(payload)
    path = tmp_path / "eval.pkl"
    path.write_bytes(payload)
    err = _assert_rejected(path, match="builtins.eval")
    assert err.field == "global builtins.eval"
    assert not marker.exists(), "the payload was executed"


def test_rejects_malicious_global_nested_in_a_list(tmp_path):
    marker = tmp_path / "pwned_nested"
    payload = pickle.dumps(["ok", _OsSystemPayload(f"touch {shlex.quote(str(marker))}")], protocol=4)
    path = tmp_path / "nested.pkl"
    path.write_bytes(payload)
    _assert_rejected(path, match="system")
    assert not marker.exists()


def test_rejects_dict(tmp_path):
    path = tmp_path / "dict.pkl"
    path.write_bytes(pickle.dumps({"a": 1, "b": [1, 2]}, protocol=4))
    err = _assert_rejected(path, match="dict")
    assert err.field == "top-level object"


def test_rejects_custom_class(tmp_path):
    path = tmp_path / "custom.pkl"
    path.write_bytes(pickle.dumps(PlainCustom(), protocol=4))
    err = _assert_rejected(path, match="PlainCustom")
    assert err.field.startswith("global ")


@pytest.mark.parametrize("obj", [[1, 2, 3], ["a", 1], ("a", "b"), "just a string", 3.5, None])
def test_rejects_other_builtin_objects(tmp_path, obj):
    path = tmp_path / "other.pkl"
    path.write_bytes(pickle.dumps(obj, protocol=4))
    _assert_rejected(path, match="top-level object")


def test_rejects_truncated_joblib_array(tmp_path):
    arr = np.arange(200, dtype=np.float64).reshape(10, 20)
    full = tmp_path / "full.jbl"
    joblib.dump(arr, full)
    data = full.read_bytes()
    # cut inside the raw array data
    cut = tmp_path / "cut_data.jbl"
    cut.write_bytes(data[:-100])
    err = _assert_rejected(cut)
    assert "array data" in str(err) or "corrupt" in str(err)
    # cut inside the pickled header
    cut2 = tmp_path / "cut_header.jbl"
    cut2.write_bytes(data[:60])
    _assert_rejected(cut2)
    # cut right after the header, no array bytes at all
    cut3 = tmp_path / "cut_after_header.jbl"
    cut3.write_bytes(data[: len(data) - arr.nbytes - 1])
    _assert_rejected(cut3)


@pytest.mark.parametrize("shape", [(10**6, 10**6), (2**32, 2**32), (-1, 5)], ids=["huge", "overflow", "negative"])
def test_rejects_forged_array_header(tmp_path, shape):
    from joblib.numpy_pickle import NumpyArrayWrapper

    w = NumpyArrayWrapper(np.ndarray, shape, "C", np.dtype("f8"))
    path = tmp_path / "forged.jbl"
    path.write_bytes(pickle.dumps(w, protocol=4) + b"\x00" + b"\x01" * 64)
    _assert_rejected(path)


def test_rejects_array_wrapper_with_non_ndarray_subclass(tmp_path):
    from joblib.numpy_pickle import NumpyArrayWrapper

    w = NumpyArrayWrapper(np.ndarray, (2,), "C", np.dtype("f8"))
    w.subclass = np.dtype  # an allowed global, but not ndarray
    path = tmp_path / "subclass.jbl"
    path.write_bytes(pickle.dumps(w, protocol=4) + b"\x00" + b"\x00" * 16)
    _assert_rejected(path, match="subclass")


def test_rejects_truncated_list(tmp_path):
    path = tmp_path / "names.pkl"
    data = pickle.dumps(["m1", "m2", "m3"], protocol=4)
    path.write_bytes(data[:-3])
    _assert_rejected(path)


@pytest.mark.parametrize(
    "content",
    [b"model_a\nmodel_b\n", b"", b"\x00\x01\x02", b"PK\x03\x04zipfile", b"\x80"],
    ids=["text", "empty", "binary", "zip", "proto-only"],
)
def test_rejects_non_pickle(tmp_path, content):
    path = tmp_path / "not_a_pickle.jbl"
    path.write_bytes(content)
    _assert_rejected(path)


def test_rejects_protocol_0_text_pickle(tmp_path):
    path = tmp_path / "p0.pkl"
    path.write_bytes(pickle.dumps(["a"], protocol=0))
    _assert_rejected(path, match="header")


def test_rejects_compressed_joblib(tmp_path):
    path = tmp_path / "z.jbl"
    joblib.dump(np.arange(10.0), path, compress=3)
    _assert_rejected(path)


def test_rejects_object_dtype_array_written_by_joblib(tmp_path):
    path = tmp_path / "obj.jbl"
    joblib.dump(np.array(["a", 1, None], dtype=object), path)
    err = _assert_rejected(path, match="dtype")
    assert err.field == "NumpyArrayWrapper.dtype"


def test_rejects_object_dtype_array_of_str_written_by_joblib(tmp_path):
    path = tmp_path / "objstr.jbl"
    joblib.dump(np.array(["m1", "m2"], dtype=object), path)
    _assert_rejected(path, match="dtype")


def test_rejects_object_dtype_array_pickled_by_numpy(tmp_path):
    path = tmp_path / "obj_np.pkl"
    path.write_bytes(pickle.dumps(np.array(["a", 1], dtype=object), protocol=4))
    _assert_rejected(path)
