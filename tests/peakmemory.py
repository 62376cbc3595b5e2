"""Peak memory of code run in a fresh interpreter (imported by the memory tests)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Appended to the measured code: prints the process's own high-water resident set. It reads
#: VmHWM, which belongs to the process's address space and starts afresh at exec; the rusage
#: maximum (``ru_maxrss``) carries over the parent's resident set from the fork before exec,
#: so inside a large test process it reported that process's size instead.
PRINT_PEAK = ("\nimport re as _re, sys as _sys\n"
              "_hwm = _re.search(r'VmHWM:\\s*(\\d+) kB', open('/proc/self/status').read()).group(1)\n"
              "print('PEAK', _hwm, file=_sys.stderr)\n")


def peak_rss_mb(code: str, *args: str, timeout: float = 600) -> tuple[float, str, int]:
    """Run ``code`` in a fresh interpreter; return (its peak resident set in MB, its stderr,
    its exit status)."""
    done = subprocess.run([sys.executable, "-c", code + PRINT_PEAK, *args],
                          env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True,
                          timeout=timeout)
    found = re.search(r"PEAK (\d+)", done.stderr)
    assert found, done.stderr[-3000:]
    return int(found.group(1)) / 1024, done.stderr, done.returncode
