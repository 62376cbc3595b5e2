"""Rewrite the generated tables of docs/protocol.md from the registries, so they cannot drift.

Each table lives between two marker lines of protocol.md::

    <!-- BEGIN generated: models (docs/gen_tables.py) -->
    ...
    <!-- END generated: models -->

and is rebuilt from the registry that holds its facts: models from ``encbench.models``, metrics
from ``encbench.metrics``, encoders from ``encbench.encoders.registry``, the protocol's constants
from ``encbench.engine.protocol`` and its neighbours. Text outside the markers is never touched.

    python docs/gen_tables.py            # rewrite docs/protocol.md
    python docs/gen_tables.py --check    # exit 1 when it is not current (tests/test_docs.py)
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from any directory
    sys.path.insert(0, str(REPO))

PROTOCOL = REPO / "docs" / "protocol.md"
_REGION = re.compile(r"(<!-- BEGIN generated: (?P<name>[\w-]+) \(docs/gen_tables\.py\) -->\n)"
                     r"(?P<body>.*?)"
                     r"(<!-- END generated: (?P=name) -->)", re.S)


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[object]], align: list[str] | None = None) -> str:
    align = align or ["---"] * len(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _dimension(name: str, dimension) -> str:
    """``max_depth Integer(2, 5)``; ``C Real(0.1, 100, log-uniform)``."""
    kind = type(dimension).__name__
    low, high = dimension.bounds
    prior = getattr(dimension, "prior", "uniform")
    return f"{name} {kind}({low:g}, {high:g}{', ' + prior if prior != 'uniform' else ''})"


def _grid(grid) -> str:
    if grid is None:
        return "early stopping (no grid)"
    return "; ".join(f"{k} {{{', '.join('None' if v is None else f'{v:g}' for v in values)}}}"
                     for k, values in grid.items())


def _estimator(spec, task: str, tuning: str = "no") -> str:
    return "`" + re.sub(r"\s+", " ", repr(spec.make(tuning, task))) + "`"


def tasks_table() -> str:
    from encbench.encoders.registry import ALL_REGISTRY, applies_to_task
    from encbench.engine.protocol import BAYES_CV_SEED, GRID_CV_SEED, INNER_FOLDS
    from encbench.metrics import metrics_for
    from encbench.models import models_for
    from encbench.tasks import TASK_REGISTRY

    rows = []
    for spec in TASK_REGISTRY.values():
        if spec.positive_class:
            target = "0/1: 1 for the positive class (by default the second in sorted order)"
        elif spec.classes:
            target = "class codes 0..K-1 in sorted class order"
        else:
            target = "the number, as a float"
        inner = re.sub(r"random_state=\d+", "random_state=seed", repr(spec.inner_folds(INNER_FOLDS, 0)))
        left_out = [name for name in ALL_REGISTRY if not applies_to_task(name, spec.name)]
        rows.append([spec.name, spec.description,
                     target, f"`{spec.outer_folds(5)!r}`",
                     f"`{inner}`, seed {GRID_CV_SEED} (grid search) or {BAYES_CV_SEED} (Bayesian search)",
                     "one column per class (one class against the rest)" if spec.column_per_class
                     else "one encoding of the target",
                     ", ".join(models_for(spec.name)), ", ".join(metrics_for(spec.name)),
                     ", ".join(left_out) or "-"])
    return _table(["task", "target", "y as the models see it", "outer folds (split cv, 5 folds)",
                   "inner folds of tuning", "supervised encoders", "models", "metrics",
                   "encoders not applicable"], rows)


def models_table() -> str:
    from encbench.models import MODEL_REGISTRY

    rows = []
    for spec in MODEL_REGISTRY.values():
        built = []
        classification = [t for t in spec.tasks if t != "regression"]
        if classification:
            built.append(f"{'/'.join(classification)}: {_estimator(spec, classification[0])}")
        if "regression" in spec.tasks:
            built.append(f"regression: {_estimator(spec, 'regression')}")
        stopping = spec.early_stopping
        if stopping is not None:
            built.append(f"early stopping: {stopping.patience} rounds on a "
                         f"{stopping.validation_fraction:.0%} split (`train_test_split(random_state="
                         f"{stopping.validation_seed})`), the scored metric as criterion")
        space = "; ".join(_dimension(k, v) for k, v in spec.space().items())
        rows.append([spec.name, "yes" if spec.in_study else "no", ", ".join(spec.tasks),
                     "<br>".join(built), _grid(spec.grid), space])
    return _table(["model", "in the study", "tasks", "estimator under no tuning (scikit-learn repr: "
                   "parameters other than the library's defaults)", "model tuning grid",
                   "full tuning space (BayesSearchCV)"], rows)


def metrics_table() -> str:
    from encbench.metrics import METRIC_REGISTRY

    rows = []
    for spec in METRIC_REGISTRY.values():
        for task in spec.tasks:
            bounds = "unbounded" if spec.bounds is None else f"[{spec.bounds[0]:g}, {spec.bounds[1]:g}]"
            chance = "" if spec.chance is None else f"{spec.chance(None if task == 'regression' else 2):g}"
            if spec.chance is not None and task == "multiclass" and spec.chance(3) != spec.chance(4):
                chance = "1/K (K classes)"
            rows.append([spec.name, task, spec.describe(task),
                         "`predict_proba`" if spec.needs_scores else "`predict`",
                         "higher" if spec.greater_is_better else "lower", bounds,
                         f"`{spec.scorer_for(task)}`", chance or "-"])
    return _table(["metric", "task", "definition", "computed on", "better", "bounds",
                   "scorer inside tuning", "chance level"], rows)


def encoders_table() -> str:
    from encbench.encoders.registry import ALL_REGISTRY, applies_to_task
    from encbench.vocab import TASKS

    rows = []
    for spec in ALL_REGISTRY.values():
        params = ", ".join(f"{k}={v!r}" for k, v in spec.params.items()) or "-"
        tasks = ", ".join(t for t in TASKS if applies_to_task(spec.name, t))
        rows.append([spec.name, spec.family, "yes" if spec.supervised else "no", tasks, params,
                     spec.description + (f" ({spec.library})" if spec.library else "")])
    return _table(["encoder", "family", "supervised", "tasks", "parameters", "description"], rows)


def constants_table() -> str:
    from encbench.data import target
    from encbench.encoders.registry import STUDY_SEED, STUDY_UNKNOWN
    from encbench.engine import grid, protocol, sparse

    rows = [
        ["outer folds", grid.Grid.n_folds, "`encbench.engine.grid.Grid.n_folds`"],
        ["regression outer and inner `KFold` seed", protocol.REGRESSION_FOLD_SEED,
         "`protocol.REGRESSION_FOLD_SEED`"],
        ["inner folds of tuning", protocol.INNER_FOLDS, "`protocol.INNER_FOLDS`"],
        ["inner CV seed of model tuning (GridSearchCV)", protocol.GRID_CV_SEED, "`protocol.GRID_CV_SEED`"],
        ["inner CV seed of full tuning (BayesSearchCV)", protocol.BAYES_CV_SEED, "`protocol.BAYES_CV_SEED`"],
        ["BayesSearchCV `random_state`", protocol.BAYES_SEED, "`protocol.BAYES_SEED`"],
        ["BayesSearchCV iterations at most", protocol.BAYES_MAX_ITER, "`protocol.BAYES_MAX_ITER`"],
        ["CV and BlowUp wrappers' fold seed", STUDY_SEED, "`encoders.registry.STUDY_SEED`"],
        ["unseen level, the study's own target encoders", f"{STUDY_UNKNOWN:g}",
         "`encoders.registry.STUDY_UNKNOWN`"],
        ["dense encoding above which OH and Sum go sparse (bytes)", f"{sparse.SPARSE_ABOVE_BYTES:,}",
         "`sparse.SPARSE_ABOVE_BYTES`"],
        ["a numeric target with more distinct values reads as regression",
         target.REGRESSION_MIN_VALUES, "`target.REGRESSION_MIN_VALUES`"],
    ]
    return _table(["constant", "value", "where"], rows)


TABLES = {"tasks": tasks_table, "models": models_table, "metrics": metrics_table, "encoders": encoders_table,
          "constants": constants_table}


def render(text: str) -> str:
    """``text`` with every generated region rebuilt; an unknown region name raises."""
    def replace(match: re.Match) -> str:
        name = match.group("name")
        if name not in TABLES:
            raise ValueError(f"{PROTOCOL.name}: unknown generated region {name!r}; known: {', '.join(TABLES)}")
        return match.group(1) + TABLES[name]() + match.group(4)

    out, n = _REGION.subn(replace, text)
    if n != len(TABLES):
        raise ValueError(f"{PROTOCOL.name}: found {n} generated regions, expected {len(TABLES)} "
                         f"({', '.join(TABLES)})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if protocol.md is not current")
    parser.add_argument("--path", type=Path, default=PROTOCOL)
    args = parser.parse_args(argv)
    text = args.path.read_text(encoding="utf-8")
    new = render(text)
    if args.check:
        if new != text:
            print(f"{args.path} is not current: run python docs/gen_tables.py", file=sys.stderr)
            return 1
        print(f"{args.path} is current")
        return 0
    if new != text:
        args.path.write_text(new, encoding="utf-8")
        print(f"rewrote {args.path}")
    else:
        print(f"{args.path} already current")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
