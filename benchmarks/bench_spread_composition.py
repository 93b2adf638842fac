"""How the per-column spread searches of ``scale=True`` would fare composed as
Gaussian (mu-GDP) parts instead of beside the Gaussian block (issue 27, item 3).

An eps-DP mechanism is mu-GDP with ``mu = -2 Phi^-1(1 / (1 + e^eps))`` (Dong,
Roth & Su 2022, the tradeoff of eps-DP lies above that Gaussian one), so the
``p`` quantile searches could join the Gaussian block, where ``p`` parts of
``mu / sqrt(p)`` compose to ``mu`` (noise growing like ``sqrt(p)``, not ``p``).
This prints, for a grant ``(eps, 1e-5)`` with a Gaussian share ``B`` and the
searches' share ``S`` of it, each search's eps today (``eps S / p``) and in the
block (the eps-DP level of its ``mu``), with the ratio, and the Gaussian parts'
``mu`` before and after. Nothing is fitted: it is the accounting alone.

Run: ``python benchmarks/bench_spread_composition.py``.
"""

import math

from scipy.stats import norm

from sklearn_dppca.privacy._accounting import gdp_mu

DELTA = 1e-5


def pure_eps_of_mu(mu):
    """The eps at which an eps-DP mechanism is exactly mu-GDP by the conversion."""
    return math.log(norm.cdf(mu / 2) / norm.cdf(-mu / 2))


def main():
    print(f"{'eps':>4}{'B':>5}{'S':>5}{'p':>4}{'search eps now':>16}{'in block':>10}"
          f"{'ratio':>7}{'gaussian mu now':>17}{'in block':>10}")
    for eps in (1.0, 4.0):
        for gaussian, searches in ((0.5, 0.2), (0.3, 0.3)):
            block_mu = gdp_mu(eps * (gaussian + searches), DELTA)
            for p in (4, 13, 30):
                now = eps * searches / p
                in_block = pure_eps_of_mu(
                    block_mu * math.sqrt(searches / p / (gaussian + searches)))
                print(f"{eps:>4g}{gaussian:>5g}{searches:>5g}{p:>4}{now:>16.4f}"
                      f"{in_block:>10.4f}{in_block / now:>7.2f}"
                      f"{gdp_mu(eps * gaussian, DELTA):>17.3f}"
                      f"{block_mu * math.sqrt(gaussian / (gaussian + searches)):>10.3f}")


if __name__ == "__main__":
    main()
