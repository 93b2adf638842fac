"""The front ends' CSV reader: pandas' C parser on a plain file agrees with the
cell-by-cell reader on every table it returns, and leaves every error to it."""

import numpy as np
import pandas as pd
import pytest

from sklearn_dppca._data_sources import (
    _CLI_SPELLING,
    UserError,
    _read_exact,
    _read_plain,
    read_csv,
)


def _both(path, columns=None, group=None, declared=None, max_abs=None):
    """What each reader makes of ``path``: (frame, labels), or the UserError's
    text (the fast reader: None when it leaves the file to the exact one)."""
    fast = _read_plain(path, columns, group, declared, max_abs)
    try:
        exact = _read_exact(path, columns, group, declared, max_abs, "data.csv",
                            _CLI_SPELLING)
    except UserError as error:
        exact = str(error)
    return fast, exact


def _same(fast, exact):
    frame, labels = fast
    assert not isinstance(exact, str), exact
    pd.testing.assert_frame_equal(frame, exact[0], check_exact=True)
    assert (labels is None and exact[1] is None) or list(labels) == list(exact[1])


VALID = {
    "repr floats": "a,b\n" + "\n".join(f"{float(x)!r},{float(y)!r}" for x, y in
                                        np.random.default_rng(0).normal(size=(50, 2))),
    "exponents and signs": "a,b\n1e-300,-2.5E+10\n+.5,-0\n7,1e308\n",
    "spaces, true and false": "a , b\n 1.5 ,true\n2\t,FALSE\n",
    "CRLF, BOM, empty lines first": "\ufeff\r\n\r\na,b\r\n1,2\r\n3,4\r\n",
    "no final line feed": "a,b\n1,2\n3,4",
    "one column": "a\n1\n2\n3\n",
}


@pytest.mark.parametrize("name", list(VALID))
def test_a_plain_file_is_read_as_the_exact_reader_reads_it(name, tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(VALID[name], encoding="utf-8", newline="")
    fast, exact = _both(path)
    assert fast is not None
    _same(fast, exact)


def test_groups_and_declared_columns_agree(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("id,a,g,b,note\n1,0.5, x ,2,free text\n2,1.5,y,3,more\n"
                    "3,2.5,x,4,\n", encoding="utf-8")
    fast, exact = _both(path, columns=["b", "a"], group="g", declared=["x", "y"])
    assert fast is not None and list(fast[0].columns) == ["b", "a"]
    assert list(fast[1]) == ["x", "y", "x"]
    _same(fast, exact)


INVALID = {
    "a longer row": ("a,b\n1,2\n3,4,5\n", {}),
    "a shorter row": ("a,b\n1,2\n3\n", {}),
    "a row short of an unused column": ("a,b,c\n1,2,x\n3,4\n5,6,z\n", {"columns": ["a", "b"]}),
    "an empty line after the header": ("a,b\n1,2\n\n3,4\n", {}),
    "a NUL byte": ("a,b\n1,2\n3,\x004\n", {}),
    "a text cell": ("a,b\n1,2\n3,four\n", {}),
    "a missing cell": ("a,b\n1,2\n3,\n", {}),
    "NA": ("a,b\n1,2\n3,NA\n", {}),
    "nan": ("a,b\n1,2\n3,nan\n", {}),
    "inf": ("a,b\n1,2\n3,-inf\n", {}),
    "an overflow": ("a,b\n1,2\n3,1e400\n", {}),
    "digit separators": ("a,b\n1,2\n3,1_000\n", {}),
    "beyond the domain": ("a,b\n1,2\n3,1e10\n", {"max_abs": 2.0 ** 20}),
    "one data row": ("a,b\n1,2\n", {}),
    "a duplicate name": ("a,a\n1,2\n3,4\n", {}),
    "a nameless column": ("a,\n1,2\n3,4\n", {}),
    "an undeclared label": ("a,g\n1,x\n2,z\n", {"group": "g", "declared": ["x", "y"]}),
    "a row with no label": ("a,g\n1,x\n2, \n", {"group": "g", "declared": ["x", "y"]}),
    "an unknown column": ("a,b\n1,2\n3,4\n", {"columns": ["a", "c"]}),
}


@pytest.mark.parametrize("name", list(INVALID))
def test_every_error_is_left_to_the_exact_reader(name, tmp_path):
    text, options = INVALID[name]
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8", newline="")
    fast, exact = _both(path, **options)
    assert fast is None
    assert isinstance(exact, str)
    with pytest.raises(UserError) as raised:
        read_csv(path, **options, shown_as="data.csv")
    assert str(raised.value) == exact


@pytest.mark.parametrize("text", ['a,"b"\n1,"2"\n3,4\n', "a,b\n1,2\r3,4\n"])
def test_quotes_and_lone_carriage_returns_are_left_to_the_exact_reader(text, tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8", newline="")
    fast, exact = _both(path)
    assert fast is None
    pd.testing.assert_frame_equal(read_csv(path).X, exact[0])


def test_a_file_that_is_not_utf8_is_left_to_the_exact_reader(tmp_path):
    path = tmp_path / "data.csv"
    path.write_bytes(b"a,b\n1,2\n3,\xff\n")
    fast, exact = _both(path)
    assert fast is None and "not UTF-8" in exact


def test_random_cells_get_the_same_verdict_from_both_readers(tmp_path):
    # a cell drawn from digits, signs, points, exponents, spaces and letters is a
    # number to both readers (the same float64), or the fast one leaves it
    rng = np.random.default_rng(0)
    alphabet = list("0123456789.eE+- infatruelsx_")
    path = tmp_path / "data.csv"
    read_fast = 0
    for _ in range(300):
        cell = "".join(rng.choice(alphabet, size=rng.integers(1, 6)))
        path.write_text(f"a,b\n{cell},1\n2,3\n", encoding="utf-8")
        fast, exact = _both(path)
        if fast is not None:
            read_fast += 1
            _same(fast, exact)
    assert 20 <= read_fast <= 280      # both verdicts were put to the test
