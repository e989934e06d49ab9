# `pip install ./python` (offline, Debian's scikit-build-core and pybind11, no build isolation)
# gives a working package: installed into a --target folder, imported from outside the
# repository, it loads and runs a model with Dawn found beside the extension. The library of an
# existing build is linked (ETWEBGPU_LIB_BUILD_DIR, default build/) so the test stays cheap.
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import REPO, case_dir

LIB_BUILD = pathlib.Path(os.environ.get("ETWEBGPU_LIB_BUILD_DIR", REPO / "build"))


def test_pip_install_gives_a_working_package(tmp_path):
    if not (LIB_BUILD / "libetwebgpu.a").exists():
        pytest.skip(f"{LIB_BUILD}/libetwebgpu.a missing: run scripts/build.sh {LIB_BUILD} first")
    model = case_dir("add_bcast") / "model.pte"
    target = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-index",
                        "--target", str(target), f"--config-settings=cmake.define.ETWEBGPU_LIB_BUILD_DIR={LIB_BUILD}",
                        str(REPO / "python")], capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    assert (target / "etwebgpu" / "libwebgpu_wrapper.so").exists()
    code = ("import etwebgpu, numpy as np, sys\n"
            f"m = etwebgpu.load({str(model)!r})\n"
            "outs = m.run([np.ones(i.shape, i.dtype) for i in m.inputs])\n"
            "print(etwebgpu.__file__, outs[0].dtype, outs[0].shape)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(target)
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(str(target / "etwebgpu")), r.stdout
