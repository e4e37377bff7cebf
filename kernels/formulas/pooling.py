"""Pooling windows over NCHW, shared by the CPU loops (a plane at a time) and the CUDA kernels
(a thread an output element): the scan of one window for max and average pooling.

``layout`` arguments are ``kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w``. Padding counts
as -inf for max and as zeros in the average (PyTorch's ``count_include_pad=True``); the first
maximum of a window wins, and NaN beats numbers.
"""


def max_window(x, image, channel, oy, ox, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w):
    """``(maximum, flat index row * width + col of its first occurrence)`` of one window."""
    height, width = x.shape[2], x.shape[3]
    best, where = x[image, channel, 0, 0], -1
    for i in range(kernel_h):
        row = oy * stride_h - pad_h + i
        for j in range(kernel_w):
            col = ox * stride_w - pad_w + j
            if 0 <= row < height and 0 <= col < width:
                value = x[image, channel, row, col]
                if where < 0 or value > best or (value != value and best == best):
                    best, where = value, row * width + col
    return best, where


def avg_window(x, image, channel, oy, ox, kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w):
    """The mean of one window, padding counted as zeros."""
    height, width = x.shape[2], x.shape[3]
    total = 0.0
    for i in range(kernel_h):
        row = oy * stride_h - pad_h + i
        for j in range(kernel_w):
            col = ox * stride_w - pad_w + j
            if 0 <= row < height and 0 <= col < width:
                total += x[image, channel, row, col]
    return total * (1.0 / (kernel_h * kernel_w))
