# The Python API over a small fixture: loading from a path or bytes, the io description, run and
# call, array-likes (the __array__ protocol CPU torch tensors use), outputs owning their memory,
# profiling, device info, and ExecuTorch's runtime API shape (etwebgpu.runtime).
import gc
import io
import sys
import types

import numpy as np
import pytest

import etwebgpu
from conftest import assert_close, case_dir


def check_golden(outs, expected, entry):
    assert len(outs) == len(expected)
    for k, (got, exp) in enumerate(zip(outs, expected)):
        assert_close(got, exp, entry["atol"], entry["rtol"], f"output {k}")


def test_load_from_path_str_pathlike_and_bytes_all_match_golden(add_bcast):
    path, inputs, expected, entry = add_bcast
    for source in (path, str(path), path.read_bytes(), bytearray(path.read_bytes())):
        check_golden(etwebgpu.load(source).run(inputs), expected, entry)


def test_inputs_and_outputs_describe_dtype_shape_and_dynamism(add_bcast):
    path, inputs, expected, _ = add_bcast
    m = etwebgpu.load(path)
    assert [(i.dtype, i.shape, i.dynamic) for i in m.inputs] == [(a.dtype, a.shape, False) for a in inputs]
    assert [(o.dtype, o.shape) for o in m.outputs] == [(e.dtype, e.shape) for e in expected]


def test_calling_the_model_is_run_with_positional_inputs(add_bcast):
    path, inputs, expected, entry = add_bcast
    m = etwebgpu.load(path)
    check_golden(m(*inputs), expected, entry)


class ArrayLike:
    """Not an ndarray; converts through __array__ as a CPU torch.Tensor does."""

    def __init__(self, a):
        self._a = a

    def __array__(self, dtype=None):
        return self._a if dtype is None else self._a.astype(dtype)


def test_array_likes_with___array___are_accepted_as_inputs(add_bcast):
    path, inputs, expected, entry = add_bcast
    check_golden(etwebgpu.load(path).run([ArrayLike(a) for a in inputs]), expected, entry)


def test_non_contiguous_and_big_endian_inputs_give_the_same_result(add_bcast):
    path, inputs, expected, entry = add_bcast
    strided = [np.asfortranarray(a) if a.ndim > 1 else a for a in inputs]
    big_endian = [a.astype(a.dtype.newbyteorder(">")) for a in inputs]
    m = etwebgpu.load(path)
    check_golden(m.run(strided), expected, entry)
    check_golden(m.run(tuple(big_endian)), expected, entry)


def test_outputs_stay_valid_after_the_model_is_deleted(add_bcast):
    path, inputs, expected, entry = add_bcast
    m = etwebgpu.load(path)
    outs = m.run(inputs)
    del m
    gc.collect()
    check_golden(outs, expected, entry)
    outs[0][...] = 0  # the arrays own writable memory
    assert not outs[0].any()


def test_profile_lists_the_dispatches_of_the_last_profiled_run(add_bcast):
    path, inputs, _, _ = add_bcast
    m = etwebgpu.load(path)
    with pytest.raises(etwebgpu.InvalidArgumentError, match="no profiled run"):
        m.profile()
    m.run(inputs, profile=True)
    p = m.profile()
    assert p.dispatches, "a profiled run records its dispatches"
    assert any(d["op"].startswith("aten.add") for d in p.dispatches), p.dispatches
    assert sum(p.by_op().values()) == sum(d["gpu_ns"] for d in p.dispatches)
    if p.has_gpu_times:
        assert all(d["gpu_ns"] >= 0 for d in p.dispatches)


def test_gpu_bytes_counts_the_models_device_memory(add_bcast):
    path, inputs, expected, _ = add_bcast
    m = etwebgpu.load(path)
    io_bytes = sum(a.nbytes for a in inputs) + sum(e.nbytes for e in expected)
    assert m.gpu_bytes >= io_bytes


def test_device_info_describes_the_adapter():
    info = etwebgpu.device_info()
    assert info["summary"] and info["description"]
    assert info["adapter_type"] in ("discrete", "integrated", "cpu", "unknown")
    assert info["max_buffer_size"] >= 1 << 20
    assert isinstance(info["pipeline_cache_dir"], str) and info["pipeline_cache_rejected"] >= 0


def test_runtime_api_of_executorch_runs_the_program(add_bcast):
    from etwebgpu.runtime import Runtime, Verification

    path, inputs, expected, entry = add_bcast
    assert Runtime.get() is Runtime.get()
    for source in (path, str(path), path.read_bytes(), io.BytesIO(path.read_bytes())):
        program = Runtime.get().load_program(source, verification=Verification.Minimal)
        check_golden(program.load_method("forward").execute(inputs), expected, entry)


def test_runtime_api_returns_torch_tensors_when_torch_is_imported(add_bcast, monkeypatch):
    from etwebgpu.runtime import Runtime

    path, inputs, expected, _ = add_bcast
    made = []
    fake_torch = types.ModuleType("torch")
    fake_torch.from_numpy = lambda a: made.append(a) or ("tensor", a)
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    outs = Runtime.get().load_program(path).load_method("forward").execute(inputs)
    assert [o[0] for o in outs] == ["tensor"] * len(expected)
    assert len(made) == len(expected) and made[0].shape == expected[0].shape


def test_runtime_load_method_of_a_missing_method_names_it(add_bcast):
    from etwebgpu.runtime import Runtime

    with pytest.raises(etwebgpu.Error, match="no_such_method"):
        Runtime.get().load_program(add_bcast[0]).load_method("no_such_method")


def test_closed_model_refuses_further_use(add_bcast):
    path, inputs, _, _ = add_bcast
    with etwebgpu.load(path) as m:
        m.run(inputs)
    with pytest.raises(etwebgpu.InvalidArgumentError, match="closed"):
        m.run(inputs)


def test_precision_fp16_and_auto_load_and_match_golden_at_fp16_tolerance_or_are_refused_without_shader_f16(add_bcast):
    path, inputs, expected, entry = add_bcast
    check_golden(etwebgpu.load(path, precision="fp32").run(inputs), expected, entry)
    fp16 = {"atol": 2e-2 * max(float(np.abs(e).max()) for e in expected), "rtol": 2e-2}
    if etwebgpu.device_info()["shader_f16"]:
        m = etwebgpu.load(path, precision="fp16")
        check_golden(m.run(inputs), expected, fp16)
        assert m.gpu_bytes < etwebgpu.load(path).gpu_bytes
        check_golden(etwebgpu.load(path, precision="auto").run(inputs), expected, fp16)
    else:
        with pytest.raises(etwebgpu.UnsupportedError, match="shader-f16"):
            etwebgpu.load(path, precision="fp16")
        check_golden(etwebgpu.load(path, precision="auto").run(inputs), expected, entry)
    with pytest.raises(etwebgpu.InvalidArgumentError, match="precision 'fp8'"):
        etwebgpu.load(path, precision="fp8")


def test_every_load_option_is_a_keyword_parsed_by_the_runtime(add_bcast):
    path, inputs, expected, entry = add_bcast
    names = etwebgpu.load_options()
    assert {"precision", "method", "fuse", "plan_memory", "poison_storage", "max_gpu_bytes", "force_route",
            "sdpa_occupancy_floor"} <= set(names)
    m = etwebgpu.load(path, fuse=False, plan_memory=False, poison_storage=True, max_gpu_bytes="1G",
                      sdpa_occupancy_floor=16, method="forward")
    check_golden(m.run(inputs), expected, entry)
    # Limits reach the loader: a budget below the model's needs refuses it, naming the option.
    with pytest.raises(etwebgpu.LimitError, match="max_gpu_bytes"):
        etwebgpu.load(path, max_gpu_bytes=64)
    with pytest.raises(etwebgpu.InvalidArgumentError, match="unknown load option 'fusion'"):
        etwebgpu.load(path, fusion=False)
    with pytest.raises(etwebgpu.InvalidArgumentError, match="plan_memory: 'maybe'"):
        etwebgpu.load(path, plan_memory="maybe")
    with pytest.raises(etwebgpu.InvalidArgumentError, match="max_gpu_bytes: '0'"):
        etwebgpu.load(path, max_gpu_bytes=0)
    with pytest.raises(TypeError, match="load option fuse"):
        etwebgpu.load(path, fuse=1.5)


def test_progress_reports_read_upload_and_compile_each_ending_done(add_bcast):
    path, inputs, expected, entry = add_bcast
    seen = []
    m = etwebgpu.load(path, progress=lambda stage, done, total: seen.append((stage, done, total)))
    check_golden(m.run(inputs), expected, entry)
    stages = [s for s, _, _ in seen]
    assert set(stages) == {"read", "upload", "compile"} and stages.index("read") < stages.index("compile")
    for stage in ("read", "upload", "compile"):
        mine = [(d, t) for s, d, t in seen if s == stage]
        assert all(a[0] <= b[0] for a, b in zip(mine, mine[1:])), (stage, mine)
        assert mine[-1][0] == mine[-1][1], (stage, mine)
    assert [t for s, _, t in seen if s == "read"][-1] == path.stat().st_size
    # From bytes there is nothing to read; an exception in the callback aborts the load.
    seen.clear()
    etwebgpu.load(path.read_bytes(), progress=lambda *a: seen.append(a))
    assert "read" not in [a[0] for a in seen] and seen

    def boom(stage, done, total):
        raise KeyboardInterrupt("stop loading")

    with pytest.raises(KeyboardInterrupt, match="stop loading"):
        etwebgpu.load(path, progress=boom)
    with pytest.raises(TypeError, match="progress must be callable"):
        etwebgpu.load(path, progress=3)


def test_force_route_reaches_the_kernels(add_bcast):
    # binary "general" is valid for any add and gives the golden; an unknown route is refused by
    # the op builder, naming the route and the value.
    path, inputs, expected, entry = add_bcast
    check_golden(etwebgpu.load(path, force_route={"binary": "general"}).run(inputs), expected, entry)
    with pytest.raises(etwebgpu.InvalidArgumentError, match='force_route binary must be "vec4" or "general", got "bogus"'):
        etwebgpu.load(path, force_route={"binary": "bogus"})


def test_dynamic_inputs_report_their_bound_and_run_at_smaller_sizes():
    d = case_dir("dynamic_mlp_seq")
    m = etwebgpu.load(d / "model.pte")
    bound = m.inputs[0].shape
    assert m.inputs[0].dynamic and m.outputs[0].dynamic
    for seq in (1, 5, bound[1]):
        x = np.ones((bound[0], seq, bound[2]), np.float32)
        assert m.run([x])[0].shape == (bound[0], seq, m.outputs[0].shape[2])
    with pytest.raises(etwebgpu.InvalidArgumentError, match="outside the exported bound"):
        m.run([np.ones((bound[0], bound[1] + 1, bound[2]), np.float32)])
