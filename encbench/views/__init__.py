"""The computations behind the app's pages: one module per view, pure functions (no streamlit, no SQL).

Pages load rows through :mod:`encbench.store.queries`, pass them to their view and draw the
result with :mod:`encbench.plots`. A view returns DataFrames or small frozen result objects
(:class:`~encbench.views.consensus.ConsensusView`, :class:`~encbench.views.sensitivity.SensitivityView`,
...). Keeping this layer pure lets the benchmarks time exactly what a page does and lets
notebooks reproduce any view.

========================================  ==========================================================
module                                    what it computes
========================================  ==========================================================
:mod:`encbench.views.labels`              names of combinations and rankings, encoder families
:mod:`encbench.views.origins`             which origins a view shows and the banner that says so
:mod:`encbench.views.overview`            Overview: counts, the headline consensus
:mod:`encbench.views.explorer`            Results explorer: ranked scores, heatmap cells, coverage,
                                          published vs local
:mod:`encbench.views.consensus`           Consensus rankings: per combination or pooled, Kemeny,
                                          agreement, critical-difference inputs
:mod:`encbench.views.consensus_analysis`  Consensus page: one entry point and its result
                                          (rankings, CD, control, intervals, pairwise, Bayes, Elo)
:mod:`encbench.views.rank_intervals`      Consensus rank intervals: when a bootstrap is heavy enough
                                          to leave the page, and the function its worker runs
:mod:`encbench.views.sensitivity`         Sensitivity: similarity as one factor varies
:mod:`encbench.views.replicability`       Replicability: chart rows, sample sizes
:mod:`encbench.views.runs`                Runs: each run's progress, status and ETA, what others see
:mod:`encbench.views.run_tasks`           Runs: the task types of each run, which runs a task lists
:mod:`encbench.views.run_result`          a run's result: its ranking beside the published consensus,
                                          cv vs time, agreement with the published cells
========================================  ==========================================================

Nothing is imported here: a page imports the view it draws (``from encbench.views import
consensus``), so the first page load pays only for what it shows.
"""
