"""The pair design of every statistic over pairs of rows: ``pairs="auto"``, one
public rule for every estimator and front end (a light module: the command line
reads it without the numerical stack)."""

#: ``pairs="auto"``: every pair in one block of up to this many rows (public).
AUTO_ALL_ROWS = 2_000
#: ``pairs="auto"``: partners per row of the design above :data:`AUTO_ALL_ROWS`
#: rows, or in more than one block, at ``eps`` up to 1.
AUTO_PARTNERS = 64
#: ``pairs="auto"``: the most partners per row, at ``eps`` of ``sqrt(8)`` and more.
AUTO_MAX_PARTNERS = 512


def _auto_partners(eps=None):
    """The partners per row of ``pairs="auto"``'s design at the grant ``eps``
    (public): :data:`AUTO_PARTNERS` times ``eps^2``, from 1 to 8 times (an even
    number), :data:`AUTO_PARTNERS` without a grant (a non-private statistic).

    The privacy noise of a pair statistic falls as ``1 / (n eps)`` and the
    design's own sampling error as ``1 / sqrt(n m)``: holding their ratio at
    its value at eps 1 for a given ``n`` takes ``m`` growing as ``eps^2``.
    Capped, so that the work stays linear in ``n`` (at most eight times the
    Kendall pass of eps 1): on 20,000 x 10 at eps 4, 64 partners gave the
    directions 1.18 times all pairs' error and 512 gave 1.05 (20 seeds); the
    fit takes twice as long. ``n`` would ask for more as it grows (the ratio
    goes as ``n eps^2 / m``: 1.22 times 2,048 partners' error at 200,000 rows
    and eps 1 with 64), which a linear design cannot follow.
    """
    if eps is None:
        return AUTO_PARTNERS
    growth = min(max(float(eps)**2, 1.0), AUTO_MAX_PARTNERS / AUTO_PARTNERS)
    return 2 * int(AUTO_PARTNERS * growth // 2)


def design_pairs(pairs, sizes, eps=None):
    """The pair design that ``pairs`` stands for on row blocks ``sizes`` (public).

    ``"auto"``: every pair in one block of up to :data:`AUTO_ALL_ROWS` rows,
    else :func:`_auto_partners` partners per row at the grant ``eps`` (64 up to
    eps 1, 512 from eps 2.83; fewer in a block too small for them, even where
    a block is odd). The rule reads the block sizes and the grant alone, never
    the data. Below :data:`AUTO_ALL_ROWS` rows every pair costs a few tens of
    milliseconds; above, the complete statistics grow as ``n^2`` (100 CPU
    seconds at 200,000 rows) and the design as ``n``. The design adds to a
    statistic's sampling variance about ``c / m`` of the complete
    U-statistic's own (``c = 2`` for a variance on Gaussian data), whatever
    ``n`` and ``p``; the partners grow with the budget, whose noise it is
    weighed against (see :func:`_auto_partners` and the user guide, "Large
    data sets").

    Any other value is returned as it is.
    """
    if pairs != "auto":
        return pairs
    if len(sizes) == 1 and sizes[0] <= AUTO_ALL_ROWS:
        return "all"
    partners = min(_auto_partners(eps), min(sizes) - 1)
    if partners % 2 == 1 and any(size % 2 for size in sizes):
        partners -= 1
    return max(partners, 1)
