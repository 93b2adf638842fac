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
    never the data. Below :data:`AUTO_ALL_ROWS` rows every pair costs a few
    tens of milliseconds; above, the complete statistics grow as ``n^2`` (100
    CPU seconds at 200,000 rows) and the design as ``n``. The design adds to a
    statistic's sampling variance about ``c / m`` of the complete
    U-statistic's own (``c = 2`` for a variance on Gaussian data), whatever
    ``n`` and ``p``; the rule does not weigh it against the budget's noise, so
    at large ``n eps`` the directions' error shows it (1.16 times all pairs' at
    20,000 rows and eps 4, 1.04 at eps 1). See the user guide, "Large data
    sets".

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
