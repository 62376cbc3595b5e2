"""Moved to :mod:`encbench.engine.queue_requests` (the typed requests of the run queue).

This old name is an alias of that module for one release, so ``import`` and ``monkeypatch``
reach the same objects.
"""
import sys

import encbench.engine.queue_requests as _moved

sys.modules[__name__] = _moved
