"""scikit-learn's own estimator checks, with no expected failures.

:class:`~sklearn_dppca.ReleasedPCA` is not among them: it is a frozen release, not
a learner (no hyperparameters, a ``fit`` that reads nothing, a clone that is
itself), which the checks' premise (``fit`` learns from ``X``) does not fit;
scikit-learn leaves its own ``FrozenEstimator`` out of them for the same reason.
Its conventions (a Pipeline step, a no-op ``fit``, clone) are tested in
tests/test_release.py.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_dppca import DPPCA, DPKendallDirections, DPScree


@parametrize_with_checks([DPKendallDirections(), DPScree(), DPPCA()])
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
