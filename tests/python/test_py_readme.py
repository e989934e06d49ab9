# The README's "From Python" snippets, run as written (in a folder holding model.pte and
# llama.pte copied from conformance fixtures), so they cannot drift from the package.
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, case_dir


def python_snippets():
    readme = (REPO / "README.md").read_text()
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_readme_has_python_snippets():
    assert len(python_snippets()) == 2


@pytest.mark.parametrize("index", range(len(python_snippets())))
def test_readme_python_snippet_runs(index, tmp_path):
    shutil.copy(case_dir("add_bcast") / "model.pte", tmp_path / "model.pte")
    shutil.copy(case_dir("llama_kv_cache_decode_steps") / "model.pte", tmp_path / "llama.pte")
    code = "import etwebgpu\n" + python_snippets()[index]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip(), "the snippet prints its results"
