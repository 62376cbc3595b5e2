"""Encoders of your own: import paths and installed plugins (the check before a run is
:mod:`encbench.engine.custom_check`, the wrapper a task builds :mod:`encbench.encoders.checked`).

A custom encoder is any scikit-learn-style transformer (``fit(X, y)``, ``transform(X)``) named by
an import path ``module:attr`` (a class, a factory function or an estimator instance to clone) with
keyword parameters, or installed as a plugin: a package that declares an entry point in the group
:data:`ENTRY_POINT_GROUP` (``encbench.encoders``), whose name is the encoder's name.

>>> canonical, custom = parse_encoders("OH,MT,freq=mypkg.encoders:FrequencyEncoder")  # doctest: +SKIP
>>> custom[0].build()                                                             # doctest: +SKIP

The engine never imports anything for a canonical name: the 32 configurations of the study are
built by :func:`encbench.encoders.make_encoder`. A custom encoder travels to the
task processes (and Dask workers) as its JSON spec (:meth:`CustomEncoder.to_json`) and is imported
there; it must therefore be importable on every worker (installed, or on ``PYTHONPATH``).

The app never imports code from an upload: it offers installed plugins only.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import json
import logging
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from importlib.machinery import PathFinder
from pathlib import Path


from encbench import vocab

log = logging.getLogger(__name__)

#: entry-point group of encoder plugins: ``name = "package.module:attr"``.
ENTRY_POINT_GROUP = "encbench.encoders"
#: a custom encoder's name: short, no comma, colon or equals sign (they separate specs).
NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_.+\-]{0,39}$")
_TARGET_PATTERN = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


@dataclass(frozen=True)
class CustomEncoder:
    """A custom encoder: its name in the results, where to import it and its parameters.

    Attributes
    ----------
    name : str
        Name in the results (never one of the 32 canonical names).
    target : str
        Import path ``module:attr`` of a class, a factory or an estimator instance.
    params : dict
        Keyword arguments of the class or factory (JSON-able).
    plugin : str or None
        Entry-point name when it comes from an installed plugin.
    package, version : str or None
        Distribution that provides the module and its version (provenance), when known.
    """

    name: str
    target: str
    params: dict = field(default_factory=dict, hash=False)
    plugin: str | None = None
    package: str | None = None
    version: str | None = None

    def __post_init__(self):
        check_name(self.name)
        if not isinstance(self.target, str) or not _TARGET_PATTERN.match(self.target):
            raise ValueError(f"an encoder import path is 'module:attr' (e.g. "
                             f"'mypkg.encoders:FancyEncoder'): got {self.target!r}")
        if not isinstance(self.params, Mapping):
            raise ValueError(f"parameters of encoder {self.name!r} must be a mapping: got {self.params!r}")
        try:
            params = json.loads(json.dumps(dict(self.params), sort_keys=True))
        except (TypeError, ValueError):
            raise ValueError(f"parameters of encoder {self.name!r} must be JSON values: "
                             f"got {self.params!r}") from None
        object.__setattr__(self, "params", params)

    def to_dict(self) -> dict:
        """JSON-able; :meth:`from_dict` rebuilds it."""
        return {"name": self.name, "import": self.target, "params": self.params,
                "plugin": self.plugin, "package": self.package, "version": self.version}

    @classmethod
    def from_dict(cls, data: Mapping) -> CustomEncoder:
        if not isinstance(data, Mapping) or "import" not in data or "name" not in data:
            raise ValueError(f"a custom encoder is a mapping with 'name' and 'import': got {data!r}")
        return cls(name=data["name"], target=data["import"], params=dict(data.get("params") or {}),
                   plugin=data.get("plugin"), package=data.get("package"), version=data.get("version"))

    def to_json(self) -> str:
        """What a task carries to build the encoder: import path and parameters only."""
        return json.dumps({"import": self.target, "params": self.params}, sort_keys=True)

    def build(self):
        """A new, unfitted encoder (imports the module)."""
        return build(self.target, self.params)

    def provenance(self) -> dict:
        """Import path, package, version and parameters, for exports and reports."""
        return {"encoder": self.name, "import": self.target, "package": self.package or "",
                "version": self.version or "", "plugin": self.plugin or "",
                "params": json.dumps(self.params, sort_keys=True)}


def check_name(name: object) -> str:
    """A valid custom encoder name, never one of the canonical 32 (case-insensitive)."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise ValueError(f"a custom encoder name starts with a letter and holds at most 40 letters, "
                         f"digits or _ . + -: got {name!r}")
    clash = {e.lower(): e for e in vocab.ENCODERS}.get(name.lower())
    if clash is not None:
        raise ValueError(f"custom encoder name {name!r} collides with the study's encoder {clash!r}; "
                         f"name it with name=module:attr, e.g. My{clash}=mypkg.encoders:{clash}Encoder")
    if name.lower() in ("all", "none"):
        raise ValueError(f"{name!r} is reserved: got it as a custom encoder name")
    return name


# -- importing ---------------------------------------------------------------------------------
def resolve(target: str):
    """The object at ``module:attr`` (attr may be dotted); ValueError with the reason otherwise."""
    if not isinstance(target, str) or not _TARGET_PATTERN.match(target):
        raise ValueError(f"an encoder import path is 'module:attr': got {target!r}")
    module_name, attr = target.split(":", 1)
    try:
        obj = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"cannot import module {module_name!r} of encoder {target!r}: {exc}. Install "
                         f"its package, or run from the directory that holds it (it is then put on "
                         f"PYTHONPATH for the task processes)") from None
    except Exception as exc:  # noqa: BLE001 - the module itself raised; reported
        raise ValueError(f"importing module {module_name!r} of encoder {target!r} raised "
                         f"{type(exc).__name__}: {exc}") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"module {module_name!r} has no attribute {attr!r}: got encoder "
                             f"{target!r}") from None
    return obj


def build(target: str, params: Mapping | None = None):
    """Instantiate the encoder at ``target`` with ``params``.

    A class or a factory is called with the parameters; an estimator instance is cloned and the
    parameters set with ``set_params``.
    """
    obj = resolve(target)
    params = dict(params or {})
    try:
        if inspect.isclass(obj) or (callable(obj) and not hasattr(obj, "fit")):
            encoder = obj(**params)
        else:
            from sklearn.base import clone

            encoder = clone(obj).set_params(**params) if params else clone(obj)
    except Exception as exc:  # noqa: BLE001 - user code: its error is reported
        raise ValueError(f"cannot build encoder {target!r} with parameters {params!r}: "
                         f"{type(exc).__name__}: {exc}") from None
    missing = [m for m in ("fit", "transform") if not callable(getattr(encoder, m, None))]
    if missing:
        raise ValueError(f"encoder {target!r} built a {type(encoder).__name__} without "
                         f"{' and '.join(missing)}: an encoder needs fit(X, y) and transform(X)")
    return encoder


def package_of(target: str) -> tuple[str | None, str | None]:
    """(distribution, version) of the package providing ``target``'s module, if installed;
    else (None, the ``__version__`` string the module's source assigns, if it does).

    Nothing is imported: the module's code first runs in the bounded process of the pre-run
    check (:func:`check_on_datasets`), so a dry run, or the app listing plugins, runs none of it.
    """
    top = target.split(":", 1)[0].split(".", 1)[0]
    try:
        dists = metadata.packages_distributions().get(top) or []
    except Exception:  # noqa: BLE001 - a broken environment must not stop a run
        dists = []
    for dist in dists:
        try:
            return dist, metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None, _source_version(target.split(":", 1)[0])


def _source_version(module_name: str) -> str | None:
    """The literal ``__version__ = "..."`` of a module's source file, found without importing it
    (nor its parent packages); None if it has none."""
    loaded = sys.modules.get(module_name)
    if loaded is not None:  # already imported (e.g. the standard library): just read it
        version = getattr(loaded, "__version__", None)
        return str(version) if version is not None else None
    parts, search, spec = module_name.split("."), None, None
    for depth in range(1, len(parts) + 1):
        spec = PathFinder.find_spec(".".join(parts[:depth]), search)
        if spec is None:
            return None
        search = spec.submodule_search_locations
    origin = getattr(spec, "origin", None)
    if not origin or not str(origin).endswith(".py"):
        return None
    try:
        tree = ast.parse(Path(origin).read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__version__"
                                                 for t in node.targets)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            return node.value.value
    return None


# -- plugins -----------------------------------------------------------------------------------
def plugins() -> list[CustomEncoder]:
    """Installed encoder plugins (entry points of :data:`ENTRY_POINT_GROUP`), by name.

    Nothing is imported: a plugin's module is imported only when it is run or checked.
    Entry points whose name is not a valid custom encoder name (e.g. one of the 32) are skipped
    with a warning.
    """
    found = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = getattr(ep, "dist", None)
        package = dist.metadata["Name"] if dist is not None else None
        version = dist.version if dist is not None else None
        try:
            found.setdefault(ep.name, CustomEncoder(ep.name, ep.value, {}, plugin=ep.name,
                                                    package=package, version=version))
        except ValueError as exc:
            log.warning("encoder plugin %r of %s skipped: %s", ep.name, package or "?", exc)
    return [found[name] for name in sorted(found, key=str.lower)]


def find_plugin(name: str) -> CustomEncoder | None:
    for plugin in plugins():
        if plugin.name.lower() == name.lower():
            return plugin
    return None


# -- parsing the command line ------------------------------------------------------------------
#: deepest nesting of ``--encoder-params`` (a table per encoder, of values and lists); deeper is
#: refused with a message instead of Python's RecursionError while parsing or hashing it
PARAMS_MAX_DEPTH = 32


def _nesting_depth(value, limit: int) -> int:
    """Levels of tables and lists in ``value`` (iteratively, stopping past ``limit``)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, Mapping) else \
            item if isinstance(item, (list, tuple)) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _too_deep(where: str) -> ValueError:
    return ValueError(f"--encoder-params {where} is nested more than {PARAMS_MAX_DEPTH} levels deep; "
                      f"encoder parameters are one table per encoder of plain values and short lists, "
                      f"e.g. '{{\"FancyEncoder\": {{\"alpha\": 2}}}}'")


def load_params(value: str | Path | Mapping | None) -> dict[str, dict]:
    """``--encoder-params``: a JSON object, or a ``.json`` / ``.toml`` file, mapping an encoder
    (its name, attribute or import path) to its keyword parameters.

    Nesting deeper than :data:`PARAMS_MAX_DEPTH` is refused with a ValueError (also when the
    parser itself gives up on it with a RecursionError).
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return {}
    where = "(the JSON given)"
    if isinstance(value, Mapping):
        data = value
    else:
        text = str(value).strip()
        if text.startswith("{"):
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"--encoder-params is not valid JSON ({exc}): got {text[:80]!r}") from None
            except RecursionError:
                raise _too_deep(where) from None
        else:
            path = Path(text)
            if not path.is_file():
                raise ValueError(f"--encoder-params is neither a JSON object nor a file: got {text!r}")
            suffix = path.suffix.lower()
            where = f"file {path.name!r}"
            try:
                if suffix == ".toml":
                    data = tomllib.loads(path.read_text(encoding="utf-8"))
                elif suffix == ".json":
                    data = json.loads(path.read_text(encoding="utf-8"))
                else:
                    raise ValueError(f"an encoder parameter file ends in .json or .toml: got {path.name!r}")
            except (json.JSONDecodeError, ValueError) as exc:
                if isinstance(exc, ValueError) and "ends in" in str(exc):
                    raise
                raise ValueError(f"cannot read encoder parameters from {path.name!r}: {exc}") from None
            except RecursionError:
                raise _too_deep(where) from None
    if _nesting_depth(data, PARAMS_MAX_DEPTH) > PARAMS_MAX_DEPTH:
        raise _too_deep(where)
    if not isinstance(data, Mapping) or not all(isinstance(v, Mapping) for v in data.values()):
        raise ValueError(f"encoder parameters map each encoder to a table of parameters, e.g. "
                         f"'{{\"FancyEncoder\": {{\"alpha\": 2}}}}': got {data!r}")
    return {str(k): dict(v) for k, v in data.items()}


def parse_encoders(text: str | None, params: Mapping | None = None, *,
                   default_all: bool = True) -> tuple[tuple[str, ...], tuple[CustomEncoder, ...]]:
    """Split ``--encoders`` into canonical names and custom encoders.

    Items: a canonical name (case-insensitive) or ``all``; ``module:attr`` (named by ``attr``'s last
    part); ``name=module:attr``; an installed plugin's name; ``name=plugin``.

    Parameters
    ----------
    text : str or None
        Comma-separated items; None or ``all`` is the 32 (with ``default_all``); ``beyond`` is
        every encoder beyond the study (:data:`encbench.vocab.BEYOND_ENCODERS`).
    params : mapping, optional
        :func:`load_params` output; keys match a custom encoder's name, its attribute or its
        import path. A key that matches no custom encoder is an error.

    Returns
    -------
    (canonical names in vocabulary order, custom encoders in the given order)
    """
    params = dict(params or {})
    items = [t.strip() for t in (text or "").split(",") if t.strip()]
    if not items or [i.lower() for i in items] == ["all"]:
        if params:
            raise ValueError(f"--encoder-params names {', '.join(map(repr, params))} but no custom "
                             f"encoder is given in --encoders")
        return (vocab.ENCODERS if default_all else ()), ()
    lookup = {e.lower(): e for e in vocab.ALL_ENCODERS}
    canonical, custom, used = set(), [], set()
    for item in items:
        if item.lower() == "all":
            canonical.update(vocab.ENCODERS)
            continue
        if item.lower() == "beyond":
            canonical.update(vocab.BEYOND_ENCODERS)
            continue
        name, _, target = item.partition("=") if "=" in item else ("", "", item)
        name, target = name.strip(), target.strip()
        if not name and target.lower() in lookup and ":" not in target:
            canonical.add(lookup[target.lower()])
            continue
        if ":" in target:
            spec = CustomEncoder(name or _default_name(target), target)
        else:
            plugin = find_plugin(target)
            if plugin is None:
                known = [p.name for p in plugins()]
                raise ValueError(
                    f"unknown encoder: got {target!r}; use one of the 32 ({', '.join(vocab.ENCODERS)}), "
                    f"one beyond the study ({', '.join(vocab.BEYOND_ENCODERS)}), an import path module:attr"
                    + (f", or an installed plugin ({', '.join(known)})" if known else
                       " (no encoder plugins are installed)"))
            spec = plugin if not name else CustomEncoder(name, plugin.target, {}, plugin=plugin.plugin,
                                                         package=plugin.package, version=plugin.version)
        keys = [k for k in (spec.name, spec.target, spec.target.split(":", 1)[1],
                            spec.target.split(":", 1)[1].rsplit(".", 1)[-1], spec.plugin) if k in params]
        if keys:
            spec = CustomEncoder(spec.name, spec.target, params[keys[0]], spec.plugin, spec.package,
                                 spec.version)
            used.update(keys)
        if spec.package is None and spec.version is None:
            package, version = package_of(spec.target)
            spec = CustomEncoder(spec.name, spec.target, spec.params, spec.plugin, package, version)
        if any(c.name.lower() == spec.name.lower() for c in custom):
            raise ValueError(f"two custom encoders are named {spec.name!r}; name them with "
                             f"name=module:attr: got {text!r}")
        custom.append(spec)
    unused = [k for k in params if k not in used]
    if unused:
        raise ValueError(f"--encoder-params names encoders that are not in --encoders: got "
                         f"{', '.join(map(repr, unused))}; custom encoders: "
                         f"{', '.join(c.name for c in custom) or 'none'}")
    return tuple(e for e in vocab.ALL_ENCODERS if e in canonical), tuple(custom)


def _default_name(target: str) -> str:
    return target.split(":", 1)[1].rsplit(".", 1)[-1]
