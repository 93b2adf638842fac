"""The shared hyperparameters are documented once (``sklearn_dppca._param_docs``)
and read the same on the three estimators' pages."""

import pytest
from numpydoc.docscrape import ClassDoc

from sklearn_dppca import DPKendallDirections, DPPCA, DPScree
from sklearn_dppca._base import _PrivateProjection
from sklearn_dppca._param_docs import _SCREE_ATTRIBUTES, _SHARED, _SHARED_ATTRIBUTES, \
    shared_parameters

ESTIMATORS = (DPPCA, DPScree, DPKendallDirections)


def _entries(cls):
    return {p.name: (p.type, tuple(p.desc)) for p in ClassDoc(cls)["Parameters"]}


@pytest.mark.parametrize("name", sorted(_SHARED))
def test_a_shared_entry_reads_the_same_on_every_page(name):
    entries = [_entries(cls)[name] for cls in ESTIMATORS]
    assert entries[0] == entries[1] == entries[2]
    assert entries[0][0] in _SHARED[name]


def test_every_shared_name_is_a_common_hyperparameter():
    assert set(_SHARED) <= set(_PrivateProjection._common_constraints)
    for cls in ESTIMATORS:
        assert "{shared:" not in cls.__doc__
        assert set(_SHARED) <= set(_entries(cls))


def test_an_unknown_shared_name_fails_at_definition():
    with pytest.raises(KeyError):
        @shared_parameters
        class _Broken:
            """Doc.

            Parameters
            ----------
                {shared: nonsense}
            """


@pytest.mark.parametrize("name", sorted(_SHARED_ATTRIBUTES))
def test_a_shared_attribute_reads_the_same_on_every_page(name):
    entries = [{a.name: (a.type, tuple(a.desc)) for a in ClassDoc(cls)["Attributes"]}[name]
               for cls in ESTIMATORS]
    assert entries[0] == entries[1] == entries[2]


@pytest.mark.parametrize("name", sorted(_SCREE_ATTRIBUTES))
def test_a_scree_attribute_reads_the_same_on_both_scree_pages(name):
    entries = [{a.name: (a.type, tuple(a.desc)) for a in ClassDoc(cls)["Attributes"]}[name]
               for cls in (DPPCA, DPScree)]
    assert entries[0] == entries[1]
    assert entries[0][1][0] == _SCREE_ATTRIBUTES[name].splitlines()[1].strip()
