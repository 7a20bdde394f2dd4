"""Methods from other packages: an installed distribution registers a method under the entry-point
group ``benchcast.methods`` (in its ``pyproject.toml``)::

    [project.entry-points."benchcast.methods"]
    my_method = "my_package.module:MyMethod"

The entry point's name is the method's name (``--method my_method``); its object is a
:class:`~benchcast.methods.base.Method` subclass, registered beside the built-in ones the first time
a name that is not built in, or the whole list, is asked for (:func:`load_plugins`). Each method records where it comes from
(:class:`Origin`: the distribution, its version and the sha256 of its Python files), which
``benchcast methods`` shows. A plugin that fails to load, names a built-in method or is not a
method is not registered; the reason is kept (:data:`FAILED`) and given, in one line, when the
name is asked for.

A workflow job's method parameters carry a plugin method's origin under :data:`ORIGIN_KEY`
(:func:`job_params`): a new version or any edit of the package's code changes the job's parameters,
so Snakemake reruns its jobs; a built-in method's parameters stay as they are. :func:`strip_origin`
takes the key off again before the method is made, and refuses a job planned for other code than
the installed one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import metadata

from benchcast.errors import ConfigError

GROUP = "benchcast.methods"
#: the key of a job's method parameters holding a plugin method's origin (not a method setting)
ORIGIN_KEY = "benchcast_plugin"


@dataclass(frozen=True)
class Origin:
    package: str  # the distribution's name ("benchcast" for a built-in method)
    version: str  # "" for a built-in method
    code_sha256: str | None  # of the distribution's Python files (None for a built-in method)
    top_level: str  # the import name of the method's package (its stored fits' classes live there)

    def label(self) -> str:
        return self.package if self.package == "benchcast" else f"{self.package} {self.version}"


#: where a built-in method comes from (its code is benchcast's: the version is the installed one)
BUILT_IN = Origin("benchcast", "", None, "benchcast")
#: method name -> where it comes from (plugins only; a built-in method is :func:`origin`'s default)
ORIGINS: dict[str, Origin] = {}
#: plugin name -> why it was not registered
FAILED: dict[str, str] = {}


def code_sha256(dist: metadata.Distribution) -> str | None:
    """sha256 over the distribution's ``.py`` files (path and bytes, in path order): changes with
    its code, so a job's parameters that hold it rerun the job."""
    files = sorted((f for f in dist.files or () if f.suffix == ".py"), key=str)
    if not files:
        return None
    h = hashlib.sha256()
    for f in files:
        path = f.locate()
        try:
            data = path.read_bytes()
        except OSError:
            continue
        h.update(str(f).encode() + b"\0" + data + b"\0")
    return h.hexdigest()


_loaded = False


def load_plugins() -> None:
    """Register every method of the ``benchcast.methods`` entry points into the registry, once per
    process, when a method name is not a built-in one or the whole list is asked for: scanning the
    installed packages costs ~0.1 s, which a built-in method's call need not pay."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    from benchcast.methods.base import REGISTRY as registry
    from benchcast.methods.base import Method

    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda e: e.name):
        dist = ep.dist
        where = f"{dist.name} {dist.version}" if dist is not None else ep.value
        if ep.name in registry:
            FAILED[ep.name] = (
                f"{where} registers {ep.name!r}, a name benchcast's own method has; rename its entry point"
            )
            continue
        try:
            cls = ep.load()
        except Exception as exc:  # any error of a third-party import: kept, said when the name is used
            FAILED[ep.name] = f"{where}: importing {ep.value} failed ({type(exc).__name__}: {exc})"
            continue
        if not (isinstance(cls, type) and issubclass(cls, Method)):
            FAILED[ep.name] = f"{where}: {ep.value} is not a subclass of benchcast.methods.Method"
            continue
        if any(cls is known for known in registry.values()):
            # a class registered already (a built-in one, re-exported): its own name stays; this
            # entry point registers a subclass that differs only in the name
            cls = type(
                cls.__name__, (cls,), {"name": ep.name, "__module__": cls.__module__, "__qualname__": cls.__qualname__}
            )
        else:
            cls.name = ep.name
        registry[ep.name] = cls
        ORIGINS[ep.name] = Origin(
            package=dist.name if dist is not None else ep.value.split(":")[0],
            version=dist.version if dist is not None else "",
            code_sha256=code_sha256(dist) if dist is not None else None,
            top_level=cls.__module__.split(".")[0],
        )


def origin(name: str) -> Origin:
    """Where method ``name`` comes from."""
    return ORIGINS.get(name, BUILT_IN)


def allowed_top_levels() -> set[str]:
    """The packages whose classes a stored fit may hold: benchcast's and every registered plugin's."""
    load_plugins()
    return {"benchcast", *(o.top_level for o in ORIGINS.values())}


def job_params(name: str, params: dict | None) -> dict:
    """A job's parameters for method ``name``: ``params``, and for a method of another package its
    origin under :data:`ORIGIN_KEY` (package, version, code sha256). Call it after the name was
    checked (:func:`benchcast.methods.make_method` loads the plugins)."""
    out = dict(params or {})
    o = ORIGINS.get(name)
    if o is not None:
        out[ORIGIN_KEY] = {"package": o.package, "version": o.version, "code_sha256": o.code_sha256}
    return out


def strip_origin(name: str, params: dict | None, prefix: str = "") -> dict:
    """``params`` without :data:`ORIGIN_KEY`; when it is there, it must be the installed package's
    origin (a job planned before the package changed is refused, not run with other code)."""
    params = dict(params or {})
    recorded = params.pop(ORIGIN_KEY, None)
    if recorded is None:
        return params
    now = job_params(name, {}).get(ORIGIN_KEY)
    if recorded != now:
        what = (
            "a built-in method"
            if now is None
            else f"{now['package']} {now['version']} (code {str(now['code_sha256'])[:12]})"
        )
        raise ConfigError(
            f"{prefix}method '{name}' was planned for {recorded.get('package')} {recorded.get('version')} "
            f"(code {str(recorded.get('code_sha256'))[:12]}), but {what} is installed. Fix: run the workflow "
            "again: Snakemake reruns the method's jobs with the installed code"
        )
    return params
