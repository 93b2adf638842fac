"""Colours and styles of the displays, and the merge of a default style with the
user's keyword arguments.

matplotlib is imported inside the functions, as everywhere in the displays, so
that importing :mod:`sklearn_dppca.display` stays cheap and never imports pyplot.
"""

from .._validation import check_cmap, check_colors

#: Legend label of every non-private overlay.
NONPRIVATE_LABEL = "non-private reference"

#: Colour of every non-private overlay (grey, so that it never competes with the
#: private picture).
NONPRIVATE_COLOR = "0.35"

#: Line style of non-private lines and arrows.
NONPRIVATE_LINESTYLE = "--"

#: Style of non-private markers: hollow grey circles.
NONPRIVATE_MARKER_KW = {
    "marker": "o",
    "facecolors": "none",
    "edgecolors": NONPRIVATE_COLOR,
    "linewidths": 0.8,
}

#: Colour of private artists drawn in a single colour.
PRIVATE_COLOR = "C0"

# A user's key on the left makes these default keys meaningless or contradictory
# (matplotlib refuses ``c`` with ``color`` in a scatter, and a patch made with
# ``color`` ignores its ``facecolor`` and ``edgecolor``; a norm carries its own
# limits), so the default ones are dropped.
_DISPLACES = {
    "color": ("c", "facecolor", "edgecolor"),
    "c": ("color", "facecolor"),
    "norm": ("vmin", "vmax"),
}
_COLOR_PARTS = ("facecolor", "edgecolor")


def merge_style(defaults, user, artist):
    """The default style overridden by the user's, matplotlib's aliases honoured.

    Both dicts are first brought to matplotlib's own property names for
    ``artist`` (the matplotlib class being styled, e.g. ``Line2D``, ``Patch``,
    ``Collection``, ``Text``) with :func:`matplotlib.cbook.normalize_kwargs`, so
    a user's ``lw`` replaces a default ``linewidth`` instead of clashing with it.
    Then:

    * ``c`` means ``color`` for patches too (bars, arrows), as it does for lines
      and text, so one ``c=`` works whichever artist a display's ``**kwargs``
      style; in a scatter ``c`` stays scatter's own argument;
    * a user's ``color`` or ``c`` replaces the default colour in every form, a
      user's ``norm`` the default ``vmin``/``vmax``;
    * a user's ``facecolor`` (``edgecolor``) replaces that part of a default
      ``color`` only: the other part keeps the default colour.

    Parameters
    ----------
    defaults : dict
        The display's style.
    user : dict or None
        The user's keyword arguments.
    artist : type
        The matplotlib artist class the style is for.

    Returns
    -------
    style : dict
        A new dict; the inputs are left as they were.

    Raises
    ------
    TypeError
        When ``user`` gives one property twice under two names (``lw`` and
        ``linewidth``), as matplotlib does.
    """
    from matplotlib.cbook import normalize_kwargs
    from matplotlib.patches import Patch

    merged = normalize_kwargs(defaults, artist)
    mine = normalize_kwargs(user or {}, artist)
    if issubclass(artist, Patch) and "c" in mine:
        if "color" in mine:
            raise TypeError("Got both 'color' and 'c', which are aliases of one another")
        mine["color"] = mine.pop("c")
    for key, rivals in _DISPLACES.items():
        if key in mine:
            for rival in rivals:
                merged.pop(rival, None)
    if ("color" in merged and "color" not in mine
            and any(part in mine for part in _COLOR_PARTS)):
        color = merged.pop("color")
        for part in _COLOR_PARTS:
            merged.setdefault(part, color)
    merged.update(mine)
    return merged


def legend_color(style, fallback):
    """The single colour a legend entry for ``style`` shows (``fallback`` when the
    style sets none, or sets one per point)."""
    from matplotlib.colors import is_color_like

    for key in ("color", "c"):
        value = style.get(key)
        if value is not None and is_color_like(value):
            return value
    return fallback


#: The default group colours: the 8 colours of Okabe & Ito (2008), "Color
#: Universal Design", told apart under the common forms of colour blindness:
#: orange, sky blue, bluish green, vermillion, reddish purple, blue, yellow,
#: black. Yellow comes late because its faint histogram cells all but vanish
#: on white, black last because the non-private overlays are grey.
_OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#D55E00", "#CC79A7", "#0072B2",
             "#F0E442", "#000000")


def group_colors(labels, colors=None):
    """One colour per group label: the user's ``colors`` (a list in the order of
    ``labels`` or a dict label -> colour, checked by
    :func:`~sklearn_dppca._validation.check_colors`), else the Okabe-Ito palette
    for up to 8 groups and tab20 beyond (no palette of more colours stays
    distinct for colour-blind readers: facets help then)."""
    import matplotlib
    from matplotlib.colors import is_color_like

    chosen = check_colors(colors, labels, is_color_like)
    if chosen is not None:
        return chosen
    if len(labels) <= len(_OKABE_ITO):
        return dict(zip(labels, _OKABE_ITO))
    cmap = matplotlib.colormaps["tab20"]
    return {label: cmap(i % cmap.N) for i, label in enumerate(labels)}


def check_colormap(cmap, name="cmap"):
    """None or a matplotlib colormap (a registered name or a Colormap), checked
    by :func:`~sklearn_dppca._validation.check_cmap`."""
    import matplotlib
    from matplotlib.colors import Colormap

    return check_cmap(cmap, matplotlib.colormaps, Colormap, name)
