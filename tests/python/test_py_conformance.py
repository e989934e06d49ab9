# Every public conformance case through the Python API (load, run, stateful steps), compared
# with the manifest's tolerances. Unsupported cases skip visibly, naming what is missing, as the
# C++ conformance test does.
import pytest

import etwebgpu
from conftest import assert_close, case_dir, load_npys, manifest_cases

CASES = sorted(manifest_cases())


@pytest.mark.skipif(not CASES, reason="no conformance fixtures (set ETWEBGPU_CONFORMANCE_DIR)")
@pytest.mark.parametrize("name", CASES)
def test_conformance_case_matches_golden(name):
    d = case_dir(name)
    entry = manifest_cases()[name]
    try:
        model = etwebgpu.load(d / "model.pte")
    except etwebgpu.UnsupportedError as e:
        pytest.skip(f"UNSUPPORTED: {e}")
    assert [i.dtype.name for i in model.inputs] == [i["dtype"] for i in entry["inputs"]]
    for info, want in zip(model.inputs, entry["inputs"]):
        if not info.dynamic:
            assert list(info.shape) == want["shape"]
    steps = [entry] + entry.get("steps", [])
    for s, step in enumerate(steps):
        outs = model.run(load_npys(d, step["inputs"]))
        expected = load_npys(d, step["outputs"])
        assert len(outs) == len(expected), f"step {s}: {len(outs)} outputs, expected {len(expected)}"
        for k, (got, exp) in enumerate(zip(outs, expected)):
            assert_close(got, exp, entry["atol"], entry["rtol"], f"{name} step {s} output {k}")
