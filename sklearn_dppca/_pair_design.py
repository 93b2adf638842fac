"""The pair design of every statistic over pairs of rows: ``pairs="auto"``, one
public rule for every estimator and front end (a light module: the command line
reads it without the numerical stack)."""

#: ``pairs="auto"``: every pair in one block of up to this many rows (public).
AUTO_ALL_ROWS = 2_000
#: ``pairs="auto"``: partners per row of the design above :data:`AUTO_ALL_ROWS`
#: rows, or in more than one block.
AUTO_PARTNERS = 64


def design_pairs(pairs, sizes):
    """The pair design that ``pairs`` stands for on row blocks ``sizes`` (public).

    ``"auto"``: every pair in one block of up to :data:`AUTO_ALL_ROWS` rows,
    else :data:`AUTO_PARTNERS` partners per row (fewer in a block too small
    for them, even where a block is odd). The rule reads the block sizes alone,
    never the data. Why it needs neither ``p`` nor the budget: the design adds
    to a statistic's sampling variance about ``2 / m`` of the complete
    U-statistic's own (for a variance kernel on Gaussian data the terms'
    variance is four times the projection's: ``zeta_2 = 4 zeta_1``), 3% at
    ``m = 64`` whatever ``p``; the privacy noise only adds to the complete
    statistic's error, so the design's share is smaller still. Below
    :data:`AUTO_ALL_ROWS` rows every pair costs a few tens of milliseconds; above
    it, the complete statistics grow as ``n^2`` (100 CPU seconds at 200,000 rows)
    and the design as ``n``. See the user guide, "Scaling out".

    Any other value is returned as it is.
    """
    if pairs != "auto":
        return pairs
    if len(sizes) == 1 and sizes[0] <= AUTO_ALL_ROWS:
        return "all"
    partners = min(AUTO_PARTNERS, min(sizes) - 1)
    if partners % 2 == 1 and any(size % 2 for size in sizes):
        partners -= 1
    return max(partners, 1)
