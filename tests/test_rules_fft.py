"""End to end: numpy.fft rules in whole functions (a convolution by rfft/irfft in a loop, through
a user function, an argument used twice, complex arguments) against central differences, and what
they refuse."""

from __future__ import annotations

import numpy as np
import pytest

import cpsgrad
from cpsgrad.testing import check_grad
from tests.test_complex import assert_gradients

RNG = np.random.default_rng(3)
SIGNAL = RNG.normal(size=16)
KERNEL = RNG.normal(size=16)


def circular_convolution(a, b):
    return np.fft.irfft(np.fft.rfft(a) * np.fft.rfft(b), len(a))


def smoothed(signal, kernel, steps):
    for _ in range(steps):
        signal = 0.5 * signal + 0.5 * circular_convolution(signal, kernel)
    return np.sum(signal * np.arange(len(signal))) + np.sum(np.abs(np.fft.fft(signal)) ** 2) / len(signal)


def used_twice(x):
    spectrum = np.fft.fft(x)
    return np.sum(np.real(spectrum * np.conj(spectrum))) + np.sum(np.real(np.fft.ifft(spectrum * x)))


def spectral_energy(z):
    shifted = np.fft.fftshift(np.fft.fft2(z, norm="ortho"))
    return np.sum(np.abs(shifted[1:, :3]) ** 2) + np.real(np.fft.ifftshift(shifted)[0, 1])


def test_a_convolution_in_a_loop():
    check_grad(smoothed, SIGNAL, KERNEL, 3, argnums=(0, 1))


def test_an_argument_used_twice():
    check_grad(used_twice, SIGNAL[:8])


def test_complex_arguments():
    z = RNG.normal(size=(4, 5)) + 1j * RNG.normal(size=(4, 5))
    assert_gradients(spectral_energy, (z,), (0,))
    assert cpsgrad.grad(spectral_energy)(z.astype(np.complex64)).dtype == np.complex64


def parseval(x):
    return np.sum(np.abs(np.fft.fft(x, norm="ortho")) ** 2)


def test_parseval_gives_twice_the_input():
    np.testing.assert_allclose(cpsgrad.grad(parseval)(SIGNAL), 2.0 * SIGNAL, rtol=1e-12)


def rfft_of_complex(z):
    return np.sum(np.abs(np.fft.rfft(z)))


def test_rfft_of_a_complex_value_fails_as_numpy_does():
    with pytest.raises(TypeError):
        cpsgrad.grad(rfft_of_complex)(SIGNAL + 0.5j)
