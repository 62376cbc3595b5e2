"""Moved to :mod:`encbench.views.run_result` (a run's result beside the published consensus).

This old name is an alias of that module for one release, so ``import`` and ``monkeypatch``
reach the same objects.
"""
import sys

import encbench.views.run_result as _moved

sys.modules[__name__] = _moved
