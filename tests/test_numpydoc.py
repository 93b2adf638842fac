"""Every public object's docstring: numpydoc validation, documented attributes, and
Examples that run.

Public objects are everything in the ``__all__`` of ``sklearn_dppca``,
``sklearn_dppca.display``, ``sklearn_dppca.privacy``, ``sklearn_dppca.datasets`` and
``sklearn_dppca.app`` (importable without its optional extra),
with the public methods and properties of each class. The error codes are chosen as
scikit-learn's own ``sklearn/tests/test_docstrings.py`` chooses them (all of
numpydoc's checks minus a commented few); the list of codes is in
``numpydoc.validate.ERROR_MSGS``.
"""

import doctest
import inspect
import warnings

import pytest

import sklearn_dppca
from sklearn_dppca import app, datasets, display, privacy

numpydoc_validate = pytest.importorskip("numpydoc.validate")
docscrape = pytest.importorskip("numpydoc.docscrape")

PUBLIC_MODULES = (sklearn_dppca, display, privacy, datasets, app)

#: Codes never checked, with why.
IGNORED = {
    # Summary on the line of the opening quotes (PEP 257) or on the next: numpydoc
    # before 1.7 accepted only the second; scikit-learn ignores it too.
    "GL01",
    # The first line of Returns may name the returned value ("self : DPPCA",
    # "display : ScreeDisplay"); the name is what the description refers to.
    # scikit-learn ignores it for the same reason.
    "RT02",
}
#: Codes checked on classes and functions only, not on their methods and properties
#: (as scikit-learn does): a method's one-line summary can say everything, its
#: class holds the Examples that use it and the See Also of its family.
TOP_LEVEL_ONLY = {"ES01", "SA01", "EX01"}
#: A See Also section (SA01) is asked of every public class, and an extended
#: summary (ES01) and a See Also of every object of the package face: the
#: estimators, the release, the displays and their functions, where a reader needs
#: the prose that says what is released or drawn and the way to the sibling
#: estimator or the picture of a fit. The functions of the privacy toolkit and the
#: data loaders are described by their summary line and parameters; the API page
#: groups them and the user guide gives their context.
SEE_ALSO_MODULES = (sklearn_dppca, display)

#: Public members our classes inherit from scikit-learn or Python and whose
#: docstrings we do not own (scikit-learn validates its own). Any other inherited
#: member fails the test below, so that this list stays explicit.
FOREIGN_MEMBERS = {
    # sklearn.base.TransformerMixin / ClassNamePrefixFeaturesOutMixin / BaseEstimator
    "fit_transform", "get_feature_names_out", "get_params", "set_params",
    # sklearn's metadata routing and set_output machinery
    "get_metadata_routing", "set_output",
    # BaseException, for the warning and error classes
    "add_note", "args", "with_traceback",
}


def _public_objects():
    """(public path, object) of every public class and function, once each."""
    seen, found = set(), []
    for module in PUBLIC_MODULES:
        for name in module.__all__:
            if name.startswith("__"):
                continue
            obj = getattr(module, name)
            if id(obj) not in seen:
                seen.add(id(obj))
                found.append((f"{module.__name__}.{name}", module, obj))
    return found


def _owner(cls, name):
    return next(klass for klass in cls.__mro__ if name in vars(klass))


def _is_ours(klass):
    return klass.__module__.split(".")[0] == "sklearn_dppca"


def _members(cls):
    """Public methods and properties of ``cls`` whose docstrings we own."""
    members = []
    for name in sorted(dir(cls)):
        if name.startswith("_") or name in FOREIGN_MEMBERS:
            continue
        value = vars(_owner(cls, name))[name]
        if isinstance(value, (property, classmethod, staticmethod)) or callable(value):
            members.append(name)
    return members


def _validation_cases():
    for path, module, obj in _public_objects():
        yield pytest.param(path, module, obj, None, id=path)
        if inspect.isclass(obj):
            for name in _members(obj):
                yield pytest.param(f"{path}.{name}", module, obj, name,
                                   id=f"{path}.{name}")


def _checked(code, module, obj, member):
    if code in IGNORED:
        return False
    if member is not None:
        return code not in TOP_LEVEL_ONLY
    if code == "SA01" and inspect.isclass(obj):
        return True
    if code in ("ES01", "SA01"):
        return module in SEE_ALSO_MODULES
    return True


@pytest.mark.parametrize("path, module, obj, member", list(_validation_cases()))
def test_docstring_is_valid_numpydoc(path, module, obj, member):
    result = numpydoc_validate.validate(path)
    errors = [f"{code}: {message}" for code, message in result["errors"]
              if _checked(code, module, obj, member)]
    assert not errors, f"{path}:\n  " + "\n  ".join(errors)


def test_every_inherited_member_is_ours_or_listed():
    """A public member from a base class outside the package is a choice, not luck."""
    unlisted = set()
    for path, _, obj in _public_objects():
        if not inspect.isclass(obj):
            continue
        for name in dir(obj):
            if name.startswith("_") or name in FOREIGN_MEMBERS:
                continue
            if not _is_ours(_owner(obj, name)):
                unlisted.add(f"{path}.{name}")
    assert not unlisted, f"inherited members neither ours nor in FOREIGN_MEMBERS: {unlisted}"


def test_foreign_members_are_all_still_inherited():
    """No stale names in FOREIGN_MEMBERS: each one is inherited by some public class."""
    inherited = {name for _, _, obj in _public_objects() if inspect.isclass(obj)
                 for name in dir(obj)}
    assert FOREIGN_MEMBERS <= inherited, FOREIGN_MEMBERS - inherited


# -- fitted attributes ------------------------------------------------------------


def _documented_attributes(cls):
    """The names of the Attributes section, each entry a single name with a type
    and a description (a grouped ``a_, b_ : see X`` entry is not documentation)."""
    section = docscrape.NumpyDocString(inspect.getdoc(cls))["Attributes"]
    bad = [entry.name for entry in section
           if "," in entry.name or not entry.type or not "".join(entry.desc).strip()]
    assert not bad, f"{cls.__name__}: Attributes entries without one name, a type " \
                    f"and a description: {bad}"
    return {entry.name for entry in section}


def _set_attributes(obj):
    """Public fitted attributes an object holds: trailing ``_``, no leading ``_``
    (set on it, or a property of its class made from what it holds)."""
    properties = {name for name, value in vars(type(obj)).items()
                  if isinstance(value, property)}
    return {name for name in set(vars(obj)) | properties
            if name.endswith("_") and not name.startswith("_")}


def _fitted(estimator_class, as_frame=False, with_groups=False, **params):
    """An estimator fitted on 200 rows; ``as_frame`` passes a DataFrame (which sets
    ``feature_names_in_``), ``with_groups`` declares the groups of ``y``."""
    X, y = datasets.make_gaussian_clusters(40, n_features=10, return_groups=True,
                                           as_frame=as_frame, random_state=0)
    if with_groups:
        params["groups"] = sorted(set(y))
    with warnings.catch_warnings():
        # 200 rows give noisy releases; only which attributes are set matters here
        warnings.simplefilter("ignore", sklearn_dppca.PrivacyUtilityWarning)
        return estimator_class(random_state=0, **params).fit(X, y)


def _fitted_estimators():
    """Each estimator fitted with its defaults and with the options that add
    attributes (a DataFrame, the non-private reference, scaling, groups)."""
    options = {"as_frame": True, "compute_nonprivate": True, "scale": True}
    return {
        sklearn_dppca.DPKendallDirections: [
            _fitted(sklearn_dppca.DPKendallDirections),
            _fitted(sklearn_dppca.DPKendallDirections, **options),
        ],
        sklearn_dppca.DPScree: [
            _fitted(sklearn_dppca.DPScree),
            _fitted(sklearn_dppca.DPScree, **options),
        ],
        sklearn_dppca.DPPCA: [
            _fitted(sklearn_dppca.DPPCA),
            _fitted(sklearn_dppca.DPPCA, with_groups=True, **options),
        ],
    }


@pytest.fixture(scope="module")
def fitted_objects():
    fitted = _fitted_estimators()
    pca = fitted[sklearn_dppca.DPPCA][-1]
    fitted[sklearn_dppca.ReleasedPCA] = [
        sklearn_dppca.load_release(sklearn_dppca.export_release(pca, allow_seeded=True))]
    return fitted


@pytest.mark.parametrize("cls", [sklearn_dppca.DPKendallDirections, sklearn_dppca.DPScree,
                                 sklearn_dppca.DPPCA, sklearn_dppca.ReleasedPCA],
                         ids=lambda cls: cls.__name__)
def test_fitted_attributes_are_documented(cls, fitted_objects):
    documented = _documented_attributes(cls)
    held = set().union(*(_set_attributes(obj) for obj in fitted_objects[cls]))
    assert held, "nothing fitted: the check would pass vacuously"
    undocumented = held - documented
    assert not undocumented, f"{cls.__name__} sets attributes its docstring does not " \
                             f"document: {sorted(undocumented)}"
    not_set = documented - held
    assert not not_set, f"{cls.__name__} documents attributes no fit sets: {sorted(not_set)}"


def test_attribute_check_catches_an_undocumented_attribute(fitted_objects):
    """The check above can fail: an attribute set after fit is noticed."""
    estimator = fitted_objects[sklearn_dppca.DPScree][0]
    estimator.made_up_ = 1.0
    try:
        assert "made_up_" in _set_attributes(estimator) - _documented_attributes(
            sklearn_dppca.DPScree)
    finally:
        del estimator.made_up_


# -- the Examples run ---------------------------------------------------------------

DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _doctest_cases():
    finder = doctest.DocTestFinder(recurse=False)
    for path, _, obj in _public_objects():
        targets = [(path, obj)]
        if inspect.isclass(obj):
            targets += [(f"{path}.{name}", vars(_owner(obj, name))[name])
                        for name in _members(obj) if _is_ours(_owner(obj, name))]
        for name, target in targets:
            target = getattr(target, "__func__", getattr(target, "fget", target))
            for test in finder.find(target, name, globs={}):
                if test.examples:
                    yield pytest.param(test, id=name)


def test_every_public_class_and_function_has_a_doctest():
    with_examples = {case.id for case in _doctest_cases()}
    missing = [path for path, _, _ in _public_objects() if path not in with_examples]
    assert not missing, f"no runnable Examples: {missing}"


# The Examples fit on a few hundred rows, where the utility warnings are expected;
# what they show must hold all the same.
@pytest.mark.filterwarnings("ignore::sklearn_dppca.PrivacyUtilityWarning")
@pytest.mark.parametrize("test", list(_doctest_cases()))
def test_examples_run(test):
    runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    output = []
    runner.run(test, out=output.append)
    assert runner.failures == 0, "".join(output)
