"""Moved to :mod:`encbench.views.runs` (the Runs page's view of run progress).

This old name is an alias of that module for one release, so ``import`` and ``monkeypatch``
reach the same objects.
"""
import sys

import encbench.views.runs as _moved

sys.modules[__name__] = _moved
