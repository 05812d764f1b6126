"""onnxruntime sessions for the shipped models, made one way.

Both models run on the CPU by default with one intra-op thread per run and up to one run per
physical core at once (a pair or one short text is too small a run for onnxruntime to split
across cores without its threads waiting on each other): the cross-encoder's pairs
(``crossencoder.py``), the embedder's texts (``embedder.py``); on CUDA where onnxruntime
offers it. onnxruntime is imported only when a session is made:
commands that never run a model (status, a lexical-only index) do not pay for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..config import physical_cores

__all__ = ["physical_cores", "session"]


def session(model_path: Path) -> Any:
    """An ``InferenceSession`` for ``model_path``: all graph optimisations, one intra-op and
    one inter-op thread (callers run several runs at once: ``run`` is thread-safe), warnings
    silenced (unused initialisers are noise), CUDA first when available."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    providers = ["CPUExecutionProvider"]
    if "CUDAExecutionProvider" in ort.get_available_providers():
        providers.insert(0, "CUDAExecutionProvider")
    return ort.InferenceSession(str(model_path), sess_options=opts, providers=providers)
