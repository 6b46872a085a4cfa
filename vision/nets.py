"""The reader's nets, run by ONNX Runtime's CPU provider.

Every model is a small ONNX file beside its JSON metadata in `models/`. It is loaded once per
process and thread count (`load`), and one session serves every reader and thread of the
process: `InferenceSession.run` may be called from several threads at once. A missing or
damaged model is a `ModelError` when the reader is made, never a quiet switch to another way
of reading.

Threads are a setting: the benchmarks pin one, and on a Raspberry Pi the camera loop may
give the nets all four cores. ONNX Runtime's worker threads spin while they wait for work by
default, which keeps an idle Pi's cores busy between frames; they are told not to.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import numpy as np

MODELS = Path(__file__).resolve().parent / "models"


class ModelError(RuntimeError):
    """A model file is missing, damaged or not the one the reader expects."""


class OnnxNet:
    """One model: its session, its input's name and its metadata."""

    def __init__(self, path: Path, session: Any, meta: dict[str, Any]) -> None:
        self.path = path
        self.session = session
        self.meta = meta
        self.input = session.get_inputs()[0].name

    def run(self, x: np.ndarray) -> np.ndarray:
        """The model's first output for the batch `x` (float32, C-contiguous)."""
        return self.session.run(None, {self.input: np.ascontiguousarray(x, np.float32)})[0]


_LOADED: dict[tuple[str, int, int, int], OnnxNet] = {}
_LOCK = threading.Lock()


def load(path: str | Path, trainer: str, threads: int = 1) -> OnnxNet:
    """The model at `path`, loaded once per process for `threads` intra-op threads.

    `trainer` names the script that makes it (models are trained by hand), so the error for
    a missing file says how to get it back.
    """
    model = Path(path)
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    try:
        stat = model.stat()
    except OSError as exc:
        raise ModelError(f"{model}: no such model (train it: python -m training.{trainer})"
                         ) from exc
    key = (str(model.resolve()), stat.st_mtime_ns, stat.st_size, threads)
    with _LOCK:
        net = _LOADED.get(key)
        if net is None:
            net = _LOADED[key] = OnnxNet(model, _session(model, threads), _meta(model))
    return net


def _meta(model: Path) -> dict[str, Any]:
    meta_path = model.with_suffix(".json")
    if not meta_path.is_file():
        return {}
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelError(f"{meta_path}: not readable JSON ({exc})") from exc
    if not isinstance(meta, dict):
        raise ModelError(f"{meta_path}: must hold a JSON object")
    return meta


def _session(model: Path, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    try:
        return ort.InferenceSession(str(model), sess_options=options,
                                    providers=["CPUExecutionProvider"])
    except Exception as exc:  # ORT raises its own exception types for a damaged graph
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(f"{model}: not a usable ONNX model ({first})") from exc


def softmax(z: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Row-wise softmax of logits `z` (float64 for the sums) at `temperature`."""
    z = np.asarray(z, np.float64).reshape(len(z), -1) / temperature
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)
