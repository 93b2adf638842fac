"""Text of the displays: component labels, literal names, and labels placed next
to arrow ends without pile-ups."""

import functools

import numpy as np

from .._summary import NOT_ESTIMABLE
from ._limits import data_per_point
from ._style import merge_style


def plain_text(value):
    """``str(value)`` escaped so that matplotlib shows it literally.

    Names and labels are data: a pair of ``$`` in them would start mathtext, and an
    invalid formula (``"price_$_usd_$"``) fails when the figure is drawn.
    """
    return str(value).replace("$", r"\$")



def component_label(index, explained_variance_ratio=None):
    """``"DP PC1 (42.0%)"`` with the private PVE, ``"DP PC1"`` without, and
    ``"DP PC1 (PVE not estimable)"`` when its PVE is NaN or infinite (a fit that
    could not estimate it: no percentage that is only noise is printed)."""
    label = f"DP PC{index + 1}"
    if explained_variance_ratio is not None:
        ratio = float(explained_variance_ratio[index])
        if np.isfinite(ratio):
            label += f" ({100 * ratio:.1f}%)"
        else:
            label += f" (PVE {NOT_ESTIMABLE})"
    return label


def label_fontsize(n_labels, base=9.0, smallest=5.5):
    """Shrink label text as the number of labels grows."""
    if n_labels <= 10:
        return base
    return max(smallest, base - 0.15 * (n_labels - 10))


#: Size (points) at which the advance widths of the printable ASCII characters
#: are read once; a width at another size is proportional.
_REFERENCE_SIZE = 100.0


@functools.lru_cache(maxsize=None)
def _advances(weight):
    """Advance width (points at ``_REFERENCE_SIZE``) of each printable ASCII
    character in matplotlib's default font of this weight."""
    from matplotlib import ft2font
    from matplotlib.font_manager import FontProperties, findfont, get_font

    # (LoadFlags is matplotlib 3.10's; the older releases have the constant)
    flags = getattr(getattr(ft2font, "LoadFlags", None), "NO_HINTING", None)
    flags = ft2font.LOAD_NO_HINTING if flags is None else flags
    font = get_font(findfont(FontProperties(weight=weight)))
    font.set_size(_REFERENCE_SIZE, 72)
    return {chr(code): font.load_char(code, flags=flags).linearHoriAdvance / 65536.0
            for code in range(32, 127)}


def text_width(text, fontsize, weight="normal"):
    """Width of ``text`` in points in matplotlib's default font: the sum of its
    characters' advances (kerning left out: a point or so on a label), measured
    on the glyphs only for text beyond printable ASCII."""
    text = str(text)
    advances = _advances(weight)
    if all(character in advances for character in text):
        return sum(advances[character] for character in text) * fontsize / _REFERENCE_SIZE
    return _glyph_width(text, fontsize, weight)


@functools.lru_cache(maxsize=1024)
def _glyph_width(text, fontsize, weight):
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextToPath

    width, _, _ = TextToPath().get_text_width_height_descent(
        text, FontProperties(size=fontsize, weight=weight), ismath=False)
    return width


def _label_widths(labels, fontsize):
    """Label widths in points: the measured text, its box's padding (0.1 em a
    side) and a small gap."""
    return np.array([text_width(lab, fontsize) + 0.2 * fontsize + 3.0
                     for lab in labels])


def _label_height(fontsize):
    return 1.35 * fontsize + 1.0


def _place_labels(ax, ends, labels, *, origin=(0.0, 0.0), fontsize=9.0, gap=2.0,
                 n_iter=150):
    """Centres for text labels of arrows ending at ``ends``, without pile-ups.

    Each label starts just beyond its arrow end, along the arrow (outward from
    ``origin``); overlapping label boxes (estimated from the font size and the
    current limits of ``ax``) are then pushed apart, mostly vertically.

    Returns an array of shape (n, 2) of label centres in data coordinates.
    """
    ends = np.asarray(ends, dtype=float).reshape(-1, 2)
    n = len(ends)
    if n == 0:
        return ends.copy()
    dx_pt, dy_pt = data_per_point(ax)
    widths = _label_widths(labels, fontsize) * dx_pt
    heights = np.full(n, _label_height(fontsize)) * dy_pt
    vec = ends - np.asarray(origin, dtype=float)
    norms = np.hypot(vec[:, 0], vec[:, 1])
    unit = np.zeros_like(vec)
    nonzero = norms > 0
    unit[nonzero] = vec[nonzero] / norms[nonzero, None]
    unit[~nonzero] = (1.0, 0.0)
    # distance from a box centre to its edge along ``unit``, plus a small gap
    reach = 0.5 * np.minimum(
        np.divide(widths, np.abs(unit[:, 0]), out=np.full(n, np.inf),
                  where=np.abs(unit[:, 0]) > 1e-12),
        np.divide(heights, np.abs(unit[:, 1]), out=np.full(n, np.inf),
                  where=np.abs(unit[:, 1]) > 1e-12),
    )
    reach += gap * np.hypot(unit[:, 0] * dx_pt, unit[:, 1] * dy_pt)
    pos = ends + reach[:, None] * unit
    if n < 2:
        return pos
    half_w = (widths[:, None] + widths[None, :]) / 2
    half_h = (heights[:, None] + heights[None, :]) / 2
    tie = np.subtract.outer(np.arange(n), np.arange(n)).astype(float)
    for _ in range(n_iter):
        dx = pos[:, 0][:, None] - pos[:, 0][None, :]
        dy = pos[:, 1][:, None] - pos[:, 1][None, :]
        over_x = half_w - np.abs(dx)
        over_y = half_h - np.abs(dy)
        clash = (over_x > 0) & (over_y > 0)
        np.fill_diagonal(clash, False)
        if not clash.any():
            break
        sign_y = np.sign(np.where(dy != 0, dy, tie))
        sign_x = np.sign(np.where(dx != 0, dx, tie))
        # push along the direction that needs the smaller relative move
        vertical = over_y / half_h <= over_x / half_w
        move_y = np.where(clash & vertical, sign_y * over_y * 0.5, 0.0).sum(axis=1)
        move_x = np.where(clash & ~vertical, sign_x * over_x * 0.5, 0.0).sum(axis=1)
        pos[:, 0] += 0.6 * move_x
        pos[:, 1] += 0.6 * move_y
    return pos


def _label_extent(ax, positions, labels, fontsize):
    """Bounding box (x_min, x_max, y_min, y_max) of labels centred at ``positions``."""
    positions = np.asarray(positions, dtype=float).reshape(-1, 2)
    if len(positions) == 0:
        return None
    dx_pt, dy_pt = data_per_point(ax)
    widths = _label_widths(labels, fontsize) * dx_pt
    heights = _label_height(fontsize) * dy_pt
    return (
        float(np.min(positions[:, 0] - widths / 2)),
        float(np.max(positions[:, 0] + widths / 2)),
        float(np.min(positions[:, 1] - heights / 2)),
        float(np.max(positions[:, 1] + heights / 2)),
    )


#: Rounds of growing the limits and placing the labels again.
_FIT_ROUNDS = 5


def _fit_limits(ax, ends, labels, origin, fontsize, center):
    """Label centres for the current size of ``ax``, its limits grown until the
    labels fit inside them (growing them moves the labels: a few rounds)."""
    pos = _place_labels(ax, ends, labels, origin=origin, fontsize=fontsize)
    for _ in range(_FIT_ROUNDS):
        ext = _label_extent(ax, pos, labels, fontsize)
        x0, x1 = ax.get_xlim()
        y0, y1 = ax.get_ylim()
        if center is not None:
            mid = np.asarray(center, dtype=float)
            need = max(mid[0] - ext[0], ext[1] - mid[0], mid[1] - ext[2], ext[3] - mid[1])
            half = max(x1 - x0, y1 - y0) / 2
            if need <= half:
                break
            half = need * 1.03
            ax.set_xlim(mid[0] - half, mid[0] + half)
            ax.set_ylim(mid[1] - half, mid[1] + half)
        else:
            margin = 0.02 * max(x1 - x0, y1 - y0)
            nx0, nx1 = min(x0, ext[0] - margin), max(x1, ext[1] + margin)
            ny0, ny1 = min(y0, ext[2] - margin), max(y1, ext[3] + margin)
            if (nx0, nx1, ny0, ny1) == (x0, x1, y0, y1):
                break
            ax.set_xlim(nx0, nx1)
            ax.set_ylim(ny0, ny1)
        pos = _place_labels(ax, ends, labels, origin=origin, fontsize=fontsize)
    return pos


class _PlacedLabels(list):
    """The Text of labels written next to arrow ends (a list), and how they were
    placed: when their axes are drawn at another size than the one they were
    placed for (a figure laid out or resized after the labels were written),
    they are placed again first, so that they neither collide nor leave the axes.
    (Zooming or panning keeps the size: the user's limits are left alone.)"""

    def __init__(self, texts, ax, ends, labels, origin, fontsize, center):
        super().__init__(texts)
        self._placement = (ax, ends, labels, origin, fontsize, center)
        self._size = _axes_size(ax)
        if texts:
            ax.add_artist(_refit_artist_class()(self))

    def refit(self):
        """Move the labels (and grow the limits) for the axes' current size."""
        ax, ends, labels, origin, fontsize, center = self._placement
        self._size = _axes_size(ax)
        for text, (x, y) in zip(self, _fit_limits(ax, ends, labels, origin, fontsize,
                                                  center)):
            text.set_position((x, y))

    def refit_if_resized(self):
        ax, _, labels, _, fontsize, _ = self._placement
        if _axes_size(ax) == self._size:
            return
        positions = np.array([text.get_position() for text in self], dtype=float)
        if _still_fit(ax, positions, labels, fontsize):
            self._size = _axes_size(ax)      # (placing them again would cost a draw's
        else:                                # worth of time for the same picture)
            self.refit()


def _still_fit(ax, positions, labels, fontsize):
    """Whether labels centred at ``positions`` lie inside the limits of ``ax`` and
    clear of each other at its current size."""
    x0, x1, y0, y1 = _label_extent(ax, positions, labels, fontsize)
    (left, right), (bottom, top) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    if x0 < left or x1 > right or y0 < bottom or y1 > top:
        return False
    dx_pt, dy_pt = data_per_point(ax)
    widths = _label_widths(labels, fontsize) * dx_pt
    heights = np.full(len(widths), _label_height(fontsize)) * dy_pt
    apart_x = np.abs(np.subtract.outer(positions[:, 0], positions[:, 0]))
    apart_y = np.abs(np.subtract.outer(positions[:, 1], positions[:, 1]))
    clash = ((apart_x < (widths[:, None] + widths[None, :]) / 2)
             & (apart_y < (heights[:, None] + heights[None, :]) / 2))
    np.fill_diagonal(clash, False)
    return not clash.any()


def _axes_size(ax):
    """The axes' size on the canvas, in points (rounded: a tolerance)."""
    width, height = (ax.get_position(original=True).size
                     * ax.figure.get_size_inches() * 72.0)
    return round(width, 1), round(height, 1)


@functools.lru_cache(maxsize=None)
def _refit_artist_class():
    """The artist class, built on first use (importing this module does not
    import matplotlib)."""
    from matplotlib.artist import Artist

    class RefitOnDraw(Artist):
        """An invisible artist drawn first in its axes: it places the labels again
        when the axes changed size since they were placed."""

        zorder = -1e9

        def __init__(self, labels):
            super().__init__()
            self._labels = labels
            self.set_in_layout(False)

        def draw(self, renderer):
            self._labels.refit_if_resized()

        def __reduce__(self):
            # a figure pickles with its artists: this class, made in a function,
            # is rebuilt by one that pickle can name
            return _empty_refit_artist, (), self.__getstate__()

    return RefitOnDraw


def _empty_refit_artist():
    cls = _refit_artist_class()
    return cls.__new__(cls)


def draw_labels(ax, ends, labels, *, origin=(0.0, 0.0), fontsize=9.0, text_kw=None,
                center=None, background=True):
    """Write ``labels`` next to arrow ends, growing the limits if they spill out.

    ``center`` (a point) keeps the limits symmetric about it when they grow;
    otherwise each side grows on its own. Returns the matplotlib Text as a
    :class:`_PlacedLabels` list.
    """
    ends = np.asarray(ends, dtype=float).reshape(-1, 2)
    if len(ends) == 0:
        return _PlacedLabels([], ax, ends, labels, origin, fontsize, center)
    pos = _fit_limits(ax, ends, labels, origin, fontsize, center)
    kw = {"fontsize": fontsize, "ha": "center", "va": "center", "zorder": 5}
    if background:
        kw["bbox"] = {"boxstyle": "round,pad=0.1", "facecolor": "white",
                      "edgecolor": "none", "alpha": 0.65}
    from matplotlib.text import Text

    kw = merge_style(kw, text_kw, Text)
    texts = [ax.text(x, y, plain_text(lab), **kw) for (x, y), lab in zip(pos, labels)]
    return _PlacedLabels(texts, ax, ends, labels, origin, fontsize, center)
