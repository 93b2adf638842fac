"""scikit-learn's own estimator checks, with no expected failures."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_dppca import DPPCA, DPKendallDirections, DPScree


@parametrize_with_checks([DPKendallDirections(), DPScree(), DPPCA()])
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
