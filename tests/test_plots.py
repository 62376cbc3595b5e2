"""Chart builders: valid Vega-Lite that renders offline, missing cells visible, correct summaries."""
from __future__ import annotations

import json

import altair as alt
import numpy as np
import pandas as pd
import pytest
import vl_convert

from encbench import plots

ENCODERS = ["A", "B", "C", "D"]


def _render_svg(chart) -> str:
    return vl_convert.vegalite_to_svg(chart.to_dict())


def _layers(spec: dict) -> list[dict]:
    found = [spec]
    for layer in spec.get("layer", []):
        found += _layers(layer)
    return found


@pytest.fixture()
def long_scores():
    rng = np.random.default_rng(0)
    rows = [{"dataset": str(d), "encoder": e, "cv_score": float(rng.uniform(0.5, 1.0))}
            for d in range(6) for e in ENCODERS]
    frame = pd.DataFrame(rows)
    return frame[~((frame["dataset"] == "2") & (frame["encoder"] == "D"))]  # one missing cell


def test_consensus_bars_orders_by_rank_and_renders():
    ranking = pd.DataFrame({"encoder": ["B", "A", "C"], "rank": [2, 1, 3], "mean": [2.5, 1.2, 3.1],
                            "family": ["x", "y", "x"]})
    chart = plots.consensus_bars(ranking, value="mean", color="family", title="t")
    spec = chart.to_dict()
    y = spec["layer"][0]["encoding"]["y"]
    assert y["sort"] == ["A", "B", "C"]
    assert spec["autosize"]["type"] == "fit-x"
    assert "<svg" in _render_svg(chart)


def test_rank_matrix_draws_missing_ranks_as_grey_cells():
    ranks = pd.DataFrame({"encoder": ["A", "B", "A", "B"], "column": ["R-M", "R-M", "Q-M", "Q-M"],
                          "rank": [1, 2, 2, np.nan]})
    spec = plots.rank_matrix(ranks).to_dict()
    marks = [layer.get("mark") for layer in _layers(spec)]
    grey = [m for m in marks if isinstance(m, dict) and m.get("color") == plots.MISSING_COLOR]
    assert grey, "a grey background layer shows cells without a value"
    data = spec["datasets"][next(iter(spec["datasets"]))]
    assert {"encoder": "B", "column": "Q-M"}.items() <= next(
        r for r in data if r["encoder"] == "B" and r["column"] == "Q-M").items()
    assert "<svg" in vl_convert.vegalite_to_svg(spec)


def test_encoder_dataset_heatmap_fills_the_whole_grid(long_scores):
    chart = plots.encoder_dataset_heatmap(long_scores, value="cv_score", encoders=ENCODERS,
                                          datasets=[str(d) for d in range(6)] + ["99"])
    spec = chart.to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert len(rows) == len(ENCODERS) * 7                      # every (encoder, dataset) cell drawn
    missing = {(r["encoder"], r["dataset"]) for r in rows if r["missing"]}
    assert ("D", "2") in missing and all(("A", "99") == m or m[1] == "99" or m == ("D", "2")
                                         for m in missing)
    assert all(r["shown"] == "missing" for r in rows if r["missing"])
    assert "<svg" in _render_svg(chart)


def test_heatmap_rejects_duplicate_cells(long_scores):
    doubled = pd.concat([long_scores, long_scores.head(1)])
    with pytest.raises(ValueError, match="one row per"):
        plots.encoder_dataset_heatmap(doubled, value="cv_score")


def test_box_stats_match_numpy(long_scores):
    stats = plots.box_stats(long_scores, value="cv_score").set_index("encoder")
    for encoder, values in long_scores.groupby("encoder")["cv_score"]:
        q1, med, q3 = np.quantile(values, [0.25, 0.5, 0.75])
        row = stats.loc[encoder]
        assert row["n"] == len(values)
        assert row["median"] == pytest.approx(med) and row["q1"] == pytest.approx(q1)
        reach = 1.5 * (q3 - q1)
        inside = values[(values >= q1 - reach) & (values <= q3 + reach)]
        assert row["low"] == pytest.approx(inside.min()) and row["high"] == pytest.approx(inside.max())


def test_box_by_encoder_ignores_missing_values(long_scores):
    frame = long_scores.assign(cv_score=long_scores["cv_score"].where(long_scores["encoder"] != "C"))
    chart = plots.box_by_encoder(frame, value="cv_score")
    rows = next(iter(chart.to_dict()["datasets"].values()))
    assert {r["encoder"] for r in rows} == {"A", "B", "D"}     # C has no value, not a zero box


def test_similarity_heatmap_domain_and_missing():
    m = pd.DataFrame([[1.0, -0.5], [-0.5, np.nan]], index=["x", "y"], columns=["x", "y"])
    spec = plots.similarity_heatmap(m, measure="rho").to_dict()
    text = json.dumps(spec)
    assert "[-1.0, 1.0]" in text.replace("[-1, 1]", "[-1.0, 1.0]")
    rows = next(iter(spec["datasets"].values()))
    assert [r["label"] for r in rows if r["missing"]] == ["n/a"]
    assert "<svg" in vl_convert.vegalite_to_svg(spec)


def _rect_fills(spec: dict) -> list[str]:
    """The fill of every rect drawn (a Vega scenegraph walked)."""
    def walk(node):
        for item in node.get("items", []):
            if item.get("marktype") == "rect" and item.get("role") == "mark":
                yield from (i.get("fill") for i in item.get("items", []))
            yield from walk(item)
    return list(walk(vl_convert.vegalite_to_scenegraph(spec)["scenegraph"]))


@pytest.mark.parametrize("build", [
    lambda: plots.rank_matrix(pd.DataFrame({"encoder": ["A", "B", "A", "B"], "column": ["R-M", "R-M", "Q-M", "Q-M"],
                                            "rank": [1, 2, 2, np.nan]})),
    lambda: plots.similarity_heatmap(pd.DataFrame([[1.0, np.nan], [np.nan, 1.0]], index=["x", "y"],
                                                  columns=["x", "y"]), measure="rho"),
    lambda: plots.win_rate_heatmap(pd.DataFrame([[np.nan, 0.7], [0.3, np.nan]], index=["x", "y"],
                                                columns=["x", "y"])),
])
def test_heatmaps_draw_a_grey_cell_for_each_missing_value_and_one_coloured_cell_for_each_other(build):
    """Grey cells were drawn under every coloured one too (hidden, twice the cells to draw)."""
    spec = build().to_dict()
    rows = next(iter(spec["datasets"].values()))
    value = next(c for c in ("rank", "value") if c in rows[0])
    missing = sum(r[value] is None for r in rows)
    fills = _rect_fills(spec)
    assert fills.count(plots.MISSING_COLOR) == missing
    assert len(fills) == len(rows)


def test_cd_cliques_are_maximal_runs_without_significant_pairs():
    ranks = pd.Series({"a": 1.0, "b": 1.5, "c": 2.0, "d": 4.0, "e": 4.2})
    sig = {frozenset(p) for p in [("a", "d"), ("a", "e"), ("b", "d"), ("b", "e"), ("c", "e")]}
    assert plots.cd_cliques(ranks, sig) == [(0, 2), (2, 3), (3, 4)]
    assert plots.cd_cliques(ranks, set()) == [(0, 4)]
    everything = {frozenset((x, y)) for x in ranks.index for y in ranks.index if x != y}
    assert plots.cd_cliques(ranks, everything) == []


def test_cd_diagram_renders_with_cd_bar_and_labels():
    ranks = pd.Series({"OH": 1.4, "MT": 2.2, "Drop": 3.9, "Sum": 2.5})
    chart = plots.cd_diagram(ranks, 1.1, [("OH", "Drop")], title="cd")
    svg = _render_svg(chart)
    assert "CD = 1.10" in svg and "Drop (3.90)" in svg and "OH (1.40)" in svg
    with pytest.raises(ValueError):
        plots.cd_diagram(pd.Series(dtype=float), 1.0, [])


def test_rank_intervals_and_replicability_render():
    iv = pd.DataFrame({"encoder": ENCODERS, "rank": [1, 2, 3, 4], "low": [1, 1, 2, 3],
                       "high": [2, 3, 4, 4]})
    assert "<svg" in _render_svg(plots.rank_intervals_chart(iv))
    rep = pd.DataFrame([{"sample_size": s, "mean": 0.5, "low": 0.4, "high": 0.6, "measure": m,
                         "strategy": "R-M"} for s in (2, 4) for m in ("rho", "J")])
    assert "<svg" in _render_svg(plots.replicability_chart(rep, color="strategy"))


def test_counts_bars():
    counts = pd.DataFrame({"model": ["DT", "DT"], "tuning": ["no", "full"], "results": [3, 4]})
    assert isinstance(plots.counts_bars(counts, x="model", color="tuning"), alt.TopLevelMixin)


def test_builders_name_missing_columns():
    with pytest.raises(ValueError, match=r"\['rank'\]"):
        plots.consensus_bars(pd.DataFrame({"encoder": ["A"]}))
    with pytest.raises(ValueError, match="DataFrame"):
        plots.similarity_heatmap([[1.0]], measure="rho")


def _axes(spec: dict) -> list[dict]:
    return [channel["axis"] for layer in _layers(spec) for channel in layer.get("encoding", {}).values()
            if isinstance(channel, dict) and channel.get("axis")]


def test_cd_diagram_states_its_test_alpha_n_and_design_in_the_figure():
    ranks = pd.Series([1.5, 2.0, 3.5], index=["A", "B", "C"])
    lines = ["Nemenyi, alpha = 0.05, N = 21 datasets, k = 3 encoders, CD = 0.72", "Blocks: complete datasets only"]
    chart = plots.cd_diagram(ranks, 0.72, [("A", "C")], title="CD", subtitle=lines)
    spec = chart.to_dict()
    assert spec["title"]["text"] == "CD"
    assert [a["title"] for a in _axes(spec) if a.get("orient") == "bottom"] == [lines]   # under the diagram
    svg = _render_svg(chart)
    assert all(line.replace("=", "") in svg.replace("=", "") for line in lines)
    assert plots.cd_diagram(ranks, 0.72, [], title="CD").to_dict()["title"]["text"] == "CD"
    assert not [a for a in _axes(plots.cd_diagram(ranks, 0.72, []).to_dict()) if a.get("orient") == "bottom"]


def test_cd_diagram_labels_each_encoder_once_with_its_mean_rank():
    ranks = pd.Series({"OH": 1.4, "MT": 2.2, "Drop": 3.9, "Sum": 2.5, "CB": 3.0})
    spec = plots.cd_diagram(ranks, 1.1, []).to_dict()
    axes = {a["orient"]: a for a in _axes(spec) if a["orient"] in ("left", "right")}
    # the better half (rounded up) on the left, top to bottom best first; the rest on the right
    left = dict(zip(axes["left"]["values"], json.loads(axes["left"]["labelExpr"].split("[indexof")[0])))
    right = dict(zip(axes["right"]["values"], json.loads(axes["right"]["labelExpr"].split("[indexof")[0])))
    assert [left[v] for v in sorted(left)] == ["OH (1.40)", "MT (2.20)", "Sum (2.50)"]
    assert [right[v] for v in sorted(right)] == ["Drop (3.90)", "CB (3.00)"]


def test_cd_label_sits_on_its_own_row_above_the_tick_labels():
    """"CD = 10.19" overlapped the axis tick labels."""
    ranks = pd.Series(np.linspace(1, 30, 32), index=[f"E{i}" for i in range(32)])
    spec = plots.cd_diagram(ranks, 10.19, [], title="cd").to_dict()
    top = [a for a in _axes(spec) if a.get("orient") == "top"]
    rank_axis = next(a for a in top if a.get("ticks"))
    cd_axis = next(a for a in top if "CD = 10.19" in a.get("labelExpr", ""))
    # offsets are minus the pixel row inside the plot (0 = its top edge)
    rank_row, cd_row = -rank_axis["offset"], -cd_axis["offset"]
    tick_labels_top = rank_row - rank_axis["tickSize"] - rank_axis["labelPadding"] - rank_axis["labelFontSize"]
    assert cd_row + cd_axis["labelFontSize"] / 2 + 2 <= tick_labels_top
    assert cd_row - cd_axis["labelFontSize"] / 2 >= 0                      # drawn inside, not clipped
    assert rank_axis["values"] == list(range(1, 31)) and rank_axis["values"][0] == 1


def _contrast_on_white(hex_colour: str) -> float:
    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
    lum = 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)
    return 1.05 / (lum + 0.05)


def test_replicability_lines_use_a_palette_visible_on_white():
    """One replicability line was a near-invisible pale blue (Streamlit's #83c9ff)."""
    data = pd.DataFrame({"sample_size": [5, 10] * 2, "mean": [0.5, 0.6] * 2, "low": 0.4, "high": 0.7,
                         "measure": "rho", "strategy": ["R-M", "R-M", "Q-M", "Q-M"]})
    spec = plots.replicability_chart(data, color="strategy").to_dict()
    colour = spec["hconcat"][0]["layer"][0]["encoding"]["color"]
    assert colour["scale"]["range"] == list(plots.SERIES_COLORS)
    assert len(plots.SERIES_COLORS) >= 11                      # one per strategy
    assert min(_contrast_on_white(c) for c in plots.SERIES_COLORS) >= 3.0
    assert _contrast_on_white("#83c9ff") < 3.0                  # what the test guards against


def test_builders_pass_channel_objects_not_strings_or_dicts(long_scores, monkeypatch):
    """A bare "field:N" or a dict goes through Altair's from_dict, which hashes the whole schema on
    each call (about 10 ms: half of the Consensus charts' building time)."""
    calls = []
    original = alt.SchemaBase.from_dict.__func__

    def counted(cls, *args, **kwargs):
        calls.append(cls.__name__)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(alt.SchemaBase, "from_dict", classmethod(counted))
    ranking = pd.DataFrame({"encoder": ["B", "A", "C"], "rank": [2, 1, 3], "mean": [2.5, 1.2, 3.1],
                            "family": ["x", "y", "x"]})
    ranks = pd.DataFrame({"encoder": ["A", "B", "A", "B"], "column": ["R-M", "R-M", "Q-M", "Q-M"],
                          "rank": [1, 2, 2, np.nan]})
    matrix = pd.DataFrame([[1.0, 0.5], [0.5, np.nan]], index=["x", "y"], columns=["x", "y"])
    iv = pd.DataFrame({"encoder": ENCODERS, "rank": [1, 2, 3, 4], "low": [1, 1, 2, 3], "high": [2, 3, 4, 4]})
    rep = pd.DataFrame([{"sample_size": s, "mean": 0.5, "low": 0.4, "high": 0.6, "measure": m,
                         "strategy": "R-M"} for s in (2, 4) for m in ("rho", "J")])
    counts = pd.DataFrame({"model": ["DT", "DT"], "tuning": ["no", "full"], "results": [3, 4]})
    charts = [
        plots.consensus_bars(ranking, value="mean", color="family"),
        plots.rank_matrix(ranks),
        plots.similarity_heatmap(matrix, measure="rho"),
        plots.box_by_encoder(long_scores.assign(family="f"), value="cv_score", color="family"),
        plots.encoder_dataset_heatmap(long_scores, value="cv_score"),
        plots.counts_bars(counts, x="model", color="tuning"),
        plots.rank_intervals_chart(iv),
        plots.replicability_chart(rep, color="strategy"),
        plots.cd_diagram(pd.Series({"A": 1.5, "B": 2.0, "C": 3.2, "D": 3.3}), 1.0, [("A", "D")]),
    ]
    assert calls == []
    for chart in charts:
        chart.to_dict()                                  # still valid Vega-Lite


# Backgrounds the charts are drawn on: exports and the light theme (white), Streamlit's dark
# theme (1.67: #171614 around the chart, #0e1117 in earlier releases).
BACKGROUNDS = ("#ffffff", "#171614", "#0e1117")
_COLOUR_NAMES = {"black": "#000000", "white": "#ffffff"}


def _contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two #rrggbb colours (a naive reference implementation)."""
    def luminance(hex_colour: str) -> float:
        def channel(c: float) -> float:
            return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
        r, g, b = (int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5))
        return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _all_charts(long_scores):
    ranking = pd.DataFrame({"encoder": ["B", "A", "C"], "rank": [2, 1, 3], "mean": [2.5, 1.2, 3.1],
                            "family": ["x", "y", "x"]})
    ranks = pd.DataFrame({"encoder": ["A", "B", "A", "B"], "column": ["R-M", "R-M", "Q-M", "Q-M"],
                          "rank": [1, 2, 2, np.nan]})
    matrix = pd.DataFrame([[1.0, 0.5], [0.5, np.nan]], index=["x", "y"], columns=["x", "y"])
    iv = pd.DataFrame({"encoder": ENCODERS, "rank": [1, 2, 3, 4], "low": [1, 1, 2, 3], "high": [2, 3, 4, 4]})
    rep = pd.DataFrame([{"sample_size": s, "mean": 0.5, "low": 0.4, "high": 0.6, "measure": m,
                         "strategy": "R-M"} for s in (2, 4) for m in ("rho", "J")])
    counts = pd.DataFrame({"model": ["DT", "DT"], "tuning": ["no", "full"], "results": [3, 4]})
    return {
        "consensus_bars": plots.consensus_bars(ranking, value="mean", color="family"),
        "rank_matrix": plots.rank_matrix(ranks),
        "similarity_heatmap": plots.similarity_heatmap(matrix, measure="rho"),
        "box_by_encoder": plots.box_by_encoder(long_scores.assign(family="f"), value="cv_score", color="family"),
        "encoder_dataset_heatmap": plots.encoder_dataset_heatmap(long_scores, value="cv_score"),
        "counts_bars": plots.counts_bars(counts, x="model", color="tuning"),
        "rank_intervals_chart": plots.rank_intervals_chart(iv),
        "replicability_chart": plots.replicability_chart(rep, color="strategy"),
        "cd_diagram": plots.cd_diagram(pd.Series({"A": 1.5, "B": 2.0, "C": 3.2, "D": 3.3}), 1.0, [("A", "D")],
                                       title="cd", subtitle=["Nemenyi", "blocks"], highlight=["C"]),
        "posterior_simplex": plots.posterior_simplex(_simplex_samples(), encoder_a="A", encoder_b="B",
                                                     probabilities=[0.2, 0.7, 0.1], rope=0.01, title="bayes",
                                                     caption=["assumptions"]),
        "cd_control": plots.cd_diagram(pd.Series({"A": 1.5, "B": 2.0, "C": 3.2, "D": 3.3}), 1.0, [],
                                       title="control", subtitle=["Bonferroni-Dunn"], control="B"),
        "elo_chart": plots.elo_chart(_elo_table(), reference="OH", title="elo", caption=["assumptions"]),
        "win_rate_heatmap": plots.win_rate_heatmap(_win_rates(), title="win rates"),
    }


def _views(spec: dict) -> list[dict]:
    found = [spec]
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for part in spec.get(key, []):
            found += _views(part)
    if "spec" in spec:
        found += _views(spec["spec"])
    return found


def _colour_keys(obj, path=""):
    """(path, value) of every colour-like property in a (nested) Vega-Lite dict."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key.lower().endswith("color") and isinstance(value, str):
                yield f"{path}.{key}", value
            yield from _colour_keys(value, f"{path}.{key}")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from _colour_keys(value, f"{path}[{i}]")


def test_every_chart_reads_on_the_light_and_the_dark_theme(long_scores):
    """The CD diagrams drew black and dark grey text on the dark theme's near-black.

    Text on the page background must be axis, legend or title text without a colour of its own
    (Streamlit colours it by the theme; a text mark is black unless coloured); the only text marks
    are cell labels, whose colour follows the cell (``_ink``). Lines and points drawn on the page
    have 3:1 contrast on every background (WCAG for graphics)."""
    for name, chart in _all_charts(long_scores).items():
        spec = chart.to_dict()
        assert "subtitle" not in json.dumps(spec), f"{name}: a subtitle is not themed by Streamlit"
        for view in _views(spec):
            for key in ("title",):
                if isinstance(view.get(key), dict):
                    assert not list(_colour_keys(view[key])), (name, view[key])
            encoding = view.get("encoding", {})
            for channel in encoding.values():
                if isinstance(channel, dict):
                    for part in ("axis", "legend"):
                        if isinstance(channel.get(part), dict):
                            fixed = [(k, v) for k, v in _colour_keys(channel[part])
                                     if "label" in k.lower() or "title" in k.lower()]
                            assert not fixed, f"{name}: {part} text with a fixed colour {fixed}"
            mark = view.get("mark")
            if mark is None:
                continue
            mark = mark if isinstance(mark, dict) else {"type": mark}
            if mark["type"] == "text":
                assert "condition" in encoding.get("color", {}), f"{name}: a text mark not coloured by its cell"
                continue
            if mark.get("opacity") == 0 or mark["type"] in ("rect", "bar"):
                continue                    # invisible carriers of an axis; cells and bars take data colours
            if name == "box_by_encoder" and mark["type"] == "tick":
                continue                    # the median: black on its box, not on the page
            for key in ("color", "fill", "stroke"):
                colour = mark.get(key)
                if isinstance(colour, str):
                    colour = _COLOUR_NAMES.get(colour, colour)
                    worst = min(_contrast(colour, bg) for bg in BACKGROUNDS)
                    assert worst >= 3.0, f"{name}: {mark['type']} {key} {colour} has {worst:.2f}:1"
        assert "config" not in spec or not list(_colour_keys(spec["config"])), name


def test_the_theme_check_catches_dark_text_and_lines():
    """The check above fails on what the diagrams drew before: black lines, black or grey text."""
    assert _contrast("#000000", "#171614") < 3.0 and _contrast("#555555", "#0e1117") < 3.0
    assert _contrast("#333333", "#171614") < 3.0
    assert min(_contrast(plots.LINE_GREY, bg) for bg in BACKGROUNDS) >= 3.0
    assert min(_contrast(plots.HIGHLIGHT, bg) for bg in BACKGROUNDS) >= 3.0
    assert _contrast("#000000", "#ffffff") == pytest.approx(21.0)


def test_cd_diagram_highlights_the_named_encoders():
    ranks = pd.Series({"A": 1.5, "B": 2.0, "New": 3.2, "D": 3.3})
    spec = plots.cd_diagram(ranks, 1.0, [], highlight=["New"]).to_dict()
    coloured = [v for v in _views(spec) if isinstance(v.get("mark"), dict)
                and v["mark"].get("color") == plots.HIGHLIGHT]
    rows = {r["encoder"] for v in coloured for r in spec["datasets"][v["data"]["name"]]}
    assert rows == {"New"} and len(coloured) == 2                      # its leader line and its dot
    right = next(a for a in _axes(spec) if a.get("orient") == "right")
    weight = right["labelFontWeight"]
    assert weight["value"] == "normal" and weight["condition"]["value"] == "bold"
    assert "New (3.20)" in _render_svg(plots.cd_diagram(ranks, 1.0, [], highlight=["New"]))
    plain = plots.cd_diagram(ranks, 1.0, []).to_dict()
    assert plots.HIGHLIGHT not in json.dumps(plain)


def _simplex_samples(n: int = 200) -> pd.DataFrame:
    from encbench.stats.bayesian import OUTCOMES

    rng = np.random.default_rng(2)
    draws = rng.dirichlet([2.0, 3.0, 1.0], size=n)
    frame = pd.DataFrame(draws, columns=["theta_a", "theta_rope", "theta_b"])
    frame["outcome"] = np.asarray(OUTCOMES, dtype=object)[draws.argmax(axis=1)]
    return frame


def test_posterior_simplex_projects_each_draw_and_labels_the_vertices():
    samples = _simplex_samples()
    chart = plots.posterior_simplex(samples, encoder_a="MT", encoder_b="OH", probabilities=[0.27, 0.7298, 0.0002],
                                    rope=0.01, title="Bayesian", caption=["assumes independent datasets"])
    spec = chart.to_dict()
    points = next(pd.DataFrame(v) for k, v in spec["datasets"].items() if len(v) == len(samples))
    # ternary projection: A better at (0, 0), B better at (1, 0), equivalent at (1/2, sqrt(3)/2)
    np.testing.assert_allclose(points["x"], samples["theta_b"] + samples["theta_rope"] / 2)
    np.testing.assert_allclose(points["y"], np.sqrt(3) / 2 * samples["theta_rope"])
    vertices = [(0.0, 0.0), (1.0, 0.0), (0.5, np.sqrt(3) / 2)]
    for _, row in samples.head(20).iterrows():          # the barycentric combination of the vertices
        x = row["theta_a"] * vertices[0][0] + row["theta_rope"] * vertices[2][0] + row["theta_b"] * vertices[1][0]
        assert x == pytest.approx(row["theta_b"] + row["theta_rope"] / 2)
    labels = json.dumps([a.get("labelExpr", "") for a in _axes(spec)])
    assert "MT better: P = 0.270" in labels and "OH better: P < 0.001" in labels
    assert "equivalent (|difference| <= 0.01): P = 0.730" in labels
    assert [a["title"] for a in _axes(spec) if a.get("orient") == "bottom"] == [["assumes independent datasets"]]
    svg = _render_svg(chart)
    assert "<svg" in svg and "MT better" in svg
    with pytest.raises(ValueError, match="three probabilities"):
        plots.posterior_simplex(samples, encoder_a="A", encoder_b="B", probabilities=[0.5, 0.5], rope=0.0)
    with pytest.raises(ValueError, match="theta_rope"):
        plots.posterior_simplex(samples.drop(columns="theta_rope"), encoder_a="A", encoder_b="B",
                                probabilities=[0.5, 0.0, 0.5], rope=0.0)


def test_outcome_colours_read_on_both_themes():
    for colour in plots.OUTCOME_COLORS:
        assert min(_contrast(colour, bg) for bg in BACKGROUNDS) >= 3.0, colour


def _elo_table() -> pd.DataFrame:
    return pd.DataFrame({"encoder": ["OH", "MT", "Drop"], "elo": [1000.0, 1080.0, 900.0],
                         "low": [1000.0, 1040.0, 850.0], "high": [1000.0, 1120.0, 950.0],
                         "win_rate": [0.5, 0.7, 0.3]})


def _win_rates() -> pd.DataFrame:
    names = ["MT", "OH", "Drop"]
    return pd.DataFrame([[np.nan, 0.7, 0.9], [0.3, np.nan, np.nan], [0.1, np.nan, np.nan]], index=names, columns=names)


def test_elo_chart_orders_by_rating_marks_the_reference_and_states_its_assumptions():
    chart = plots.elo_chart(_elo_table(), reference="OH", caption=["Bradley-Terry", "bootstrap"])
    spec = chart.to_dict()
    y_sorts = [layer["encoding"]["y"]["sort"] for layer in _layers(spec) if "y" in layer.get("encoding", {})]
    assert y_sorts and all(order == ["MT", "OH", "Drop"] for order in y_sorts)    # best Elo on top
    line = next(v for v in spec["datasets"].values() if v == [{"elo": 1000.0}])
    assert line                                                                    # the reference's 1000
    titles = [a["title"] for a in _axes(spec) if a.get("title")]
    assert ["Elo (OH = 1000)", "Bradley-Terry", "bootstrap"] in titles
    assert "<svg" in _render_svg(chart)
    with pytest.raises(ValueError, match="'high'"):
        plots.elo_chart(_elo_table().drop(columns="high"), reference="OH")


def test_win_rate_heatmap_draws_every_cell_with_missing_pairs_grey():
    chart = plots.win_rate_heatmap(_win_rates())
    spec = chart.to_dict()
    cells = next(pd.DataFrame(v) for v in spec["datasets"].values() if len(v) == 9)
    assert cells["value"].isna().sum() == 5                         # the diagonal and the pair that never met
    assert cells.loc[(cells["row"] == "MT") & (cells["column"] == "Drop"), "label"].item() == "0.90"
    colours = json.dumps(spec)
    assert plots.MISSING_COLOR in colours and '"domainMid": 0.5' in colours
    big = pd.DataFrame(np.full((25, 25), 0.5), index=[f"e{i}" for i in range(25)], columns=[f"e{i}" for i in range(25)])
    def marks(spec):
        return [m if isinstance(m, str) else m["type"] for m in (layer.get("mark") for layer in _layers(spec)) if m]

    assert "text" in marks(spec) and "text" not in marks(plots.win_rate_heatmap(big).to_dict())  # beyond 20: none
    assert "<svg" in _render_svg(chart)
    with pytest.raises(ValueError, match="DataFrame"):
        plots.win_rate_heatmap([[0.5]])


def test_cd_diagram_against_a_control_draws_its_interval_instead_of_the_groups():
    ranks = pd.Series({"A": 1.4, "B": 2.0, "OH": 2.6, "D": 3.9})
    spec = plots.cd_diagram(ranks, 1.0, [("A", "D")], control="OH").to_dict()
    bars = [pd.DataFrame(spec["datasets"][v["data"]["name"]]) for v in _views(spec)
            if isinstance(v.get("mark"), dict) and v["mark"].get("strokeWidth") == 4]
    assert len(bars) == 1                                          # no group bars, one control interval
    assert bars[0][["x", "x2"]].iloc[0].tolist() == pytest.approx([1.6, 3.6])   # 2.6 +- CD
    coloured = [v for v in _views(spec)
                if isinstance(v.get("mark"), dict) and v["mark"].get("color") == plots.HIGHLIGHT]
    names = {r.get("encoder") for v in coloured for r in spec["datasets"][v["data"]["name"]]}
    assert "OH" in names and not {"A", "B", "D"} & names             # the control is highlighted
    near_edge = plots.cd_diagram(pd.Series({"OH": 1.2, "B": 2.5}), 1.0, [], control="OH").to_dict()
    bar = next(pd.DataFrame(near_edge["datasets"][v["data"]["name"]]) for v in _views(near_edge)
               if isinstance(v.get("mark"), dict) and v["mark"].get("strokeWidth") == 4)
    assert bar["x"].iloc[0] == 1.0 and bar["x2"].iloc[0] == pytest.approx(2.2)   # cut at the axis
    assert "OH (1.20)" in _render_svg(plots.cd_diagram(pd.Series({"OH": 1.2, "B": 2.5}), 1.0, [], control="OH"))
    with pytest.raises(ValueError, match="control 'GLMM'"):
        plots.cd_diagram(ranks, 1.0, [], control="GLMM")


def test_the_statistics_charts_export_with_their_provenance():
    """The simplex, the Elo and win-rate charts and the diagram against a control go through the
    same exports as every chart: PNG with the provenance chunk, SVG with its metadata element."""
    import xml.etree.ElementTree as ET

    from encbench import export

    prov = export.Provenance(view="consensus", filters={"detail": "LogReg | no | AUC", "control": "OH"},
                             origins=("published",), snapshot="1-2-3")
    charts = [_all_charts_statistics()[name] for name in ("posterior_simplex", "elo_chart", "win_rate_heatmap",
                                                          "cd_control")]
    for chart in charts:
        png = export.chart_bytes(chart, "png", prov)
        meta = json.loads(export.read_png_text(png)[export.METADATA_KEY])
        assert meta["view"] == "consensus" and meta["filters"]["control"] == "OH"
        root = ET.fromstring(export.chart_bytes(chart, "svg", prov))
        assert json.loads(root.find("{http://www.w3.org/2000/svg}metadata").text)["snapshot"] == "1-2-3"


def _all_charts_statistics():
    return {
        "posterior_simplex": plots.posterior_simplex(_simplex_samples(), encoder_a="A", encoder_b="B",
                                                     probabilities=[0.2, 0.7, 0.1], rope=0.01, caption=["c"]),
        "elo_chart": plots.elo_chart(_elo_table(), reference="OH", caption=["c"]),
        "win_rate_heatmap": plots.win_rate_heatmap(_win_rates()),
        "cd_control": plots.cd_diagram(pd.Series({"A": 1.5, "B": 2.0, "C": 3.2}), 1.0, [], control="B",
                                       subtitle=["c"]),
    }


def test_replicability_legend_draws_full_colour_strokes_on_both_themes():
    """The legend's swatches took the bands' 25 % opacity, paler than the lines."""
    data = pd.DataFrame({"sample_size": [5, 10] * 2, "mean": [0.5, 0.6] * 2, "low": 0.4, "high": 0.7,
                         "measure": "rho", "strategy": ["R-M", "R-M", "Q-M", "Q-M"]})
    spec = plots.replicability_chart(data, color="strategy").to_dict()
    legends = [layer["encoding"]["color"]["legend"] for layer in spec["hconcat"][0]["layer"]]
    assert all(leg["symbolOpacity"] == 1 and leg["symbolType"] == "stroke" for leg in legends)
    vega = vl_convert.vegalite_to_vega(spec)
    assert len(vega["legends"]) == 1 and vega["legends"][0]["symbolOpacity"] == 1
    assert min(_contrast(c, bg) for c in plots.SERIES_COLORS for bg in BACKGROUNDS) >= 3.0


def _family_colors(spec: dict) -> dict[str, str]:
    for layer in _layers(spec):
        color = layer.get("encoding", {}).get("color", {})
        if color.get("field") == "family":
            return dict(zip(color["scale"]["domain"], color["scale"]["range"]))
    raise AssertionError("no family colour in the chart")


def test_a_family_has_one_colour_in_every_chart():
    """Families are coloured by their fixed place in the registry's order, not by the order of
    the families a chart happens to hold: "binning" is drawn in the same colour by bars holding
    three families and by boxes holding one, and the legend lists only the families present."""
    ranking = pd.DataFrame({"encoder": ["OH", "DMT_2", "SkTE"], "rank": [1, 2, 3],
                            "family": ["identifier", "binning", "beyond the study"]})
    bars = _family_colors(plots.consensus_bars(ranking, color="family").to_dict())
    scores = pd.DataFrame({"encoder": ["DMT_2"] * 3, "cv_score": [0.1, 0.2, 0.3], "family": ["binning"] * 3})
    boxes = _family_colors(plots.box_by_encoder(scores, value="cv_score", color="family").to_dict())
    assert list(bars) == ["identifier", "binning", "beyond the study"] and list(boxes) == ["binning"]
    assert bars["binning"] == boxes["binning"]
    assert len(set(bars.values())) == 3


def test_run_scores_chart_draws_each_settings_mean_and_fold_spread():
    """One panel per setting with its own score axis; each encoder's rule runs from mean - sd to
    mean + sd (hand-computed), best first, the encoders that cannot be told from the winner
    highlighted; a missing sd draws the point alone."""
    import numpy as np

    from encbench.plots import HIGHLIGHT, run_scores_chart

    data = pd.DataFrame(dict(setting=["LogReg / AUC"] * 3 + ["Ridge / R2"] * 3, encoder=["OH", "MT", "Drop"] * 2,
                             score=[.9, .89, .7, .5, .4, -.2], sd=[.01, .02, np.nan, .1, .1, .1], n_folds=5))
    spec = run_scores_chart(data, order=["OH", "MT", "Drop"], best=["OH", "MT"]).to_dict()
    rows = {(r["setting"], r["encoder"]): r for r in spec["datasets"][next(iter(spec["datasets"]))]}
    assert rows[("LogReg / AUC", "MT")]["low"] == pytest.approx(0.87)
    assert rows[("LogReg / AUC", "MT")]["high"] == pytest.approx(0.91)
    assert rows[("LogReg / AUC", "Drop")]["low"] == rows[("LogReg / AUC", "Drop")]["high"] == 0.7
    assert {r["group"] for k, r in rows.items() if k[1] != "Drop"} == {"best"}
    assert spec["resolve"]["scale"]["x"] == "independent" and spec["facet"]["field"] == "setting"
    layer = spec["spec"]["layer"][0]["encoding"]
    assert layer["y"]["sort"] == ["OH", "MT", "Drop"] and layer["color"]["scale"]["range"][0] == HIGHLIGHT


def test_a_jaccard_panel_runs_from_0_to_1_and_rho_s_below_0():
    """The replicability chart's J panel had rho's axis, from -0.2, for an index in [0, 1]: each
    measure now has its own range (rho's reaching lower where its band does)."""
    data = pd.DataFrame({"sample_size": [5, 10] * 2, "mean": [0.3, 0.5, 0.2, 0.4],
                         "low": [-0.45, 0.1, 0.0, 0.2], "high": [0.6, 0.8, 0.5, 0.6],
                         "measure": ["rho-replicability"] * 2 + ["J-replicability"] * 2})
    spec = plots.replicability_chart(data).to_dict()
    domains = {panel["title"]: panel["layer"][0]["encoding"]["y"]["scale"]["domain"] for panel in spec["hconcat"]}
    assert domains == {"rho-replicability": [-0.5, 1.0], "J-replicability": [0.0, 1.0]}
    assert "<svg" in _render_svg(plots.replicability_chart(data))


def test_a_narrow_heatmap_is_as_wide_as_its_title():
    """The rank heatmap of five datasets was 200 px wide under "fit-x" and its PNG cut the
    55-character title at both ends: the chart is now at least as wide as its title (7 px a
    character of Vega's 13 px bold is more than any of its glyphs' average)."""
    import re

    title = "Grey cells: no result for that encoder on that dataset"
    data = pd.DataFrame([{"encoder": e, "dataset": str(d), "rank": 1.0} for e in ENCODERS for d in range(5)])
    chart = plots.encoder_dataset_heatmap(data, value="rank", title=title)
    width = float(re.search(r'<svg[^>]*width="([\d.]+)"', _render_svg(chart)).group(1))
    assert width >= 7 * len(title)


def test_the_heatmap_names_its_datasets():
    """The encoder x dataset heatmap's axis showed dataset ids (31, 1461): with names given it shows
    them (the cells stay keyed by id), and an id without a name shows itself."""
    data = pd.DataFrame([{"encoder": e, "dataset": d, "rank": 1.0} for e in ENCODERS for d in ("31", "1461")])
    spec = plots.encoder_dataset_heatmap(data, value="rank", datasets=["31", "1461"],
                                         dataset_names={"31": "credit-g"}).to_dict()
    label = next(a["labelExpr"] for a in _axes(spec) if "labelExpr" in a)
    assert '"credit-g", "1461"' in label
    svg = _render_svg(plots.encoder_dataset_heatmap(data, value="rank", dataset_names={"31": "credit-g"}))
    assert ">credit-g<" in svg


def test_head_to_head_scatter_draws_one_point_per_voter_and_the_diagonal():
    points = pd.DataFrame({"name": ["credit-g", "adult"], "model": "LogReg", "tuning": "no", "scoring": "AUC",
                           "score_a": [0.7, 0.9], "score_b": [0.8, 0.85], "winner": ["MT", "OH"]})
    chart = plots.head_to_head_scatter(points, encoder_a="OH", encoder_b="MT", title="OH vs MT")
    spec = chart.to_dict()
    dots = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "point")
    assert dots["encoding"]["x"]["title"] == "OH score" and dots["encoding"]["color"]["scale"]["domain"] == [
        "OH", "MT", "tie"]
    assert "<svg" in _render_svg(chart)
    with pytest.raises(ValueError, match="winner"):
        plots.head_to_head_scatter(points.drop(columns="winner"), encoder_a="OH", encoder_b="MT")
