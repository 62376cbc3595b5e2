"""Build hook: the package's read-only resources travel inside the wheel.

The SQL migrations (``db/migrations``), the published results (``db/seed``) and the bundled
datasets (``data/bundled``) stay where they are in a checkout (and are read from there, see
``encbench/resources.py``); building the package copies them to ``encbench/_resources/`` so an
installed encbench finds them without the checkout. Everything else is in ``pyproject.toml``.
"""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# resource name -> directory in the checkout (the same table as encbench.resources.CHECKOUT_RESOURCES)
RESOURCES = {"migrations": "db/migrations", "seed": "db/seed", "bundled": "data/bundled"}


class build_py_with_resources(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's own directories
        target = Path(self.build_lib) / "encbench" / "_resources"
        for name, source in RESOURCES.items():
            shutil.rmtree(target / name, ignore_errors=True)
            shutil.copytree(ROOT / source, target / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"))


setup(cmdclass={"build_py": build_py_with_resources})
