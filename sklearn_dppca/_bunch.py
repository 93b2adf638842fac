"""A dictionary whose keys are also attributes: the container of released parts.

Why our own: ``sklearn.utils.Bunch`` is the same idea, but importing
``sklearn.utils`` costs about a second (it loads SciPy's statistics), and the
paths that only read and draw a release (``python -m sklearn_dppca --from-json``,
the displays) should not pay it.
"""


class Bunch(dict):
    """A ``dict`` whose keys can also be read and set as attributes.

    Examples
    --------
    >>> from sklearn_dppca._bunch import Bunch
    >>> frame = Bunch(center=(0.0, 1.0), half_width=2.0)
    >>> frame.half_width, frame["center"]
    (2.0, (0.0, 1.0))
    """

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __setattr__(self, key, value):
        self[key] = value

    def __delattr__(self, key):
        try:
            del self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __dir__(self):
        return [*super().__dir__(), *(key for key in self if isinstance(key, str))]
