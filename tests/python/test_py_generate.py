# Stateful programs and generation on the Llama KV-cache fixture (token [1, 1] and position [1]
# in, logits [1, V] out): reset_state() restores the cache, and greedy generate() (which starts a
# fresh sequence itself) yields exactly the tokens of a hand-written argmax loop over run().
import numpy as np
import pytest

import etwebgpu
from conftest import case_dir, load_npys, manifest_cases

CASE = "llama_kv_cache_decode_steps"


@pytest.fixture(scope="module")
def llama():
    d = case_dir(CASE)
    entry = manifest_cases()[CASE]
    return etwebgpu.load(d / "model.pte"), load_npys(d, entry["inputs"]), load_npys(d, entry["outputs"]), entry


def greedy_by_hand(model, prompt, n):
    logits = None
    for pos, tok in enumerate(prompt):
        (logits,) = model.run([np.array([[tok]], np.int64), np.array([pos], np.int64)])
    out = []
    for pos in range(len(prompt), len(prompt) + n):
        tok = int(np.argmax(logits.reshape(-1)))
        out.append(tok)
        (logits,) = model.run([np.array([[tok]], np.int64), np.array([pos], np.int64)])
    return out


def test_reset_state_makes_the_first_step_repeatable(llama):
    m, inputs, expected, entry = llama
    m.reset_state()
    first = m.run(inputs)[0]
    second = m.run(inputs)[0]  # same token again, cache now holds it: not the golden any more
    m.reset_state()
    again = m.run(inputs)[0]
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(again, expected[0], atol=entry["atol"], rtol=entry["rtol"])
    assert m._impl.num_state_buffers > 0
    assert second.shape == first.shape


def test_greedy_generate_yields_the_argmax_loop_tokens(llama):
    m, inputs, _, _ = llama
    prompt = [int(inputs[0].reshape(-1)[0]), 3, 17]
    m.reset_state()
    want = greedy_by_hand(m, prompt, 6)  # leaves the cache full of this sequence
    stream = m.generate(prompt, max_new_tokens=6)
    got = list(stream)
    assert got == want
    assert stream.result["stop_reason"] == "max_new_tokens" and stream.result["tokens"] == got


def test_sampling_with_a_seed_is_repeatable_and_stop_tokens_end_it(llama):
    m, inputs, _, _ = llama
    prompt = [int(inputs[0].reshape(-1)[0])]
    # No reset_state() between them: generate() starts each sequence afresh.
    runs = [list(m.generate(prompt, max_new_tokens=5, temperature=0.8, top_k=20, seed=7)) for _ in range(2)]
    assert runs[0] == runs[1] and len(runs[0]) == 5
    stop = runs[0][1]
    stream = m.generate(prompt, max_new_tokens=5, temperature=0.8, top_k=20, seed=7, stop_tokens=[stop])
    assert list(stream) == runs[0][: runs[0].index(stop) + 1] and stream.result["stop_reason"] == "stop_token"


def test_closing_the_stream_stops_generation_early(llama):
    m, inputs, _, _ = llama
    stream = m.generate([int(inputs[0].reshape(-1)[0])], max_new_tokens=50)
    first = next(stream)
    stream.close()
    assert isinstance(first, int)
    assert stream.result is not None and first == stream.result["tokens"][0]
    assert stream.result["stop_reason"] == "stopped" and len(stream.result["tokens"]) < 50
    m.reset_state()  # the model is free again
    m.run(inputs)


def test_generate_with_an_empty_prompt_is_an_invalid_argument(llama):
    m = llama[0]
    with pytest.raises(etwebgpu.InvalidArgumentError):
        list(m.generate([], max_new_tokens=2))
