"""onnxruntime sessions for the shipped models, made one way.

Both models run on the CPU by default, with at most one thread per physical core (onnxruntime's
kernels gain nothing from a second thread on one core): the cross-encoder as intra-op threads,
the embedder as one intra-op thread per batch with several batches at once (``embedder.py``);
on CUDA where onnxruntime offers it. onnxruntime is imported only when a session is made:
commands that never run a model (status, a lexical-only index) do not pay for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import physical_cores

__all__ = ["physical_cores", "session"]


def session(model_path: Path, threads: int = 0) -> Any:
    """An ``InferenceSession`` for ``model_path``: all graph optimisations, ``threads``
    intra-op threads (0: physical cores), one inter-op thread, warnings silenced (unused
    initialisers are noise), CUDA first when available."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = threads or physical_cores()
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    providers = ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" in ort.get_available_providers():
        providers.insert(0, "CUDAExecutionProvider")
    return ort.InferenceSession(str(model_path), sess_options=opts, providers=providers)
