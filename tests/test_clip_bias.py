"""The clipping allowance (sklearn_dppca/_algorithms/_clip_bias.py): exact
agreement with the Gaussian integrals, its cap at the search's level, and what
it does to a fit's stated sds."""

import warnings

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import chi2
from sklearn.datasets import load_breast_cancer

from sklearn_dppca import DPPCA
from sklearn_dppca._algorithms import _clip_bias, _scree
from sklearn_dppca._algorithms._clip_bias import clip_allowance_share, total_allowance_share
from sklearn_dppca._bunch import Bunch
from sklearn_dppca.datasets import load_adult


def _kept_by_quadrature(c):
    """``E[min(Z^2, c)]`` for a standard normal ``Z``, by quadrature (the slow
    reference: no sample, no closed form)."""
    density = lambda z: np.exp(-z * z / 2) / np.sqrt(2 * np.pi)  # noqa: E731
    inside, _ = integrate.quad(lambda z: z * z * density(z), -np.sqrt(c), np.sqrt(c))
    outside, _ = integrate.quad(density, np.sqrt(c), np.inf)
    return inside + 2 * c * outside


@pytest.mark.parametrize("level", [0.8, 0.9, 0.97, 0.99, 0.999])
@pytest.mark.parametrize("variance", [1e-6, 1.0, 3e7])
def test_one_coordinate_matches_the_gaussian_integral(level, variance):
    # a Gaussian coordinate clipped at its own level quantile: the released
    # value is what it keeps; the allowance is what it lost, over that value
    bound = variance * chi2.ppf(level, 1)
    kept = variance * _kept_by_quadrature(chi2.ppf(level, 1))
    share = clip_allowance_share([kept], [bound], together=False)
    # (the sample's far tail is coarse: 2% at the 99.9% level)
    assert share[0] == pytest.approx(variance / kept - 1, rel=0.03)


def test_norm_clipping_matches_a_monte_carlo_of_the_model():
    # coordinates clipped together in norm at the 97% quantile of their sum,
    # against an independent Monte Carlo of the same model (of the loss alone,
    # which only the tail draws carry: the kept variance's own sampling error
    # would be a tenth of the small coordinates' loss)
    rng = np.random.default_rng(12)
    variances = np.array([9.0, 3.0, 1.0, 0.5, 0.2])
    squares = rng.standard_normal((1_000_000, 5)) ** 2
    total = squares @ variances
    bound = np.quantile(total, 0.97)
    lost = variances * (squares * np.maximum(1 - bound / total, 0)[:, None]).mean(axis=0)
    kept = variances - lost
    share = clip_allowance_share(kept, [bound], together=True)
    np.testing.assert_allclose(share, variances / kept - 1, rtol=0.1)
    # each coordinate alone against the same bound loses less: in the norm,
    # the sum of all of them meets it
    alone = clip_allowance_share(kept, np.full(5, bound), together=False)
    assert np.all(alone[1:] < share[1:])


def test_the_level_caps_the_share():
    # a value near its bound reads, for a Gaussian, as half its variance lost
    # (the value's own size: not estimable); the search's level caps it at what
    # a Gaussian loses at that quantile
    assert clip_allowance_share([0.95], [1.0], together=True)[0] == 1.0
    lost = 1 - _kept_by_quadrature(chi2.ppf(0.97, 1))
    capped = clip_allowance_share([0.95], [1.0], together=True, level=0.97)[0]
    assert capped == pytest.approx(lost / (1 - lost), rel=1e-6)
    # far below its bound, a Gaussian keeps nearly all: the cap does not bind
    # (read tail-weighted, a value that far below the 97% quantile of its
    # terms has a very heavy tail: a large share)
    small = clip_allowance_share([0.01], [1.0], together=True, level=0.97,
                                 tail_weighted=False)[0]
    assert 0 < small < 1e-6
    assert clip_allowance_share([0.01], [1.0], together=True, level=0.97)[0] > 0.5


def test_nothing_clipped_or_nothing_positive_has_no_allowance():
    assert np.all(clip_allowance_share([1.0, 2.0], None, together=True) == 0)
    share = clip_allowance_share([-1.0, 0.0, 1.0, 1.0], [np.nan, 2.0, np.nan, 10.0],
                                 together=False)
    assert share[0] == share[1] == share[2] == 0 and share[3] > 0
    # the values sum past a norm bound: no Gaussian gives them, all at the bound
    assert np.all(clip_allowance_share([0.7, 0.5], [1.0], together=True) == 1.0)


def test_the_sample_draws_nothing_and_is_the_same_every_time():
    first = _clip_bias._normal_squares(5)
    assert np.array_equal(first, _clip_bias._normal_squares(5))
    np.testing.assert_allclose(first.mean(axis=0), 1.0, rtol=1e-12)
    # each coordinate holds the same stratified quantiles, rearranged
    assert np.allclose(np.sort(first, axis=0), np.sort(first[:, :1], axis=0))


@pytest.mark.parametrize("spectrum, k", [
    ([4.0, 1.0, 0.25], 2),
    ([4.0, 1.0] + [0.2] * 6, 2),
    ([1.0] * 30, 3),
    ([10.0] + [0.1] * 60, 1),
])
def test_the_total_matches_a_monte_carlo_of_its_model(spectrum, k):
    # the total clipped in norm at the 97% quantile of ||d||^2 / 2, its
    # leading variances released in the same proportion (the shape: both are
    # clipped) and the rest even: the model's own case
    rng = np.random.default_rng(5)
    spectrum = np.asarray(spectrum)
    squares = rng.standard_normal((400_000, spectrum.size)) ** 2
    total = squares @ spectrum
    bound = np.quantile(total, 0.97)
    kept = spectrum.sum() - np.maximum(total - bound, 0).mean()
    leading = spectrum[:k] * kept / spectrum.sum()
    share = total_allowance_share(kept, bound, leading, spectrum.size)
    assert share == pytest.approx(spectrum.sum() / kept - 1, rel=0.1)


def test_the_totals_share_is_capped_and_has_its_edges():
    lost = 1 - _kept_by_quadrature(chi2.ppf(0.97, 1))
    # one axis, its total at the 80% quantile: more than the 97% level's loss
    bound = chi2.ppf(0.8, 1)
    kept = _kept_by_quadrature(bound)
    assert total_allowance_share(kept, bound, [kept], 1) > lost / (1 - lost)
    assert total_allowance_share(kept, bound, [kept], 1, level=0.97) == pytest.approx(
        lost / (1 - lost), rel=1e-6)
    assert total_allowance_share(1.0, None, [0.5], 3) == 0.0
    assert total_allowance_share(-1.0, 2.0, [0.5], 3) == 0.0
    assert total_allowance_share(0.99, 1.0, [0.5], 3) == 1.0     # at its bound
    assert total_allowance_share(1e-6, 1.0, [5e-7], 3) == 0.0    # far below it


def test_a_share_moves_by_the_difference_of_the_allowances():
    # PVE = lambda / T with both clipped: its clipping sd is the PVE times the
    # difference of their shares, its noise from the noises alone
    noise, total_noise = np.array([0.3, 0.2]), 0.4
    raw, total = np.array([6.0, 2.0]), 10.0
    allowance, total_allowance = np.array([0.05, 0.02]), 0.03
    released = Bunch(raw=raw, noise_scale=np.hypot(noise, allowance * raw),
                     total=total, total_noise=np.hypot(total_noise, total_allowance * total),
                     allowance=allowance, total_allowance=total_allowance)
    ratio = raw / total
    expected = np.hypot(ratio * np.hypot(noise / raw, total_noise / total),
                        ratio * np.abs(allowance - total_allowance))
    np.testing.assert_allclose(_scree._share_sd(released, raw, ratio, total), expected,
                               rtol=1e-12)


@pytest.mark.parametrize("level", [0.9, 0.97, 0.99, 0.999])
def test_the_tail_weighted_reading_of_a_gaussian_is_the_gaussian(level):
    # shape 2 is the Gaussian: its clipped ratio at the level reads back as
    # the Gaussian loss there
    bound = chi2.ppf(level, 1)
    kept = _kept_by_quadrature(bound)
    share = _clip_bias._tail_weighted_share(kept / bound, level)
    assert share == pytest.approx(1 / kept - 1, rel=0.01)


@pytest.mark.parametrize("level", [0.9, 0.97, 0.99])
def test_the_tail_weighted_reading_of_a_laplace_matches_its_integral(level):
    # a Laplace pair difference of unit variance (scale 1 / sqrt 2), clipped
    # at the level quantile of y^2, by quadrature
    scale = 1 / np.sqrt(2)
    edge = -scale * np.log(1 - level)          # |y|'s level quantile
    density = lambda y: np.exp(-y / scale) / scale  # noqa: E731  (of |y|)
    inside, _ = integrate.quad(lambda y: y * y * density(y), 0, edge)
    kept = inside + edge ** 2 * (1 - level)
    share = _clip_bias._tail_weighted_share(kept / edge ** 2, level)
    assert share == pytest.approx(1 / kept - 1, rel=0.02)


def test_a_heavier_tail_reads_a_larger_loss():
    # at one level, the less of its bound a value keeps, the heavier its tail
    shares = [_clip_bias._tail_weighted_share(ratio, 0.97)
              for ratio in (0.3, 0.2, 0.14, 0.1)]
    assert np.all(np.diff(shares) > 0) and shares[0] < 0.02 < 0.4 < shares[-1]
    # a Gaussian's ratio, read tail-weighted or not, gives the Gaussian loss;
    # without the tail-weighted reading a light ratio is capped, never raised
    lost = 1 - _kept_by_quadrature(chi2.ppf(0.97, 1))
    heavy = clip_allowance_share([0.1], [1.0], together=True, level=0.97)[0]
    capped = clip_allowance_share([0.1], [1.0], together=True, level=0.97,
                                  tail_weighted=False)[0]
    assert heavy > 0.4 and capped <= lost / (1 - lost) + 1e-12


def test_a_search_is_read_at_the_level_it_reaches_on_average():
    # half its rank slack below its level (public: level, eps and n), at
    # least the median; with a budget to spare, at its level
    from sklearn_dppca.privacy._quantiles import rank_slack
    assert _clip_bias.reached_level(0.97, 0.5, 284) == pytest.approx(
        0.97 - rank_slack(0.5) / 284 / 2, rel=1e-12)
    assert _clip_bias.reached_level(0.97, 0.01, 50) == 0.5
    assert _clip_bias.reached_level(0.97, 1e9, 284) == pytest.approx(0.97, abs=1e-9)


def test_the_reached_level_caps_the_gaussian_reading():
    # a value near its bound: capped at what a Gaussian loses at the reached
    # level (more than at the nominal one), the tail-weighted reading still at
    # the nominal level
    def lost_at(level):
        lost = 1 - _kept_by_quadrature(chi2.ppf(level, 1))
        return lost / (1 - lost)

    capped = clip_allowance_share([0.95], [1.0], together=True, level=0.97, reached=0.9,
                                  tail_weighted=False)[0]
    assert capped == pytest.approx(lost_at(0.9), rel=1e-6)
    assert capped > 2 * lost_at(0.97)
    # the total's too
    total = total_allowance_share(0.95, 1.0, [], 4, level=0.97, reached=0.9)
    assert total <= lost_at(0.9) * (1 + 1e-6)
    assert total > total_allowance_share(0.95, 1.0, [], 4, level=0.97)


@pytest.mark.parametrize("level", [0.9, 0.97])
def test_the_typical_bias_is_a_gaussians_loss_at_the_reached_level(level):
    # the bound is lambda times the chi-square quantile there, the loss lambda
    # E[(Z^2 - c)+]; by quadrature, against the bound
    reached = _clip_bias.reached_level(level, 0.6, 300)
    c = chi2.ppf(reached, 1)
    expected = 7.0 * (1 - _kept_by_quadrature(c)) / c
    assert _clip_bias.typical_search_bias(7.0, reached) == pytest.approx(
        expected, rel=1e-6)
    # one per bound; a smaller budget stops lower, loses more
    lower = _clip_bias.reached_level(level, 0.2, 300)
    both = [_clip_bias.typical_search_bias([7.0, 7.0], r) for r in (reached, lower)]
    assert both[0][0] == pytest.approx(expected, rel=1e-6) and both[1][0] > both[0][0]


def test_a_search_stops_about_half_its_slack_below_its_level():
    # the model behind the reached level, against the mechanism itself: 300
    # searches at the 97% level over 89 and 284 values stop on average
    # between a quarter and three quarters of their rank slack below it
    from sklearn_dppca.privacy._quantiles import positive_quantile, rank_slack
    rng = np.random.default_rng(0)
    for n_values, eps in ((89, 0.577), (284, 0.225)):
        values = rng.chisquare(1, n_values) + 1e-9
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reached = [np.mean(values <= positive_quantile(values, 0.97, eps, rng))
                       for _ in range(300)]
        shortfall = (0.97 - np.mean(reached)) / (rank_slack(eps) / n_values)
        assert 0.25 < shortfall < 0.75


def test_breast_cancer_states_the_clipping_of_a_search_that_stopped_early(monkeypatch):
    # without bounds at eps 4, its searches (284 pairs) stop near the 87%
    # level in 4 fits of 10: PC1's variance kept 0.64 to 0.70 of the table's;
    # read at the nominal level, the allowance left them 5.8 to 7.1 of their
    # sds below it; at the reached level, within four
    X = load_breast_cancer().data

    def far(seeds):
        covariance = np.cov(X.T)
        count = 0
        for seed in seeds:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fitted = DPPCA(n_components=3, eps=4.0, random_state=seed).fit(X)
            truth = fitted.components_[0] @ covariance @ fitted.components_[0]
            value, sd = fitted.explained_variance_[0], fitted.noise_scale_[0]
            count += bool(np.isfinite(value) and abs(value - truth) > 4 * sd)
        return count

    assert far((0, 1, 3, 4)) == 0
    monkeypatch.setattr(_scree, "reached_level", lambda level, eps, n_values: level)
    assert far((0, 1, 3, 4)) == 4


def test_a_top_coded_column_states_its_clipping(monkeypatch):
    # adult without bounds: capital gain's top-coded tail is clipped at a
    # searched bound; the Gaussian reading alone left printed variances 6 to
    # 28 of their sds below the table's (5 fits, eps 4), the tail-weighted one
    # at most 4
    X = np.asarray(load_adult().data, dtype=float)
    assert np.all(np.abs(_z_scores(X)[0]) < 4)
    monkeypatch.setattr(_clip_bias, "_tail_weighted_share", lambda ratio, level: 0.0)
    assert np.sum(_z_scores(X)[0] < -4) >= 3


def _gaussian_table():
    rng = np.random.default_rng(3)
    return rng.standard_normal((20_000, 10)) * np.geomspace(4, 0.5, 10)


def _z_scores(X):
    """Per printed variance of five fits at eps 4, its distance from the
    table's variance along its direction in its stated sds; and the same of
    each fit's total against the trace."""
    covariance = np.cov(X.T)
    scores, totals = [], []
    for seed in range(5):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = DPPCA(n_components=3, eps=4.0, random_state=seed).fit(X)
        truth = np.einsum("ij,jk,ik->i", fitted.components_, covariance,
                          fitted.components_)
        printed = np.isfinite(fitted.explained_variance_)
        scores.extend((fitted.explained_variance_[printed] - truth[printed])
                      / fitted.noise_scale_[printed])
        totals.append((fitted.total_variance_ - np.trace(covariance))
                      / fitted.total_variance_noise_scale_)
    return np.array(scores), np.array(totals)


def test_many_rows_state_the_clipping_in_their_sds(monkeypatch):
    # with 20,000 rows the noise is far below the clipping's bias: without the
    # allowance the printed variances sit several of their sds below the
    # table's (the broken variant below); with it, within about two
    X = _gaussian_table()
    scores, totals = _z_scores(X)
    assert scores.size >= 12 and np.max(np.abs(scores)) < 3
    # (the totals: their median; the pair design's own sampling error, not in
    # the sd, put one of five at -5)
    assert abs(np.median(totals)) < 2.5
    monkeypatch.setattr(_scree, "clip_allowance_share",
                        lambda raw, *args, **kwargs: np.zeros(np.shape(raw)))
    monkeypatch.setattr(_scree, "total_allowance_share", lambda *args, **kwargs: 0.0)
    scores, totals = _z_scores(X)
    assert np.median(scores) < -3 and np.median(totals) < -3


def test_the_allowance_is_post_processing(monkeypatch):
    # the same releases and ledger with or without it: each value moves up by
    # half the loss its sd now carries whole (read at the middle of the losses
    # clipping allows, _at_midpoint)
    X = _gaussian_table()[:3000]
    with_it = DPPCA(n_components=2, eps=2.0, random_state=0).fit(X)
    monkeypatch.setattr(_scree, "clip_allowance_share",
                        lambda raw, *args, **kwargs: np.zeros(np.shape(raw)))
    without = DPPCA(n_components=2, eps=2.0, random_state=0).fit(X)
    assert with_it.privacy_ledger_ == without.privacy_ledger_
    loss = np.sqrt(with_it.noise_scale_**2 - without.noise_scale_**2)
    assert np.all(loss > 0)
    np.testing.assert_allclose(with_it.explained_variance_raw_,
                               without.explained_variance_raw_ + loss / 2, rtol=1e-12)


def test_a_value_is_read_at_the_middle_of_its_losses():
    # raw 10 with an allowance of 0.2 of it: the unclipped value lies in
    # [10, 12] by the readings; read at 11, its sd holds the whole loss 2; a
    # value the model could not explain (share 1), whose sd was raised to it or
    # that is not positive stays where it is, with its whole allowance
    values, sds, carried = _scree._at_midpoint([10.0, 10.0, 10.0, -1.0],
                                               [1.0, 10.0, 1.0, 2.0],
                                               [0.2, 0.2, 1.0, 0.2])
    np.testing.assert_allclose(values, [11.0, 10.0, 10.0, -1.0])
    np.testing.assert_allclose(sds, [np.hypot(1.0, 2.0), 10.0, np.hypot(1.0, 10.0),
                                     np.hypot(2.0, 0.2)])
    np.testing.assert_allclose(carried, [2.0 / 11.0, 0.2, 1.0, 0.2])
    # the share's sd undoes exactly what was carried
    np.testing.assert_allclose(_scree._noise_alone(values, sds, carried)[0], 1.0)


@pytest.mark.parametrize("clip", ["norm", "component"])
def test_a_bound_at_or_past_the_box_clips_nothing(clip):
    # with declared bounds every term is at most the box's bound: a searched
    # bound there (capped at it) clipped nothing, and carries no allowance
    widths = np.array([2.0, 1.0, 4.0])
    components = np.eye(3)[:2]
    box = {"norm": np.full(2, (2.0**2 + 1.0**2) / 2),
           "component": np.array([2.0**2 / 2, 1.0**2 / 2])}[clip]
    params = {"clip": clip}
    below = Bunch(bounds=box[:1] * 0.9 if clip == "norm" else box * 0.9)
    at = Bunch(bounds=box[:1].copy() if clip == "norm" else box.copy())
    assert not np.any(_scree._unclipped_by_box(widths, components, below, params))
    assert np.all(_scree._unclipped_by_box(widths, components, at, params))
    # a mixed scree: the box gave PC1 (NaN bound), the search PC2
    mixed = Bunch(bounds=np.array([np.nan, box[1]]), covaried=np.array([True, False]))
    if clip == "component":
        assert list(_scree._unclipped_by_box(widths, components, mixed, params)) == [
            False, True]


def test_the_kendall_screes_total_states_its_clipping(monkeypatch):
    # scree_method="kendall": the total is its only release, clipped at a high
    # level; without its allowance it sits 4 to 7 of its sds below the trace
    # (five fits at eps 4), with it about 2 to 3; every PVE, a ratio the
    # total's clipping does not move, is printed either way here
    X = _gaussian_table()
    trace = np.trace(np.cov(X.T))

    def totals():
        found = []
        for seed in range(5):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fitted = DPPCA(n_components=3, eps=4.0, scree_method="kendall",
                               random_state=seed).fit(X)
            assert np.all(np.isfinite(fitted.explained_variance_ratio_))
            found.append((fitted.total_variance_ - trace)
                         / fitted.total_variance_noise_scale_)
        return np.array(found)

    assert np.median(totals()) > -3
    monkeypatch.setattr(_scree, "total_allowance_share", lambda *args, **kwargs: 0.0)
    assert np.median(totals()) < -4


def test_a_value_keeping_less_than_the_heaviest_tail_is_flagged():
    # at the 0.99 level the heaviest modelled shape keeps a share h of its
    # bound: a clipped value keeping less is past the family (its reading's
    # loss is a floor); values clipped together are read as their sum
    heaviest = _clip_bias._shape_table(0.99)[0][0]
    bounds = np.array([1.0, 1.0])
    flagged = _clip_bias.heavier_than_modelled(
        np.array([0.5, 2.0]) * heaviest, bounds, together=False, level=0.99)
    assert flagged.tolist() == [True, False]
    together = _clip_bias.heavier_than_modelled(
        np.array([0.4, 0.4]) * heaviest, bounds, together=True, level=0.99)
    assert together.tolist() == [True, True]
    apart_sum = _clip_bias.heavier_than_modelled(
        np.array([0.6, 0.6]) * heaviest, bounds, together=True, level=0.99)
    assert apart_sum.tolist() == [False, False]
    # public bounds (no search level) or no bounds: never
    assert not np.any(_clip_bias.heavier_than_modelled(
        np.array([1e-9]), bounds[:1], together=False, level=None))
    assert not np.any(_clip_bias.heavier_than_modelled(
        np.array([1e-9]), None, together=False, level=0.99))


@pytest.mark.parametrize("broken", [False, True])
def test_a_share_past_the_heaviest_tail_does_not_cancel_its_clipping(monkeypatch,
                                                                     broken):
    # adult without bounds at eps 4, seeds 3 and 7: capital gain's direction,
    # clipped at its searched bound, keeps less of it than the heaviest
    # modelled tail, and lost 35% and 48% of its variance; the total's reading
    # sits at that same floor, so their difference (the share's clipping when
    # both readings describe one tail) cancelled, and PC1's PVE printed 0.54
    # and 0.46 against the table's 0.996, 21 and 30 of its sds away. Read in
    # squares there, it is not estimable. Broken: no value flagged
    if broken:
        monkeypatch.setattr(_scree, "heavier_than_modelled",
                            lambda raw, *args, **kwargs: np.zeros(np.shape(raw), bool))
    X = load_adult().data.to_numpy(dtype=float)
    covariance, trace = np.cov(X.T), np.trace(np.cov(X.T))
    for seed in (3, 7):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = DPPCA(3, eps=4.0, pairs=64, random_state=seed).fit(X)
        direction = fitted.components_[0]
        share = direction @ covariance @ direction / trace
        assert share > 0.99
        ratio, sd = (fitted.explained_variance_ratio_[0],
                     fitted.explained_variance_ratio_noise_scale_[0])
        if broken:
            assert ratio < 0.6 and (share - ratio) > 20 * sd
        else:
            assert np.isnan(ratio)


def test_a_total_past_the_heaviest_tail_keeps_the_shares_clipping():
    # the total's reading past the family's heaviest shape flags every share
    # of a fit without declared bounds (adult at eps 4, seed 3: PC2's and
    # PC3's shares, under 0.001%, printed 8 and 4 of their sds from the
    # table's)
    X = load_adult().data.to_numpy(dtype=float)
    covariance, trace = np.cov(X.T), np.trace(np.cov(X.T))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fitted = DPPCA(3, eps=4.0, pairs=64, random_state=3).fit(X)
    shares = np.einsum("ij,jk,ik->i", fitted.components_, covariance,
                       fitted.components_) / trace
    ratio, sd = fitted.explained_variance_ratio_, fitted.explained_variance_ratio_noise_scale_
    printed = np.isfinite(ratio)
    assert np.all(np.abs(ratio[printed] - shares[printed]) <= 4 * sd[printed])


@pytest.mark.parametrize("level", [0.9, 0.97, 0.99])
def test_the_spectrum_loss_of_one_axis_is_the_gaussian_integral(level):
    # one axis clipped at its level quantile: a Gaussian coordinate's loss over
    # what it keeps, by quadrature
    c = chi2.ppf(level, 1)
    loss = _clip_bias._spectrum_loss(np.array([2.5]), 0.0, 0, level)
    assert loss == pytest.approx(1 / _kept_by_quadrature(c) - 1, rel=0.03)


@pytest.mark.parametrize("degrees, tolerance", [(2, 0.03), (12, 0.06)])
def test_the_spectrum_loss_of_equal_axes_is_the_chi_square_integral(degrees, tolerance):
    # T = chi2_d / d clipped at its 0.97 quantile c: E[T; T < c] is the
    # chi-square on d + 2 degrees at c d, so E[min(T, c)] has a closed form
    # (the sample's chi-square is Wilson and Hilferty's from three degrees)
    level = 0.97
    c = chi2.ppf(level, degrees) / degrees
    kept = chi2.cdf(c * degrees, degrees + 2) + c * (1 - level)
    loss = _clip_bias._spectrum_loss(np.array([]), 4.0, degrees, level)
    assert loss == pytest.approx(1 / kept - 1, rel=tolerance)
    # spread over many axes, the norm's tail is lighter: less is lost
    assert loss < _clip_bias._spectrum_loss(np.array([4.0]), 0.0, 0, level)


def test_a_total_loses_at_least_its_spectrum_clipped_at_the_reached_level():
    # a total well below its bound reads as one that lost little; the bound
    # was the reached level's quantile of the terms, so the model spectrum's
    # loss there is the least it states (12 of 48 totals of
    # bench_clip_allowance.py were more than two sds off without it, 2 with)
    variances, level, reached = np.array([3.0, 1.0]), 0.97, 0.9
    total, bound = 5.0, 20.0
    leading = variances / bound
    reading = float(_clip_bias._with_level(
        _clip_bias._total_share(total / bound, leading, (total - 4.0) / bound, 3),
        total / bound, level, reached=reached))
    floor = _clip_bias._spectrum_loss(leading, (total - 4.0) / bound, 3, reached)
    assert reading < floor
    share = total_allowance_share(total, bound, variances, 5, level=level, reached=reached)
    assert share == pytest.approx(floor)
    # a public bound (no search, no level): the reading alone
    assert total_allowance_share(total, bound, variances, 5) < floor
