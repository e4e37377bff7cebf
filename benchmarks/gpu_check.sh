#!/usr/bin/env bash
# One-shot check for a machine with a real GPU (the lent H200: no network, Python 3.12 with
# numba, numba-cuda, torch, pytest and hypothesis, but no libcst). Run from the repository root:
#   bash benchmarks/gpu_check.sh
# Installs the project offline (a carried libcst wheel from wheels/ if present), runs the CUDA
# tests on the real device, then times conv2d, matmul and the fused cells against PyTorch CUDA.
set -euo pipefail
cd "$(dirname "$0")/.."

if ls wheels/libcst-*.whl >/dev/null 2>&1; then
    python -m pip install --no-index --no-deps wheels/libcst-*.whl
fi
python -m pip install --no-deps --no-build-isolation -e .

export CPSGRAD_REAL_GPU=1 NUMBA_ENABLE_CUDASIM=0
python -c "import cpsgrad.kernels as k; print('cuda:', k.cuda_available())"
python -m pytest tests/kernels/test_cuda_*.py tests/test_device_programs.py -q
# CUDA kernels against PyTorch CUDA, forward + backward; ratio torch/kernel (above 1: kernel faster).
python - <<'PY'
import time

import numpy as np
import torch
from cpsgrad.kernels import dispatch, ops, to_device
from numba import cuda

REPEATS = 20
RNG = np.random.default_rng(0)


def _time(function):
    function()
    cuda.synchronize()
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(REPEATS):
        function()
    cuda.synchronize()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / REPEATS


def _kernel_step(op, arrays, params):
    device = [to_device(a) for a in arrays]
    kernel = dispatch(op, *device)

    def step():
        output, saved = kernel.forward(*device, **params)
        outputs = output if isinstance(output, tuple) else (output,)
        kernel.backward(outputs if len(outputs) > 1 else outputs[0], saved)

    return step


def _torch_step(function, arrays):
    tensors = [torch.tensor(a, device="cuda", requires_grad=True) for a in arrays]

    def step():
        output = function(*tensors)
        outputs = output if isinstance(output, tuple) else (output,)
        torch.autograd.backward(outputs, [torch.ones_like(o) for o in outputs])

    return step


def _cases():
    f32 = np.float32
    x, w = RNG.standard_normal((64, 10, 12, 12)).astype(f32), RNG.standard_normal((20, 10, 5, 5)).astype(f32)
    a, b = RNG.standard_normal((512, 512)).astype(f32), RNG.standard_normal((512, 512)).astype(f32)
    batch, hidden = 64, 150
    xs, h, c = (RNG.standard_normal((batch, hidden)).astype(f32) for _ in range(3))
    w4, w3 = (RNG.standard_normal((k * hidden, hidden)).astype(f32) for k in (4, 3))
    b4, b3 = RNG.standard_normal(4 * hidden).astype(f32), RNG.standard_normal(3 * hidden).astype(f32)
    return [
        ("conv2d 10->20 5x5, 64x12x12", "conv2d", [x, w], {}, lambda x, w: torch.nn.functional.conv2d(x, w)),
        ("matmul 512x512", "matmul", [a, b], {}, torch.matmul),
        ("lstm_cell batch 64 hidden 150", "lstm_cell", [xs, h, c, w4, w4, b4], {},
         lambda x, h, c, wi, wh, b: torch._VF.lstm_cell(x, (h, c), wi, wh, b, None)),
        ("gru_cell batch 64 hidden 150", "gru_cell", [xs, h, w3, w3, b3, b3], {},
         lambda x, h, wi, wh, bi, bh: torch._VF.gru_cell(x, h, wi, wh, bi, bh)),
    ]


def _whole_program():
    """A whole differentiated program on DeviceArrays (cpsgrad.grad) against torch autograd."""
    import cpsgrad

    def loss(x, w1, b1, w2, b2):
        h = np.tanh(x @ w1 + b1)
        y = h @ w2 + b2
        return np.sum(y * y)

    shapes = [(256, 512), (512, 512), (512,), (512, 10), (10,)]
    host = [RNG.standard_normal(s).astype(np.float32) * 0.05 for s in shapes]
    device = [cpsgrad.to_device(a) for a in host]
    gradient = cpsgrad.grad(loss, argnums=(1, 2, 3, 4))
    tensors = [torch.tensor(a, device="cuda", requires_grad=i > 0) for i, a in enumerate(host)]

    def torch_step():
        x, w1, b1, w2, b2 = tensors
        y = torch.tanh(x @ w1 + b1) @ w2 + b2
        torch.autograd.grad((y * y).sum(), tensors[1:])

    ours = _time(lambda: gradient(*device))
    theirs = _time(torch_step)
    print(f"{'grad of a 2-layer MLP, batch 256':32s}  cpsgrad {ours * 1e6:9.1f} us  torch {theirs * 1e6:9.1f} us  ratio {theirs / ours:5.2f}x")


def main():
    _whole_program()
    devices = {name: set(devs) for name, devs, _ in ops()}
    for label, op, arrays, params, reference in _cases():
        if "cuda" not in devices[op]:
            print(f"{label:32s}  no CUDA kernel for {op}")
            continue
        ours = _time(_kernel_step(op, arrays, params))
        theirs = _time(_torch_step(reference, arrays))
        print(f"{label:32s}  kernel {ours * 1e6:9.1f} us  torch {theirs * 1e6:9.1f} us  ratio {theirs / ours:5.2f}x")


main()
PY
