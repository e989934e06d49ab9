"""Model: a loaded .pte method on the WebGPU device."""
import os
import queue
import threading
from typing import NamedTuple

import numpy as np

from . import _etwebgpu

class TensorInfo(NamedTuple):
    """An input or output of a method: NumPy dtype, shape (upper bounds when dynamic)."""

    dtype: np.dtype
    shape: tuple
    dynamic: bool


def _infos(raw):
    return [TensorInfo(np.dtype(io["dtype"]), tuple(io["shape"]), io["dynamic"]) for io in raw]


def load_options():
    """The load options load() accepts: {name: (values, help, repeatable)}; the same options as the
    CLI's flags and the JavaScript Model.load options, from the runtime's one table."""
    return dict(_etwebgpu.load_options())


def _option_items(options):
    items = []
    for name, value in options.items():
        if value is None:
            continue
        if name == "force_route":
            if not isinstance(value, dict):
                raise TypeError(f"force_route must be a dict of op -> route, got {type(value).__name__}")
            for k, v in value.items():
                if not isinstance(k, str) or not isinstance(v, str):
                    raise TypeError(f"force_route must map str to str, got {k!r}: {v!r}")
                items.append((name, f"{k}={v}"))
        elif isinstance(value, bool):
            items.append((name, "on" if value else "off"))
        elif isinstance(value, (int, str)) or hasattr(value, "__index__"):
            items.append((name, str(value) if isinstance(value, str) else str(int(value))))
        else:
            raise TypeError(f"load option {name} takes a str, int or bool, got {type(value).__name__}")
    return items


def load(source, precision=None, force_route=None, method=None, max_gpu_bytes=None, *, progress=None, **options):
    """Loads a .pte program (a path, or its bytes) and prepares ``method`` on the GPU.

    Every load option is a keyword (load_options() lists them), e.g.
    precision: "fp32" (default), "fp16" (half the memory; needs the adapter's shader-f16) or "auto";
    force_route: kernel routes to force, e.g. {"conv": "direct"} (see docs/OPS.md);
    max_gpu_bytes: refuse a model needing more device memory than this (int, or text like "8G");
    fuse / plan_memory / poison_storage: True or False.
    progress: called as progress(stage, done, total) while loading: "read" (bytes of the file),
    "upload" (bytes of constants), "compile" (kernels); an exception it raises aborts the load.
    """
    options.update(precision=precision, force_route=force_route, method=method, max_gpu_bytes=max_gpu_bytes)
    items = _option_items(options)
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be callable, got {type(progress).__name__}")
    if isinstance(source, (str, os.PathLike)):
        impl = _etwebgpu.load(os.fspath(source), items, progress)
    elif isinstance(source, (bytes, bytearray, memoryview)):
        impl = _etwebgpu.load_bytes(memoryview(source).cast("B"), items, progress)
    else:
        raise TypeError(f"load() takes a path or the file's bytes, got {type(source).__name__}")
    return Model(impl)


def _as_input(x, index):
    # np.asarray goes through __array__, so CPU torch tensors (and other array-likes) work.
    try:
        a = np.asarray(x)
    except Exception as e:
        raise TypeError(f"input {index}: cannot convert {type(x).__name__} to an array ({e})") from e
    if a.dtype == object:
        raise TypeError(f"input {index}: {type(x).__name__} is not a numeric array")
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder("="))
    return np.ascontiguousarray(a)


class Profile(NamedTuple):
    """GPU time of each dispatch of one profiled run (gpu_ns is 0 without timestamp queries)."""

    has_gpu_times: bool
    dispatches: list  # [{"op", "variant", "gpu_ns"}] in dispatch order

    def by_op(self):
        """Total GPU nanoseconds per operator name."""
        totals = {}
        for d in self.dispatches:
            totals[d["op"]] = totals.get(d["op"], 0) + d["gpu_ns"]
        return totals


class Model:
    """A loaded method. Safe to share between threads (runs of one model are serialised)."""

    def __init__(self, impl):
        self._impl = impl
        self.inputs = _infos(impl.inputs)
        self.outputs = _infos(impl.outputs)

    def run(self, inputs, profile=False):
        """Runs the method on a list of arrays; returns a list of NumPy arrays.

        profile=True also records per-dispatch GPU times, returned by profile().
        """
        if not isinstance(inputs, (list, tuple)):
            raise TypeError(f"run() takes a list of inputs, got {type(inputs).__name__}")
        return self._impl.run([_as_input(x, i) for i, x in enumerate(inputs)], bool(profile))

    def __call__(self, *inputs):
        return self.run(list(inputs))

    def profile(self):
        """The Profile of the last run(..., profile=True)."""
        p = self._impl.profile()
        return Profile(p["has_gpu_times"], p["dispatches"])

    @property
    def gpu_bytes(self):
        """Device memory this model holds."""
        return self._impl.gpu_bytes

    def reset_state(self):
        """Restores the program's mutable buffers (KV caches) to their initial contents."""
        self._impl.reset_state()

    def generate(self, prompt_tokens, max_new_tokens=64, temperature=0.0, top_k=0, top_p=1.0, seed=0,
                 stop_tokens=(), context_length=0):
        """Starts a fresh sequence (the model's state is reset), runs the prompt (token ids), then
        yields new tokens as they are decoded: greedy when temperature is 0, else sampled (top_k,
        top_p, seed). context_length 0: the model's KV cache length. The loop of `etwebgpu generate`."""
        opts = _etwebgpu.GenerateOptions()
        opts.max_new_tokens = int(max_new_tokens)
        opts.temperature = float(temperature)
        opts.top_k = int(top_k)
        opts.top_p = float(top_p)
        opts.seed = int(seed)
        opts.stop_tokens = [int(t) for t in stop_tokens]
        opts.context_length = int(context_length)
        return TokenStream(self._impl, [int(t) for t in np.asarray(prompt_tokens).reshape(-1)], opts)

    def close(self):
        """Frees the model's GPU memory now (otherwise when the object is collected)."""
        self._impl.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class TokenStream:
    """Iterator over generated tokens. The generation runs in a worker thread and is stopped
    when the iterator is closed or collected; ``result`` holds its summary once it ends."""

    _DONE = object()

    def __init__(self, impl, prompt, opts):
        self.result = None
        self._queue = queue.Queue()
        self._stop = threading.Event()
        self._finished = False
        self._thread = threading.Thread(target=self._work, args=(impl, prompt, opts), daemon=True)
        self._thread.start()

    def _work(self, impl, prompt, opts):
        def on_token(token):
            self._queue.put(token)
            return not self._stop.is_set()

        try:
            self._queue.put((self._DONE, impl.generate(prompt, opts, on_token)))
        except BaseException as e:  # handed to the consuming thread
            self._queue.put((self._DONE, e))

    def __iter__(self):
        return self

    def __next__(self):
        if self._finished:
            raise StopIteration
        item = self._queue.get()
        if isinstance(item, tuple) and item[0] is self._DONE:
            self._finished = True
            self._thread.join()
            if isinstance(item[1], BaseException):
                raise item[1]
            self.result = item[1]
            raise StopIteration
        return item

    def close(self):
        """Stops the generation after the token being decoded."""
        self._stop.set()
        while not self._finished:
            try:
                next(self)
            except StopIteration:
                pass

    def __del__(self):
        if not self._finished:
            self._stop.set()
