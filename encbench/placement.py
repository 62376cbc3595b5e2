"""Where does a new encoder rank among the study's 32? (``encbench place RUN_ID``)

A comparison run holds a custom encoder's local scores and, as controls, local scores of a few of
the 32 (default OH and MT) on published datasets. :func:`place` merges the new encoder's scores
with the *published* scores of the same datasets, models, metrics and tuning (published scores
win for the 32: the controls' local scores serve only as the check of the protocol) and ranks it
under every aggregation strategy, per (model, metric) and pooled over them, with a pairwise
Wilcoxon signed-rank test against the best published encoder.

The controls' agreement (:func:`control_agreement`) says whether the local protocol reproduces
the published numbers on these datasets: the share of control cells within
:data:`AGREEMENT_TOLERANCE` of the published value, from the one comparison of local and
published scores (:func:`encbench.reproduction.compare_to_published`). Read it before the ranking.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from encbench import vocab
from encbench.custom import CustomEncoder
from encbench.experiment import sort_experiments
from encbench.export import Provenance, chart_bytes, table_bytes
from encbench.reproduction import TOLERANCE, WARN_SHARE, compare_to_published
from encbench.stats import STRATEGIES, block_design, consensus, consensus_table, nemenyi
from encbench.store import queries
from encbench.vocab import FACTORS

log = logging.getLogger(__name__)

#: a control cell agrees when |local - published| <= this (:data:`encbench.reproduction.TOLERANCE`).
AGREEMENT_TOLERANCE = TOLERANCE
#: below this share of agreeing control cells the report warns (:data:`encbench.reproduction.WARN_SHARE`).
AGREEMENT_WARN = WARN_SHARE
#: label of the pooled combination (every (dataset, model, metric) is one voter).
POOLED = "pooled"


@dataclass(frozen=True)
class RunInfo:
    """What a comparison run holds (from ``runs.config``)."""

    run_id: str
    label: str | None
    customs: tuple[CustomEncoder, ...]
    controls: tuple[str, ...]
    datasets: tuple[str, ...]
    models: tuple[str, ...]
    scorings: tuple[str, ...]
    tuning: str
    status: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.customs)


def run_info(source, run_id: str) -> RunInfo:
    """Read a run's configuration; ValueError if unknown or not a run with a custom encoder."""
    runs = queries.run_config(source, run_id)
    if runs.empty:
        known = queries.runs_of_origin(source, "local")["run_id"]
        raise ValueError(f"unknown run: got {run_id!r}; local runs: {', '.join(known) or 'none'}")
    row = runs.iloc[0]
    config = json.loads(row["config"]) if isinstance(row["config"], str) else {}
    customs = tuple(CustomEncoder.from_dict({"name": n, **spec})
                    for n, spec in (config.get("custom_encoders") or {}).items())
    if not customs:
        raise ValueError(f"run {run_id!r} has no custom encoder to place among the 32 (run one with "
                         f"--encoders OH,MT,module:Class)")
    resolved = config.get("resolved_datasets") or {}
    keys = tuple(dict.fromkeys(entry["key"] for entry in resolved.values())) or tuple(config.get("datasets", ()))
    names = {c.name for c in customs}
    return RunInfo(
        run_id=run_id, label=row["label"] if isinstance(row["label"], str) else None, customs=customs,
        controls=tuple(e for e in config.get("encoders", ()) if e not in names),
        datasets=keys, models=tuple(config.get("models", vocab.MODELS)),
        scorings=tuple(config.get("scorings", vocab.METRICS)), tuning=config.get("tuning", "no"),
        status=str(row["status"]))


def comparison_runs(source) -> pd.DataFrame:
    """Local runs that hold a custom encoder: ``run_id, label, status, encoders`` (newest first)."""
    runs = queries.runs_of_origin(source, "local", newest_first=True)
    rows = []
    for run in runs.itertuples(index=False):
        try:
            customs = (json.loads(run.config) or {}).get("custom_encoders") if isinstance(run.config, str) else None
        except ValueError:
            customs = None
        if customs:
            rows.append({"run_id": run.run_id, "label": run.label, "status": run.status,
                         "encoders": ", ".join(customs)})
    return pd.DataFrame(rows, columns=["run_id", "label", "status", "encoders"])


# -- controls ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ControlAgreement:
    """How the run's control encoders agree with the published cells.

    Attributes
    ----------
    cells : pandas.DataFrame
        :attr:`encbench.reproduction.Reproduction.cells` of the control encoders with a
        published counterpart (the experiment key, ``local, published, difference, within,
        note, local_runs``), by encoder, model, metric and dataset.
    by_encoder_model : pandas.DataFrame
        ``encoder, model, cells, within, share``.
    share : float or None
        Share of cells within the tolerance (None: no control cell has a published value).
    warning : str or None
        Set when ``share`` is below the threshold or unknown; it names how many of the cells
        off are published cells known not to be reproducible (their ``note``).
    """

    cells: pd.DataFrame
    by_encoder_model: pd.DataFrame
    share: float | None
    tolerance: float
    threshold: float
    warning: str | None

    @property
    def n_cells(self) -> int:
        return len(self.cells)

    def headline(self) -> str:
        if self.share is None:
            return "controls: no control cell has a published value to check against"
        return (f"controls: {self.cells['within'].sum()} of {self.n_cells} cells "
                f"({self.share:.1%}) within {self.tolerance:g} of the published value")


def control_agreement(local: pd.DataFrame, published: pd.DataFrame, controls, *,
                      tolerance: float = AGREEMENT_TOLERANCE,
                      threshold: float = AGREEMENT_WARN) -> ControlAgreement:
    """Local control scores next to the published ones (``scores`` rows of both), by
    :func:`encbench.reproduction.compare_to_published`."""
    controls = list(controls)
    pairs = compare_to_published(local[local["encoder"].isin(controls)],
                                 published[published["encoder"].isin(controls)], tolerance=tolerance)
    cells = sort_experiments(pairs.cells, by=["encoder", "model", "scoring", "dataset"])
    by = pairs.by(["encoder", "model"])
    share = pairs.share
    warning = None
    if share is None:
        warning = ("no control cell could be checked (no control encoder, or the datasets are not "
                   "published ones): nothing shows that the local protocol reproduces the study here")
    elif share < threshold:
        worst = by.sort_values("share").head(3)
        worst_text = ", ".join(f"{r.encoder}/{r.model} {r.share:.0%}" for r in worst.itertuples())
        warning = (f"only {share:.1%} of the control cells are within {tolerance:g} of the published "
                   f"value (threshold {threshold:.0%}; lowest: {worst_text}): the local protocol may "
                   f"not reproduce the study on these datasets, so the new encoder's ranks may be "
                   f"biased. See docs/protocol.md, 'Differences from the published study'.")
        if pairs.known_text():
            warning += f" {pairs.known_text()}."
    return ControlAgreement(cells, by, share, tolerance, threshold, warning)


# -- placement ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Placement:
    """A new encoder's place among the 32.

    Attributes
    ----------
    info : RunInfo
    agreement : ControlAgreement
    scores : pandas.DataFrame
        The merged table ranked: ``dataset, model, tuning, scoring, encoder, cv_score, origin``
        (published rows for the 32, the run's rows for the custom encoders).
    ranks : pandas.DataFrame
        ``encoder, model, tuning, scoring, strategy, rank, last_rank, tied, n_encoders,
        n_datasets, best``: the custom encoder's dense rank (1 = best), the number of ranks
        (tiers), how many encoders share its rank, and the rank-1 encoders, per (model, metric)
        and pooled (model and scoring ``'pooled'``).
    wilcoxon : pandas.DataFrame
        ``encoder, model, tuning, scoring, best_published, n, wins, ties, losses,
        median_difference, statistic, pvalue``: the custom encoder vs the best published encoder
        (R-M over the same datasets), paired over datasets (pooled: over (dataset, model, metric)).
    unpublished : tuple of str
        Run datasets without published results (left out of the ranking).
    strategies : tuple of str
    """

    info: RunInfo
    agreement: ControlAgreement
    scores: pd.DataFrame
    ranks: pd.DataFrame
    wilcoxon: pd.DataFrame
    unpublished: tuple[str, ...]
    strategies: tuple[str, ...]
    params: dict = field(default_factory=dict)

    def combination(self, model: str, scoring: str) -> pd.DataFrame:
        """``dataset, encoder, cv_score`` of one (model, metric), or pooled (``'pooled'``)."""
        return _combination(self.scores, model, scoring)

    def provenance_filters(self) -> dict:
        """The run and each custom encoder's import path, package version and parameters."""
        out = {"run": self.info.run_id, "tuning": self.info.tuning}
        for c in self.info.customs:
            p = c.provenance()
            out[f"{c.name}.import"] = p["import"]
            out[f"{c.name}.version"] = (f"{p['package']} {p['version']}".strip() or "unknown")
            out[f"{c.name}.params"] = p["params"]
        return out

    def provenance(self, view: str = "compare"):
        return Provenance(view=view, filters=self.provenance_filters(),
                          origins=("published", "local"), run_ids=("published-matteucci2023", self.info.run_id))

    def rank_table(self, encoder: str | None = None) -> pd.DataFrame:
        """Wide: one row per (model, scoring) (pooled last), one column per strategy, values as
        :func:`rank_text` writes them (``"3 of 33"``, ``"1 of 1 tier, shared by 33"``)."""
        ranks = self.ranks if encoder is None else self.ranks[self.ranks["encoder"] == encoder]
        if ranks.empty:
            return pd.DataFrame()
        shown = ranks.assign(value=[rank_text(r.rank, r.last_rank, r.tied, r.n_encoders)
                                    for r in ranks.itertuples()])
        wide = shown.pivot_table(index=["encoder", "model", "scoring"], columns="strategy",
                                 values="value", aggfunc="first")
        wide = wide[[s for s in self.strategies if s in wide.columns]].reset_index()
        order = {m: i for i, m in enumerate((*vocab.MODELS, POOLED))}
        sorder = {s: i for i, s in enumerate((*vocab.METRICS, POOLED))}
        wide = wide.sort_values(["encoder", "model", "scoring"],
                                key=lambda c: c.map(order) if c.name == "model" else
                                (c.map(sorder) if c.name == "scoring" else c))
        wide.columns.name = None
        return wide.reset_index(drop=True)

    def summary_lines(self) -> list[str]:
        lines = []
        for c in self.info.customs:
            pooled = self.ranks[(self.ranks["encoder"] == c.name) & (self.ranks["model"] == POOLED)]
            if pooled.empty:
                lines.append(f"{c.name}: no published dataset to rank it on")
                continue
            text = ", ".join(f"{r.strategy} {rank_text(r.rank, r.last_rank, r.tied, r.n_encoders)}"
                             for r in pooled.itertuples())
            n = int(pooled["n_datasets"].iloc[0])
            lines.append(f"{c.name} pooled over {len(self.info.models)} model(s) x "
                         f"{len(self.info.scorings)} metric(s) ({n} voters), rank among "
                         f"{int(pooled['n_encoders'].iloc[0])} encoders: {text}")
            w = self.wilcoxon[(self.wilcoxon["encoder"] == c.name) & (self.wilcoxon["model"] == POOLED)]
            if len(w):
                r = w.iloc[0]
                lines.append(f"  vs best published ({r['best_published']}, R-M): {r['wins']} wins, "
                             f"{r['ties']} ties, {r['losses']} losses, median difference "
                             f"{r['median_difference']:+.4f}, Wilcoxon p = {r['pvalue']:.3g}")
        return lines


#: the factors a placement pools over (a run has one tuning strategy)
_POOLED_FACTORS = tuple(f for f in FACTORS if f != "tuning")


def _voter(scores: pd.DataFrame) -> pd.Series:
    """Each row's voter when pooled: its dataset and its value of every pooled factor."""
    voter = scores["dataset"]
    for factor in _POOLED_FACTORS:
        voter = voter + "|" + scores[factor]
    return voter


def _combination(scores: pd.DataFrame, model: str, scoring: str) -> pd.DataFrame:
    if model == POOLED:
        frame = scores.assign(dataset=_voter(scores))
    else:
        frame = scores[(scores["model"] == model) & (scores["scoring"] == scoring)]
    return frame[["dataset", "encoder", "cv_score"]].reset_index(drop=True)


def _with_pooled(scores: pd.DataFrame) -> pd.DataFrame:
    pooled = scores.assign(dataset=_voter(scores), **dict.fromkeys(_POOLED_FACTORS, POOLED))
    return pd.concat([scores, pooled], ignore_index=True)


def place(source, run_id: str, *, strategies=None, tolerance: float = AGREEMENT_TOLERANCE,
          threshold: float = AGREEMENT_WARN, **params) -> Placement:
    """Rank a comparison run's custom encoders among the published 32.

    Parameters
    ----------
    source
        A :class:`encbench.store.Reader` (or anything with ``query``).
    run_id : str
        A run made with a custom encoder (``encbench run --encoders OH,MT,module:Class``).
    strategies : sequence of str, optional
        Aggregation strategies (default: every one, :data:`encbench.stats.STRATEGIES`).
    **params
        Strategy parameters (``alpha``, ``theta``, ...).
    """
    info = run_info(source, run_id)
    strategies = tuple(strategies or STRATEGIES)
    local = queries.load_scores(source, run_ids=[run_id])
    local = local[local["split"] == "cv"] if "split" in local.columns else local
    published = queries.load_scores(source, origins=["published"], datasets=list(info.datasets),
                                    models=list(info.models), tunings=[info.tuning],
                                    scorings=list(info.scorings))
    agreement = control_agreement(local, published, info.controls, tolerance=tolerance, threshold=threshold)
    new = local[local["encoder"].isin(info.names)]
    have_published = set(published["dataset"])
    unpublished = tuple(sorted(set(new["dataset"]) - have_published))
    columns = ["dataset", *FACTORS, "encoder", "cv_score", "origin"]
    merged = pd.concat([published[columns], new[new["dataset"].isin(have_published)][columns]],
                       ignore_index=True)
    if new.empty or merged["encoder"].isin(info.names).sum() == 0:
        empty_ranks = pd.DataFrame(columns=["encoder", *FACTORS, "strategy", "rank", "last_rank", "tied",
                                            "n_encoders", "n_datasets", "best"])
        return Placement(info, agreement, merged, empty_ranks, pd.DataFrame(), unpublished, strategies, params)
    # only the combinations (and datasets) where a custom encoder has a score
    combos = new[list(FACTORS)].drop_duplicates()
    merged = merged.merge(combos, on=list(FACTORS))
    both = _with_pooled(merged)
    table = consensus_table(both[[*FACTORS, "dataset", "encoder", "cv_score"]],
                            strategies=strategies, by=FACTORS, **params)
    ranks = _custom_ranks(table, both, info.names)
    wilcoxon = _wilcoxon(both, info.names)
    return Placement(info, agreement, merged, ranks, wilcoxon, unpublished, strategies, params)


def rank_text(rank: int, tiers: int, tied: int, n_encoders: int) -> str:
    """A consensus rank as a reader should read it, ties included.

    Strategies rank densely (ties share a rank, the next rank follows), so "1/1" would read
    as first place when every encoder shares one tier (e.g. R-Nem with no significant pair).

    Parameters
    ----------
    rank : int
        The encoder's dense rank (1 = best).
    tiers : int
        The last rank: the number of distinct ranks.
    tied : int
        How many encoders hold ``rank`` (the encoder included).
    n_encoders : int
        Encoders ranked.

    Examples
    --------
    >>> rank_text(3, 33, 1, 33)
    '3 of 33'
    >>> rank_text(1, 1, 33, 33)
    '1 of 1 tier, shared by 33'
    >>> rank_text(2, 5, 1, 33)
    '2 of 5 tiers'
    """
    rank, tiers, tied, n_encoders = int(rank), int(tiers), int(tied), int(n_encoders)
    if tiers == n_encoders and tied == 1:
        return f"{rank} of {n_encoders}"
    text = f"{rank} of {tiers} tier{'s' if tiers != 1 else ''}"
    return text + (f", shared by {tied}" if tied > 1 else "")


def _custom_ranks(table: pd.DataFrame, scores: pd.DataFrame, names) -> pd.DataFrame:
    keys = list(FACTORS) + ["strategy"]
    last = table.groupby(keys)["rank"].max().rename("last_rank")
    tied = table.groupby([*keys, "rank"])["encoder"].nunique().rename("tied")
    count = table.groupby(keys)["encoder"].nunique().rename("n_encoders")
    best = table[table["rank"] == 1].groupby(keys)["encoder"].agg(lambda s: ", ".join(s)).rename("best")
    voters = scores.groupby(list(FACTORS))["dataset"].nunique().rename("n_datasets")
    mine = table[table["encoder"].isin(names)].merge(last.reset_index(), on=keys).merge(
        count.reset_index(), on=keys).merge(best.reset_index(), on=keys).merge(
        voters.reset_index(), on=list(FACTORS)).merge(tied.reset_index(), on=[*keys, "rank"])
    return mine[["encoder", *FACTORS, "strategy", "rank", "last_rank", "tied", "n_encoders",
                 "n_datasets", "best"]].reset_index(drop=True)


def _wilcoxon(scores: pd.DataFrame, names) -> pd.DataFrame:
    """Each custom encoder vs the best published encoder (R-M over the same voters)."""
    from scipy.stats import wilcoxon

    rows = []
    for values, combo in scores.groupby(list(FACTORS), sort=False):
        published = combo[~combo["encoder"].isin(names)]
        if published.empty:
            continue
        ranking = consensus(published[["dataset", "encoder", "cv_score"]], "R-M")
        order = {e: i for i, e in enumerate(vocab.ENCODERS)}
        best = sorted(ranking[ranking == 1].index, key=lambda e: order.get(e, len(order)))[0]
        theirs = published[published["encoder"] == best].set_index("dataset")["cv_score"]
        for name in names:
            mine = combo[combo["encoder"] == name].set_index("dataset")["cv_score"]
            paired = pd.concat([mine.rename("new"), theirs.rename("best")], axis=1, join="inner")
            diff = (paired["new"] - paired["best"]).to_numpy()
            statistic = pvalue = np.nan
            if len(diff) and np.any(diff != 0):
                result = wilcoxon(diff, zero_method="wilcox", alternative="two-sided")
                statistic, pvalue = float(result.statistic), float(result.pvalue)
            rows.append({"encoder": name, **dict(zip(FACTORS, values)), "best_published": best,
                         "n": len(diff), "wins": int((diff > 0).sum()),
                         "ties": int((diff == 0).sum()), "losses": int((diff < 0).sum()),
                         "median_difference": float(np.median(diff)) if len(diff) else np.nan,
                         "statistic": statistic, "pvalue": pvalue})
    return pd.DataFrame(rows, columns=["encoder", *FACTORS, "best_published", "n", "wins", "ties",
                                       "losses", "median_difference", "statistic", "pvalue"])


def cd_diagram(placement: Placement, model: str, scoring: str, *, alpha: float = vocab.ALPHA.default,
               design: str = "all"):
    """(chart, NemenyiResult, design description) of the custom encoders against the 32."""
    from encbench import plots  # heavy: Altair, imported where a chart is drawn

    data = placement.combination(model, scoring)
    if data.empty:
        raise ValueError(f"no scores for model {model!r} and metric {scoring!r} in run "
                         f"{placement.info.run_id!r}")
    chosen = block_design(data, design=design)
    result = nemenyi(chosen.scores, alpha=alpha)
    pairs = [frozenset((r.better, r.worse)) for r in result.significant_pairs.itertuples()]
    label = "pooled over models and metrics" if model == POOLED else f"{model} / {placement.info.tuning} / {scoring}"
    chart = plots.cd_diagram(
        result.mean_ranks, result.critical_difference, pairs, highlight=placement.info.names,
        title=f"Critical difference: {', '.join(placement.info.names)} vs the 32 ({label})",
        subtitle=[f"Nemenyi, alpha = {alpha:g}, N = {result.n_datasets}, k = {result.n_encoders}",
                  chosen.description,
                  "new: " + ", ".join(f"{n} (mean rank {result.mean_ranks[n]:.2f} of {result.n_encoders})"
                                      for n in placement.info.names if n in result.mean_ranks.index)])
    return chart, result, chosen.description


# -- reports and exports -----------------------------------------------------------------------
def export_tables(placement: Placement) -> dict[str, pd.DataFrame]:
    """The tables a comparison exports: ranks (long), Wilcoxon tests, control cells, encoders."""
    encoders = pd.DataFrame([c.provenance() for c in placement.info.customs])
    return {"ranks": placement.ranks, "wilcoxon": placement.wilcoxon,
            "controls": placement.agreement.cells, "encoders": encoders}


def export_files(placement: Placement, *, alpha: float = vocab.ALPHA.default, formats=("csv", "latex", "provenance"),
                 chart_format: str = "svg") -> dict[str, bytes]:
    """File name -> bytes of every export, each carrying the provenance (run, import path,
    package version and parameters of each custom encoder): in the file, or for a CSV in the
    ``.provenance.json`` sidecar beside it."""
    provenance = placement.provenance()
    files = {}
    for item, frame in export_tables(placement).items():
        if frame is None or frame.empty:
            continue
        for fmt in formats:
            files[provenance.file_name(item, fmt)] = table_bytes(frame, fmt, provenance, item=item)
    if not placement.ranks.empty:
        chart, _, _ = cd_diagram(placement, POOLED, POOLED, alpha=alpha)
        files[provenance.file_name("cd-pooled", chart_format)] = chart_bytes(
            chart, chart_format, provenance.with_filters(combination=POOLED))
    return files


def print_report(placement: Placement, *, out=None, alpha: float = vocab.ALPHA.default) -> int:
    """The ``place`` command's report: controls first, then ranks and tests; exports to ``out``."""
    info = placement.info
    print(f"run {info.run_id}{f' ({info.label})' if info.label else ''}: {info.status}; "
          f"{len(info.datasets)} dataset(s), tuning {info.tuning}, models {', '.join(info.models)}, "
          f"metrics {', '.join(info.scorings)}")
    for c in info.customs:
        p = c.provenance()
        package = " ".join(filter(None, [p["package"], p["version"]])) or "package and version unknown"
        print(f"new encoder {c.name}: {p['import']} ({package}), params {p['params']}")
    agreement = placement.agreement
    print(f"\n{agreement.headline()} (controls: {', '.join(info.controls) or 'none'})")
    if len(agreement.by_encoder_model):
        print(agreement.by_encoder_model.to_string(index=False, float_format="{:.1%}".format))
    if agreement.warning:
        print(f"WARNING: {agreement.warning}")
    if placement.unpublished:
        print(f"\nleft out (no published results): {', '.join(placement.unpublished)}")
    if placement.ranks.empty:
        print("\nno score of the new encoder on a published dataset: nothing to rank")
        return 1
    print("\nrank of the new encoder under each strategy (1 = best; tied encoders share a tier):")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(placement.rank_table().to_string(index=False))
    print("\nagainst the best published encoder (R-M), Wilcoxon signed-rank over datasets:")
    w = placement.wilcoxon.copy()
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(w.drop(columns=["tuning"]).to_string(index=False, float_format="{:.4g}".format))
    print("\n" + "\n".join(placement.summary_lines()))
    if agreement.warning:
        print(f"\nWARNING (repeated): {agreement.warning}")
    if out:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in export_files(placement, alpha=alpha).items():
            (folder / name).write_bytes(data)
            print(f"wrote {folder / name}")
    return 0
