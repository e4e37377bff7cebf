"""Sizes below which a derivative rule should compute with numpy rather than call a kernel.

A numba call costs about 0.2 us and each kernel wrapper (flattening, allocating the output,
reshaping) about 1-2 us more, so on small arrays a numpy composition is faster than the fused
kernel (DESIGN.md section 5). ``MIN_SIZE[group]`` is the element count from which the CPU kernel
beat the numpy composition at every larger size measured; None means numpy was as fast or faster
at every size measured (up to 2**18 elements), so numpy should always be used; 0 means the
kernel won at every size. ``use_kernel(op, size, phase)`` applies the table; an op or phase not
listed in ``GROUPS`` has no threshold and always uses its kernel.

Measured with ``python benchmarks/kernels_bench.py --only thresholds`` (float64, 1-D arrays of
2**4..2**18 elements, every size doubling, minimum over 15 interleaved rounds of kernel and
numpy, numpy 2.4.6, numba 0.68.1, 2 shared cores; two runs; ``docs/kernels.md`` has the tables).
numpy / kernel ratios (above 1: the kernel is faster):

* backward, two-input fused: ``tanh`` ``sigmoid`` 1.1-1.3x at 4096, 1.4-1.5x at 8192, 1.6-2.2x
  above; ``relu`` 0.95-1.07x at 4096, 1.3x at 8192; ``sin`` (``g * cos(x)``) a tie from 4096
  (0.99-1.08x). Threshold 8192, where every one of them is at least even. ``cos square abs sqrt
  log1p leaky_relu clip hardtanh`` are placed here by analogy (same loop shape), not measured.
* backward that numpy does in one pass (``exp``: ``g * y``, 0.1-0.9x at every size) or with
  SIMD transcendental functions (``softplus``: about 1.0x up to 8192, 0.5-0.7x above): None.
  ``neg`` (``-g``) and ``log`` (``g / x``) are one pass too, by analogy.
* forward of ops that are one numpy ufunc (``exp`` ``sin`` ``tanh``: 0.2-0.9x below 8192 and
  0.6-1.0x above, never a clear win): None, as for ``neg abs log log1p sqrt square cos clip
  hardtanh`` by analogy.
* forward of ``relu`` (numpy ``maximum``; 0.8x at 4096, 1.0-1.3x at 8192, 1.2-2.4x above):
  8192; ``leaky_relu`` by analogy.
* ``softmax_cross_entropy`` forward + backward (fused): 1.4-6.2x at 1x2, 3.6-6.7x at 1x10 to
  64x10, 1.3-1.5x at 256x100: 0, the kernel always.

``sigmoid`` and ``softplus`` forwards are left out (their kernels are used): they won 1.1-1.3x
up to about 500-2000 elements and lost (0.6-0.9x) above 8192, which a minimum size cannot express.
"""

from __future__ import annotations

ELEMENTWISE_BACKWARD_MIN_SIZE: int | None = 8192
ONE_PASS_BACKWARD_MIN_SIZE: int | None = None
UFUNC_FORWARD_MIN_SIZE: int | None = None
RELU_FORWARD_MIN_SIZE: int | None = 8192
SOFTMAX_CROSS_ENTROPY_MIN_SIZE: int | None = 0

MIN_SIZE: dict[str, int | None] = {
    "elementwise_backward": ELEMENTWISE_BACKWARD_MIN_SIZE,
    "one_pass_backward": ONE_PASS_BACKWARD_MIN_SIZE,
    "ufunc_forward": UFUNC_FORWARD_MIN_SIZE,
    "relu_forward": RELU_FORWARD_MIN_SIZE,
    "softmax_cross_entropy": SOFTMAX_CROSS_ENTROPY_MIN_SIZE,
}

PHASES = ("forward", "backward")

GROUPS: dict[tuple[str, str], str] = {
    **{
        (op, "backward"): "elementwise_backward"
        for op in "tanh sigmoid relu sin cos square abs sqrt log1p leaky_relu clip hardtanh".split()
    },
    **{(op, "backward"): "one_pass_backward" for op in "exp softplus neg log".split()},
    **{
        (op, "forward"): "ufunc_forward"
        for op in "exp sin tanh neg abs log log1p sqrt square cos clip hardtanh".split()
    },
    **{(op, "forward"): "relu_forward" for op in ("relu", "leaky_relu")},
    **{(op, phase): "softmax_cross_entropy" for op in ("softmax_cross_entropy",) for phase in PHASES},
}
"""``(op, phase) -> group`` for every op with a threshold."""


def min_size(op: str, phase: str = "backward") -> int | None:
    """Elements from which ``op``'s kernel should be used in ``phase``: an int (0 = always), or
    None (numpy always). An op without a threshold gives 0."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    group = GROUPS.get((op, phase))
    return 0 if group is None else MIN_SIZE[group]


def use_kernel(op: str, size: int, phase: str = "backward") -> bool:
    """Whether a rule should call ``op``'s CPU kernel (True) or compute with numpy (False) for an
    array of ``size`` elements in ``phase`` (``"forward"`` or ``"backward"``)."""
    threshold = min_size(op, phase)
    return threshold is not None and size >= threshold


def summary() -> str:
    """One line: each group's minimum size (``numpy`` where numpy is always faster)."""
    return ", ".join(
        f"{group} {'numpy' if size is None else size}" for group, size in MIN_SIZE.items()
    )
