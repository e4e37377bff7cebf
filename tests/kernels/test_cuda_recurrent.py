"""CUDA fused LSTM and GRU cells against the CPU kernels."""

import numpy as np
import pytest
from cuda_checks import TOLERANCE, _compare, check_cuda

from cpsgrad.kernels import dispatch, to_device

RNG = np.random.default_rng(15)
BATCH, INPUT, HIDDEN = 3, 4, 5


def lstm_args():
    shapes = [(BATCH, INPUT), (BATCH, HIDDEN), (BATCH, HIDDEN), (4 * HIDDEN, INPUT),
              (4 * HIDDEN, HIDDEN), (4 * HIDDEN,)]
    return [RNG.standard_normal(s) * 0.7 for s in shapes]


@pytest.mark.parametrize(("dtype", "adjoints"), [(np.float64, "both"), (np.float32, "h only")])
def test_lstm_cell_matches_cpu(dtype, adjoints):
    host = [a.astype(dtype) for a in lstm_args()]
    device = [to_device(a) for a in host]
    cpu, gpu = dispatch("lstm_cell", *host), dispatch("lstm_cell", *device)
    assert gpu.device == "cuda" and gpu.forward.__module__ == "cpsgrad.kernels.cuda.recurrent"
    expected, cpu_saved = cpu.forward(*host)
    outputs, saved = gpu.forward(*device)
    rtol, atol = TOLERANCE[dtype]
    for name, result, wanted in zip(("h", "c"), outputs, expected, strict=True):
        _compare(f"lstm_cell {name}", result, wanted, dtype, rtol, atol)
    grad_h = RNG.standard_normal((BATCH, HIDDEN)).astype(dtype)
    grad_c = RNG.standard_normal((BATCH, HIDDEN)).astype(dtype) if adjoints == "both" else None
    results = gpu.backward((to_device(grad_h), None if grad_c is None else to_device(grad_c)), saved)
    wanted = cpu.backward((grad_h, grad_c), cpu_saved)
    for name, result, want in zip("x h c w_ih w_hh b".split(), results, wanted, strict=True):
        _compare(f"lstm_cell adjoint {name}", result, want, dtype, rtol, atol)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gru_cell_matches_cpu(dtype):
    shapes = [(BATCH, INPUT), (BATCH, HIDDEN), (3 * HIDDEN, INPUT), (3 * HIDDEN, HIDDEN),
              (3 * HIDDEN,), (3 * HIDDEN,)]
    check_cuda("gru_cell", [RNG.standard_normal(s) * 0.7 for s in shapes], dtype=dtype)


def test_cells_reject_bad_shapes():
    args = [to_device(np.zeros(s)) for s in ((1, 3), (1, 2), (1, 2), (8, 3), (8, 2), (7,))]
    with pytest.raises(ValueError, match=r"lstm_cell: expected .*\(7,\)"):
        dispatch("lstm_cell", *args).forward(*args)
