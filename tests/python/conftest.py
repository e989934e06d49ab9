# Shared fixtures of the Python package tests (run by scripts/test.sh with
# PYTHONPATH=build-python). Conformance fixtures come from $ETWEBGPU_CONFORMANCE_DIR (default
# ../shared/conformance next to the repository); tests needing them skip visibly without them.
import json
import os
import pathlib

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
CONFORMANCE = pathlib.Path(os.environ.get("ETWEBGPU_CONFORMANCE_DIR", REPO.parent / "shared" / "conformance"))


def manifest_cases():
    path = CONFORMANCE / "manifest.json"
    if not path.exists():
        return {}
    return json.loads(path.read_text())["cases"]


def case_dir(name):
    d = CONFORMANCE / name
    if not (d / "model.pte").exists():
        pytest.skip(f"conformance fixture {d} is missing")
    return d


def load_npys(d, entries):
    return [np.load(d / e["file"]) for e in entries]


def assert_close(got, exp, atol, rtol, what):
    """The manifest's rule: an element fails iff |got - exp| > atol + rtol * |exp| (NaN fails);
    integer outputs must match exactly; dtype and shape must match."""
    assert got.dtype == exp.dtype, f"{what}: dtype {got.dtype}, expected {exp.dtype}"
    assert got.shape == exp.shape, f"{what}: shape {got.shape}, expected {exp.shape}"
    if np.issubdtype(exp.dtype, np.floating):
        g, e = got.astype(np.float64), exp.astype(np.float64)
        bad = ~(np.abs(g - e) <= atol + rtol * np.abs(e))
        assert not bad.any(), (f"{what}: {int(bad.sum())} of {bad.size} elements outside atol={atol} rtol={rtol}, "
                               f"max |diff| {np.nanmax(np.abs(g - e))}")
    else:
        np.testing.assert_array_equal(got, exp, err_msg=what)


@pytest.fixture(scope="session")
def add_bcast():
    """A small two-input fixture (float32 broadcasting add) with its inputs and golden output."""
    d = case_dir("add_bcast")
    entry = manifest_cases()["add_bcast"]
    return d / "model.pte", load_npys(d, entry["inputs"]), load_npys(d, entry["outputs"]), entry
