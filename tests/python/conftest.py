"""The module under test is the one in FIXPOINT_BUILD/python (default build/python)."""
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("FIXPOINT_BUILD", os.path.join(ROOT, "build"))
sys.path.insert(0, os.path.join(BUILD, "python"))
# Dask worker processes import it too.
os.environ["PYTHONPATH"] = os.pathsep.join([os.path.join(BUILD, "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p])
