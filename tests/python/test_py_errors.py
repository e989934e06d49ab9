# Bad inputs raise Python exceptions carrying the C++ error kind and a message naming the
# problem; nothing crashes and the model stays usable afterwards.
import numpy as np
import pytest

import etwebgpu


def test_missing_file_is_an_io_error_naming_the_path(tmp_path):
    missing = tmp_path / "nope.pte"
    with pytest.raises(etwebgpu.IoError, match="nope.pte") as e:
        etwebgpu.load(missing)
    assert e.value.kind == "Io" and isinstance(e.value, etwebgpu.Error)


def test_garbage_bytes_are_a_format_error():
    with pytest.raises(etwebgpu.FormatError) as e:
        etwebgpu.load(b"definitely not an ExecuTorch program")
    assert e.value.kind == "Format"


def test_truncated_program_is_a_format_error(add_bcast):
    data = add_bcast[0].read_bytes()
    with pytest.raises(etwebgpu.FormatError):
        etwebgpu.load(data[: len(data) // 2])


def test_wrong_source_type_is_a_type_error():
    with pytest.raises(TypeError, match="path or the file's bytes"):
        etwebgpu.load(12345)


def test_bad_force_route_value_is_a_type_error(add_bcast):
    with pytest.raises(TypeError, match="force_route"):
        etwebgpu.load(add_bcast[0], force_route={"conv": 1})


def test_wrong_input_count_names_both_counts(add_bcast):
    path, inputs, _, _ = add_bcast
    m = etwebgpu.load(path)
    with pytest.raises(etwebgpu.InvalidArgumentError, match=f"expected {len(inputs)} inputs, got 1") as e:
        m.run(inputs[:1])
    assert e.value.kind == "InvalidArgument" and isinstance(e.value, ValueError)


def test_wrong_dtype_names_the_input_and_both_dtypes(add_bcast):
    path, inputs, _, _ = add_bcast
    m = etwebgpu.load(path)
    bad = [inputs[0].astype(np.float64)] + inputs[1:]
    with pytest.raises(etwebgpu.InvalidArgumentError, match="input 0 has dtype float64, the model expects float32"):
        m.run(bad)


def test_wrong_shape_names_the_input_and_the_expected_shape(add_bcast):
    path, inputs, _, _ = add_bcast
    m = etwebgpu.load(path)
    bad = [np.zeros(inputs[0].shape + (2,), np.float32)] + inputs[1:]
    with pytest.raises(etwebgpu.InvalidArgumentError, match="input 0 has shape"):
        m.run(bad)


def test_unsupported_numpy_dtype_is_refused_by_name(add_bcast):
    path, inputs, _, _ = add_bcast
    m = etwebgpu.load(path)
    with pytest.raises(etwebgpu.InvalidArgumentError, match="complex64"):
        m.run([inputs[0].astype(np.complex64)] + inputs[1:])


def test_object_inputs_and_non_list_inputs_are_type_errors(add_bcast):
    path, inputs, _, _ = add_bcast
    m = etwebgpu.load(path)
    with pytest.raises(TypeError, match="input 0"):
        m.run([object()] + inputs[1:])
    with pytest.raises(TypeError, match="list of inputs"):
        m.run(inputs[0])


def test_model_still_runs_after_errors(add_bcast):
    path, inputs, expected, _ = add_bcast
    m = etwebgpu.load(path)
    with pytest.raises(etwebgpu.InvalidArgumentError):
        m.run([])
    np.testing.assert_allclose(m.run(inputs)[0], expected[0], rtol=1e-3, atol=1e-4)
