"""Encoders of your own: import paths, installed plugins, and the check before a run.

A custom encoder is any scikit-learn-style transformer (``fit(X, y)``, ``transform(X)``) named by
an import path ``module:attr`` (a class, a factory function or an estimator instance to clone) with
keyword parameters, or installed as a plugin: a package that declares an entry point in the group
:data:`ENTRY_POINT_GROUP` (``encbench.encoders``), whose name is the encoder's name.

>>> canonical, custom = parse_encoders("OH,MT,freq=mypkg.encoders:FrequencyEncoder")  # doctest: +SKIP
>>> custom[0].build()                                                             # doctest: +SKIP

The engine never imports anything for a canonical name: the 32 configurations of the study are
built by :func:`encbench.encoders.make_encoder` exactly as before. A custom encoder travels to the
task processes (and Dask workers) as its JSON spec (:meth:`CustomEncoder.to_json`) and is imported
there; it must therefore be importable on every worker (installed, or on ``PYTHONPATH``).

The app never imports code from an upload: it offers installed plugins only.
"""
from __future__ import annotations

import importlib
import inspect
import json
import logging
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from encbench import vocab

log = logging.getLogger(__name__)

#: entry-point group of encoder plugins: ``name = "package.module:attr"``.
ENTRY_POINT_GROUP = "encbench.encoders"
#: a custom encoder's name: short, no comma, colon or equals sign (they separate specs).
NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_.+\-]{0,39}$")
_TARGET_PATTERN = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")
#: rows of the sample the pre-run check fits and transforms.
CHECK_ROWS = 300


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


def build_from_json(text: str):
    """Build the encoder a task carries (:meth:`CustomEncoder.to_json`), wrapped in a
    :class:`~encbench.encoders.checked.CheckedEncoder` that checks every output it gives."""
    from encbench.encoders.checked import CheckedEncoder  # scikit-learn: imported in tasks only

    data = json.loads(text)
    return CheckedEncoder(encoder=build(data["import"], data.get("params")), name=data["import"])


#: rows of an encoder output checked for NaN and infinity at a time (bounds the check's memory).
_CHECK_CHUNK = 1 << 16


def non_finite(output) -> tuple[int, int | None]:
    """NaN and infinite values in an encoder's output, and the first column holding one.

    Sparse matrices, data frames (column by column) and arrays (by chunks of rows) are checked
    without a full dense copy; columns that are not numeric are not counted (a model refuses
    them with its own error).
    """
    if hasattr(output, "tocsc") and hasattr(output, "data"):  # scipy.sparse
        csc = output.tocsc()
        bad = ~np.isfinite(csc.data.astype(float, copy=False))
        if not bad.any():
            return 0, None
        column = int(np.searchsorted(csc.indptr, np.flatnonzero(bad)[0], side="right") - 1)
        return int(bad.sum()), column
    if isinstance(output, pd.DataFrame):
        total, first = 0, None
        for j in range(output.shape[1]):
            try:
                values = np.asarray(output.iloc[:, j], dtype=float)
            except (TypeError, ValueError):
                continue
            n = int((~np.isfinite(values)).sum())
            if n and first is None:
                first = j
            total += n
        return total, first
    array = np.asarray(output)
    if array.dtype.kind in "biu" or array.ndim == 0:
        return 0, None
    if array.ndim == 1:
        array = array.reshape(-1, 1)
    total, first = 0, None
    for start in range(0, len(array), _CHECK_CHUNK):
        try:
            chunk = np.asarray(array[start:start + _CHECK_CHUNK], dtype=float)
        except (TypeError, ValueError):
            return total, first
        bad = ~np.isfinite(chunk)
        if bad.any():
            if first is None:
                first = int(np.argwhere(bad)[0][-1])
            total += int(bad.sum())
    return total, first


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
    import ast
    import sys
    from importlib.machinery import PathFinder

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
                    import tomllib

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


# -- the pre-run check -------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckReport:
    """Outcome of :func:`check_encoder` on one sample.

    Attributes
    ----------
    name : str
    problems : tuple of str
        Empty when the encoder passed.
    n_rows, n_columns_in, n_columns_out : int
        Sample size and the encoder's input/output widths (0 when it failed before).
    seconds : float
    """

    name: str
    problems: tuple[str, ...]
    n_rows: int
    n_columns_in: int
    n_columns_out: int
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.problems


def _as_matrix(output, what: str, n_rows: int) -> tuple[np.ndarray | None, list[str]]:
    """The output as a float matrix, and problems with it."""
    if hasattr(output, "toarray"):
        output = output.toarray()
    try:
        matrix = np.asarray(output.to_numpy() if hasattr(output, "to_numpy") else output, dtype=float)
    except (TypeError, ValueError) as exc:
        return None, [f"{what} returned values that are not numbers ({exc})"]
    if matrix.ndim == 1:
        matrix = matrix.reshape(-1, 1)
    if matrix.ndim != 2:
        return None, [f"{what} returned a {matrix.ndim}-D array; an encoder returns one row per input row"]
    problems = []
    if matrix.shape[0] != n_rows:
        problems.append(f"{what} returned {matrix.shape[0]} rows for {n_rows} input rows")
    if matrix.shape[1] == 0:
        problems.append(f"{what} returned no columns")
    bad = ~np.isfinite(matrix)
    if bad.any():
        problems.append(f"{what} returned {int(bad.sum())} NaN or infinite values (e.g. in output "
                        f"column {int(np.argwhere(bad)[0][1])}); encode missing and unseen levels as numbers")
    return matrix, problems


def check_encoder(spec: CustomEncoder, X: pd.DataFrame, y, *, n_rows: int = CHECK_ROWS,
                  seed: int = 0) -> CheckReport:
    """Fit and transform a custom encoder on a small sample, as the protocol will.

    The sample's categorical columns are imputed (most frequent, as the protocol does) and split
    into a training part and a test part holding one unseen level. Checked: it builds; ``fit``
    (through ``fit_transform``) and ``transform`` run; both return one row per input row, the same
    number of numeric columns, no NaN or infinity; ``transform`` takes no target; and ``transform``
    is a function of each row's values alone (rows permuted in give the same rows permuted out,
    equal rows give equal outputs): an encoder that returned training targets by position would
    leak the target into the test fold.
    """
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    X, y = _sample(X, y, n_rows, rng)
    return _check_sample(spec, X, y, rng, start=start)


def _sample(X: pd.DataFrame, y, n_rows: int, rng) -> tuple[pd.DataFrame, np.ndarray]:
    """The rows the check uses: at most ``n_rows``, drawn with ``rng``, in their order."""
    y = np.asarray(y)
    if len(X) > n_rows:
        take = np.sort(rng.choice(len(X), n_rows, replace=False))
        X, y = X.iloc[take], y[take]
    return X.reset_index(drop=True), y


def _check_sample(spec: CustomEncoder, X: pd.DataFrame, y: np.ndarray, rng, *,
                  start: float | None = None) -> CheckReport:
    """:func:`check_encoder` on the sample (``rng`` continues from drawing it)."""
    start = time.perf_counter() if start is None else start
    X = X.apply(lambda c: c.fillna(c.mode().iloc[0]) if c.notna().any() else c.fillna("missing"))
    n = len(X)
    cut = max(2, (2 * n) // 3)
    X_train, y_train = X.iloc[:cut].reset_index(drop=True), y[:cut]
    X_test = X.iloc[cut:].reset_index(drop=True).copy()
    if len(X_test) and X_test.shape[1]:
        X_test.iloc[0, 0] = "__encbench_unseen_level__"

    def report(problems, width=0):
        return CheckReport(spec.name, tuple(problems), n, X.shape[1], width, time.perf_counter() - start)

    try:
        encoder = spec.build()
    except ValueError as exc:
        return report([str(exc)])
    transform = encoder.transform
    try:
        required = [p for p in inspect.signature(transform).parameters.values()
                    if p.name == "y" and p.default is inspect.Parameter.empty]
    except (TypeError, ValueError):
        required = []
    if required:
        return report(["transform requires the target y: an encoder must encode test rows without "
                       "their labels (that would leak the target)"])
    try:
        fitted = encoder.fit_transform(X_train, y_train) if hasattr(encoder, "fit_transform") \
            else encoder.fit(X_train, y_train).transform(X_train)
    except Exception as exc:  # noqa: BLE001 - user code: its error is the finding
        return report([f"fit on {len(X_train)} rows x {X.shape[1]} categorical columns raised "
                       f"{type(exc).__name__}: {exc}"])
    train_matrix, problems = _as_matrix(fitted, "fit_transform", len(X_train))
    if train_matrix is None:
        return report(problems)
    width = train_matrix.shape[1]
    try:
        test_matrix, more = _as_matrix(encoder.transform(X_test), "transform (with an unseen level)",
                                       len(X_test))
    except Exception as exc:  # noqa: BLE001 - user code: its error is the finding
        return report(problems + [f"transform of new rows (one holding an unseen level) raised "
                                  f"{type(exc).__name__}: {exc}"], width)
    problems += more
    if test_matrix is not None and test_matrix.shape[1] != width:
        problems.append(f"transform returned {test_matrix.shape[1]} columns but fit_transform {width}; "
                        f"both must give the same columns")
    if not problems:  # the row-wise checks need well-shaped outputs
        problems += _leakage_problems(encoder, X_train, rng)
    return report(problems, width)


def _leakage_problems(encoder, X_train: pd.DataFrame, rng) -> list[str]:
    """transform must be row-wise: permuted rows in -> same rows permuted out; equal rows equal."""
    try:
        base, _ = _as_matrix(encoder.transform(X_train), "transform", len(X_train))
        perm = rng.permutation(len(X_train))
        shuffled, _ = _as_matrix(encoder.transform(X_train.iloc[perm].reset_index(drop=True)),
                                 "transform", len(X_train))
        half = X_train.iloc[: max(1, len(X_train) // 4)]
        doubled, _ = _as_matrix(encoder.transform(pd.concat([half, half], ignore_index=True)),
                                "transform", 2 * len(half))
    except Exception as exc:  # noqa: BLE001 - user code: its error is the finding
        return [f"transform of the training rows in another order raised {type(exc).__name__}: {exc}"]
    if (base is None or shuffled is None or doubled is None or len(base) != len(X_train)
            or len(doubled) != 2 * len(half)):
        return []
    problems = []
    if base.shape != shuffled.shape or not np.allclose(base[perm], shuffled, equal_nan=True):
        problems.append("transform depends on the position of rows, not only on their values (rows given "
                        "in another order were encoded differently): it may return stored training "
                        "targets, which leaks the target")
    elif not np.allclose(doubled[: len(half)], doubled[len(half):], equal_nan=True):
        problems.append("transform encoded equal rows differently: it must be a function of a row's "
                        "values alone (no target, no position)")
    return problems


def check_in_process(spec: dict, X: pd.DataFrame, y: np.ndarray, rng_state: dict) -> CheckReport:
    """:func:`check_encoder`'s work on a drawn sample, as a task process runs it.

    ``rng_state`` is the state of the generator that drew the sample, so the result equals
    :func:`check_encoder` on the whole data.
    """
    import warnings

    rng = np.random.default_rng()
    rng.bit_generator.state = rng_state
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _check_sample(CustomEncoder.from_dict(spec), X, y, rng)


#: address space of the process checking custom encoders is at least this (its libraries
#: alone take about 600 MB of it).
CHECK_MEMORY_FLOOR = 1 << 30


def check_memory_limit(memory_budget=None) -> int:
    """The memory cap of the check process: the task memory budget
    (:func:`encbench.engine.budget.parse_budget`), at least :data:`CHECK_MEMORY_FLOOR`."""
    from encbench.engine.budget import parse_budget

    return max(CHECK_MEMORY_FLOOR, parse_budget(memory_budget))


def _bounded_check(proc, spec: CustomEncoder, X: pd.DataFrame, y: np.ndarray, *, n_rows: int,
                   timeout: float, memory_limit: int) -> CheckReport:
    """:func:`check_encoder` in the task process ``proc``, within ``timeout`` seconds."""
    from encbench.engine.executors import ChildFailed

    start = time.perf_counter()
    rng = np.random.default_rng(0)
    X, y = _sample(X, y, n_rows, rng)
    try:
        return proc.call("encbench.custom:check_in_process",
                         (spec.to_dict(), X, y, rng.bit_generator.state), timeout)
    except ChildFailed as exc:
        if exc.timed_out:
            problem = (f"the check (fit and transform on {len(X)} rows) did not finish within the run's "
                       f"timeout of {timeout:g} s and was stopped: does fit or transform hang?")
        elif exc.code is not None and exc.code > 0:
            problem = (f"the check {exc}: the encoder ended the process (sys.exit or os._exit) "
                       f"instead of raising an exception")
        else:
            problem = (f"the check {exc} (it may use at most {memory_limit / 2**30:.1f} GiB of memory, "
                       f"the run's memory budget per task)")
        quoted = exc.output.strip()[-300:]
        if quoted:
            problem += f"; its last output: {quoted!r}"
        return CheckReport(spec.name, (problem,), len(X), X.shape[1], 0, time.perf_counter() - start)
    except ValueError as exc:  # the check itself raised (e.g. the encoder's output cannot be sent)
        return CheckReport(spec.name, (f"the check raised {exc}",), len(X), X.shape[1], 0,
                           time.perf_counter() - start)


def check_on_datasets(customs, datasets, *, n_rows: int = CHECK_ROWS, timeout: float | None = None,
                      memory_limit: int | None = None) -> list[CheckReport]:
    """Check each custom encoder on the first dataset with categorical columns, in a task process.

    The encoders run in a child process (:class:`encbench.engine.executors.TaskProcess`) whose
    address space is capped at ``memory_limit`` and which is killed, with everything it
    started, after ``timeout`` seconds: an encoder that hangs, eats the memory or ends its
    process fails its check with the reason, and the caller (a run, or the app's server) goes
    on. Nothing of the encoder is imported in the calling process.

    Parameters
    ----------
    timeout : float, optional
        Seconds the check of one encoder may take (a run's ``--timeout``); default 600.
    memory_limit : int, optional
        Bytes; default :func:`check_memory_limit`.

    Raises
    ------
    ValueError
        Listing every failed check, with the dataset it used.
    """
    from encbench.engine.executors import TaskProcess

    customs = list(customs)
    if not customs:
        return []
    sample = next((ds for ds in datasets if len(ds.categorical)), None)
    if sample is None:
        raise ValueError("no dataset of the run has a categorical column to check the custom "
                         f"encoders on: got {[ds.key for ds in datasets]!r}")
    timeout = 600.0 if timeout is None else float(timeout)
    memory_limit = check_memory_limit() if memory_limit is None else int(memory_limit)
    X, y = sample.X[list(sample.categorical)], sample.y
    # the call is synchronous: the starting thread outlives the process, whichever it is
    proc = TaskProcess(die_with_parent=True, memory_limit=memory_limit)
    try:
        reports = [_bounded_check(proc, spec, X, y, n_rows=n_rows, timeout=timeout,
                                  memory_limit=memory_limit) for spec in customs]
    finally:
        proc.stop()
    failed = [r for r in reports if not r.ok]
    if failed:
        lines = [f"custom encoder {r.name!r} failed the check on {r.n_rows} rows of dataset "
                 f"{sample.name!r} ({sample.key}):" + "".join(f"\n  - {p}" for p in r.problems)
                 for r in failed]
        raise ValueError("\n".join(lines))
    for r in reports:
        log.info("custom encoder %s passed the check on %d rows of %s: %d columns in, %d out (%.2f s)",
                 r.name, r.n_rows, sample.name, r.n_columns_in, r.n_columns_out, r.seconds)
    return reports
