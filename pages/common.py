"""The pages' shared UI plumbing, by its old name: the helpers live in :mod:`pages.ui`, one module
per concern (navigation, store, widgets, filters, exports, text, session, jobs), and this module
re-exports them (and :class:`encbench.jobs.BackgroundJob`) for the pages written against it.
"""
from __future__ import annotations

from encbench.jobs import BackgroundJob
from pages.ui.navigation import guarded, PAGES, navigation, ensure_routed
from pages.ui.store import (
    db_path, get_reader, reader_or_stop, data_key, snapshot_label, levels, raw_scores, scores,
    local_overview, view_datasets, datasets_table, runs_table, summary,
)
from pages.ui.widgets import (
    warn_bad_number, multiselect, selectbox, warn_bad_parameters, parameter_inputs,
)
from pages.ui.filters import (
    FACTOR_LABELS, factor_filters, empty_selection, ORIGIN_HELP, origin_filter, SPLIT_HELP,
    split_filter, origin_banner, DEFAULT_TASK, TASK_HELP, task_filter, task_levels, task_options,
    task_default, no_results_text,
)
from pages.ui.exports import (
    table_exports, chart_exports, show_table, MISSING, dash_missing, show_chart, provenance,
)
from pages.ui.text import md_text, md_code
from pages.ui.session import READ_ONLY_ENV, session_owner, owns, read_only, read_only_notice
from pages.ui.jobs import session_job, cancel_other_jobs, forget_job

__all__ = [
    'FACTOR_LABELS',
    'MISSING',
    'ORIGIN_HELP',
    'PAGES',
    'READ_ONLY_ENV',
    'SPLIT_HELP',
    'cancel_other_jobs',
    'chart_exports',
    'dash_missing',
    'data_key',
    'datasets_table',
    'db_path',
    'empty_selection',
    'ensure_routed',
    'forget_job',
    'factor_filters',
    'get_reader',
    'guarded',
    'levels',
    'local_overview',
    'md_code',
    'md_text',
    'multiselect',
    'navigation',
    'origin_banner',
    'origin_filter',
    'owns',
    'parameter_inputs',
    'provenance',
    'raw_scores',
    'read_only',
    'read_only_notice',
    'reader_or_stop',
    'runs_table',
    'scores',
    'selectbox',
    'session_job',
    'session_owner',
    'show_chart',
    'show_table',
    'snapshot_label',
    'split_filter',
    'DEFAULT_TASK',
    'TASK_HELP',
    'task_filter',
    'task_levels',
    'task_options',
    'task_default',
    'no_results_text',
    'summary',
    'table_exports',
    'view_datasets',
    'warn_bad_number',
    'warn_bad_parameters',
    'BackgroundJob',
]

if __name__ == "__main__":  # this module opened as a page (/common): to app.py, which has no such page
    ensure_routed()
