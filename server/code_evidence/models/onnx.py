"""onnxruntime sessions for the shipped models, made one way.

Both models run on the CPU by default with one intra-op thread per physical core (onnxruntime's
kernels gain nothing from a second thread on one core), and on CUDA where onnxruntime offers
it. onnxruntime is imported only when a session is made: commands that never run a model
(status, a lexical-only index) do not pay for it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def physical_cores() -> int:
    """Cores this process may run on, counting SMT siblings once: onnxruntime's matrix kernels
    gain nothing from a second thread on the same core and lose to the contention."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
    cores: set[tuple[str, str]] = set()
    for cpu in cpus:
        topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
        try:
            package = (topo / "physical_package_id").read_text().strip()
            core = (topo / "core_id").read_text().strip()
        except OSError:
            return max(1, len(cpus))
        cores.add((package, core))
    return max(1, len(cores))


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
