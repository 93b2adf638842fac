"""What the audits share: the half-noise variants of the mechanisms."""

from sklearn_dppca.privacy import _histograms
from sklearn_dppca.privacy._discrete import _DiscreteGaussianScale


def halve_histogram_noise_in(monkeypatch):
    """Half the noise sd in both histogram releases, nothing else changed.

    The discrete mechanisms are calibrated by ``_additive_scale`` (the additive
    release's discrete Gaussian scale) and ``laplace_rate`` (the sparse release's
    discrete Laplace rate, which also sets its threshold); these are the patched
    spots: the scale's sd halved, the rate doubled.
    """
    calibrated = _histograms._additive_scale
    rate = _histograms.laplace_rate

    def half_scale(eps, delta, mu):
        return _DiscreteGaussianScale.at_least(calibrated(eps, delta, mu).sigma / 2)

    def double_rate(eps):
        s, t = rate(eps)
        return 2 * s, t

    monkeypatch.setattr(_histograms, "_additive_scale", half_scale)
    monkeypatch.setattr(_histograms, "laplace_rate", double_rate)
