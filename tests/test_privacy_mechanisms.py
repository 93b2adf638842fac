"""The additive mechanisms: noise laws, symmetric matrix noise, the R package's fixture."""

import math

import numpy as np
import pytest

from sklearn_dppca.privacy import (
    PrivacyLedger,
    gaussian_mechanism,
    gaussian_noise_scale,
    laplace_mechanism,
    symmetric_gaussian_noise,
    symmetric_matrix_gaussian,
)
from sklearn_dppca.privacy._mechanisms import _pack, _unpack


def noise_draws(mechanism, n_seeds=400, size=250):
    """Noise of ``mechanism(zeros, rng)`` pooled over many seeds."""
    return np.concatenate([
        mechanism(np.zeros(size), np.random.default_rng(seed))[0]
        for seed in range(n_seeds)
    ])


def assert_centred_with_sd(draws, expected_sd, rel=0.03):
    assert np.std(draws) == pytest.approx(expected_sd, rel=rel)
    # Four standard errors of the mean.
    assert abs(np.mean(draws)) < 4 * expected_sd / math.sqrt(draws.size)


def test_gaussian_noise_law():
    expected = gaussian_noise_scale(0.3, 0.8, 1e-6)
    draws = noise_draws(lambda v, rng: gaussian_mechanism(v, 0.3, 0.8, 1e-6, rng))
    assert_centred_with_sd(draws, expected)


def test_gaussian_classical_noise_law():
    expected = 0.3 * math.sqrt(2 * math.log(1.25 / 1e-6)) / 0.5
    draws = noise_draws(lambda v, rng: gaussian_mechanism(
        v, 0.3, 0.5, 1e-6, rng, noise="classical"))
    assert_centred_with_sd(draws, expected)


def test_laplace_noise_law():
    # Lap(b) has standard deviation sqrt(2) b, b = sensitivity / eps.
    draws = noise_draws(lambda v, rng: laplace_mechanism(v, 2.0, 0.5, rng))
    assert_centred_with_sd(draws, math.sqrt(2) * 4.0)
    # Mean absolute deviation of Lap(b) is b.
    assert np.mean(np.abs(draws)) == pytest.approx(4.0, rel=0.03)


def test_mechanisms_return_scalars_for_scalars_and_record():
    ledger = PrivacyLedger()
    rng = np.random.default_rng(0)
    noisy, scale = gaussian_mechanism(1.5, 1.0, 1.0, 1e-5, rng, ledger=ledger, step="g")
    assert isinstance(noisy, float)
    noisy, lap_scale = laplace_mechanism(1.5, 2.0, 0.5, rng, ledger=ledger, step="l")
    # sensitivity / eps, and the rounding's 1 step in eps 2**24
    assert isinstance(noisy, float) and lap_scale == pytest.approx(4.0, rel=1e-6)
    assert lap_scale >= 4.0
    gauss, lap = ledger.entries
    assert (gauss["step"], gauss["eps"], gauss["delta"], gauss["noise_scale"]) == (
        "g", 1.0, 1e-5, scale)
    assert (lap["sensitivity_norm"], lap["delta"], lap["noise_scale"]) == (
        "L1", 0.0, lap_scale)
    assert ledger.spent() == (1.5, 1e-5)


def test_symmetric_noise_law_and_symmetry():
    sigma, p = 1.7, 6
    draws = np.stack([symmetric_gaussian_noise(p, sigma, np.random.default_rng(seed))
                      for seed in range(3000)])
    assert np.array_equal(draws, np.swapaxes(draws, 1, 2))
    diagonal = draws[:, np.arange(p), np.arange(p)].ravel()
    rows, cols = np.tril_indices(p, k=-1)
    off_diagonal = draws[:, rows, cols].ravel()
    assert_centred_with_sd(diagonal, sigma)
    assert_centred_with_sd(off_diagonal, sigma / math.sqrt(2))


def test_symmetric_noise_is_gaussian_on_packed_vector():
    # The packed vector (diagonal, sqrt(2) x lower triangle) has the Frobenius norm.
    noise = symmetric_gaussian_noise(5, 1.0, np.random.default_rng(3))
    rows, cols = np.tril_indices(5, k=-1)
    packed = np.concatenate((np.diag(noise), math.sqrt(2) * noise[rows, cols]))
    assert np.linalg.norm(packed) == pytest.approx(np.linalg.norm(noise), rel=1e-14)


def test_symmetric_matrix_rejects_non_square():
    with pytest.raises(ValueError, match="square"):
        symmetric_matrix_gaussian(np.zeros((2, 3)), 1.0, 1.0, 1e-5,
                                  np.random.default_rng(0))


def test_seed_fixture_reproduced():
    # The example of Kim & Jung's R package dppca: its six standard normals, laid out
    # as our packed vector (the p diagonal draws, then the lower triangle row by
    # row, divided by sqrt(2)), at the classical sd, give its released matrix. The
    # R package adds floating-point normals; ours are exact integer draws on the
    # release's grid, so the layout and the sd are what carries over.
    upper = np.array([[0.333097801073, -0.004683739067, 0.009903706654],
                      [0.0, 0.312400318203, -0.037763917091],
                      [0.0, 0.0, 0.354501880724]])
    kendall = np.triu(upper) + np.triu(upper, 1).T
    draws = np.array([0.7877388475, 0.7690422410, 0.3322025790, -1.0083766083,
                      -0.1194526066, -0.2803953352])
    sigma = gaussian_noise_scale(4 / 50, 0.5, 1e-3, "classical")
    assert sigma == pytest.approx(0.6042367252, abs=1e-9)
    noisy = kendall + _unpack(sigma * draws, 3)
    np.testing.assert_allclose(_pack(_unpack(draws, 3)), draws, rtol=1e-15)
    assert np.array_equal(noisy, noisy.T)
    eigenvalues, eigenvectors = np.linalg.eigh(noisy)
    order = np.argsort(eigenvalues)[::-1]
    np.testing.assert_allclose(eigenvalues[order],
                               [1.2385247424, 0.6211650903, 0.2817034725], atol=1e-8)
    first = eigenvectors[:, order[0]]
    first = first * np.sign(first[0])
    np.testing.assert_allclose(first, [0.7012424468, -0.7027775965, 0.1198444017],
                               atol=1e-8)
    # the mechanism releases on that layout: the classical sd, a hair above
    ledger = PrivacyLedger()
    _, released_sd = symmetric_matrix_gaussian(kendall, 4 / 50, 0.5, 1e-3,
                                               np.random.default_rng(0),
                                               noise="classical", ledger=ledger)
    assert sigma < released_sd < sigma * 1.0005
    assert ledger.entries[0]["sensitivity_norm"] == "Frobenius"
    assert ledger.entries[0]["noise_scale"] == released_sd
