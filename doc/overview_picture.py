"""The README's picture: ``doc/_static/overview.png``, drawn by the command line.

``python doc/overview_picture.py`` runs the command (``COMMAND`` below, the
built-in data with a fixed seed so that the picture is reproducible) and writes
the picture and, beside it, ``overview.json``: the command and a fingerprint of
what the figure shows (the ledger's steps and mechanisms, the panels' titles,
axis labels and legends, the variable labels and the colours of the legends).
``tests/test_docs.py`` draws the figure again and compares fingerprints: a
change of the report's look or of its ledger makes the test fail until the
picture is regenerated. Numbers are left out of the fingerprint (they would tie
it to the last digit of the floating point on one machine).
"""

import json
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PICTURE = HERE / "_static" / "overview.png"
FINGERPRINT = HERE / "_static" / "overview.json"

#: The command line that draws the picture (after ``python -m sklearn_dppca``);
#: the seed makes it reproducible (a seeded release is for pictures and tests only).
COMMAND = ["--seed", "0", "--dpi", "100"]

# a decimal number, a percentage or a number in scientific notation
_NUMBER = re.compile(r"[-\u2212]?\d+(?:\.\d+)?(?:e[-+]?\d+)?%?")


def _words(text):
    """``text`` with its decimal numbers replaced by ``#`` (labels such as
    ``V12`` or ``G3`` keep their digits: a number is not part of a word)."""
    return _NUMBER.sub(lambda m: "#" if not _in_word(m) else m.group(0), text)


def _in_word(match):
    start = match.start()
    return start > 0 and (match.string[start - 1].isalpha()
                          or match.string[start - 1] == "_")


def _hex(color):
    from matplotlib.colors import to_hex

    return to_hex(color, keep_alpha=False)


def _legend(legend):
    if legend is None:
        return []
    # (legend_handles is matplotlib 3.7's name, legendHandles the older one)
    handles = getattr(legend, "legend_handles", None) or legend.legendHandles
    return [[_words(text.get_text()), _handle_colour(handle)]
            for handle, text in zip(handles, legend.get_texts())]


def _handle_colour(handle):
    """The colour of a legend entry (a line's, or a patch's or a collection's
    face), as hex; None if it has none."""
    for getter in ("get_color", "get_facecolor"):
        try:
            value = getattr(handle, getter)()
        except (AttributeError, TypeError):
            continue
        if not isinstance(value, str) and len(value) and hasattr(value[0], "__len__"):
            value = value[0]           # a collection: its first colour
        return _hex(value) if len(value) else None
    return None


def figure_fingerprint(fig):
    """What the overview figure shows, without its numbers."""
    # which variables get a label depends on the noise (those near the origin
    # stay unlabelled): the variables drawn are recorded instead of their labels
    labels = {id(text) for display in fig.displays_.values()
              for text in getattr(display, "texts_", None) or []}
    variables = {id(display.ax_): list(map(str, display.variables_))
                 for display in fig.displays_.values() if hasattr(display, "variables_")}
    panels = []
    for ax in fig.axes:
        panels.append({
            "title": _words(ax.get_title()),
            "xlabel": _words(ax.get_xlabel()),
            "ylabel": _words(ax.get_ylabel()),
            "legend": _legend(ax.get_legend()),
            "texts": sorted(_words(text.get_text()) for text in ax.texts
                            if text.get_text() and id(text) not in labels),
            "variables": variables.get(id(ax), []),
        })
    size = [float(x) for x in fig.get_size_inches()]
    return {"suptitle": _words(fig.get_suptitle()), "size_inches": size,
            "panels": panels}


def fingerprint(workdir):
    """Run the command in ``workdir`` and return its fingerprint (the figure's,
    and the ledger's steps and mechanisms from the written release)."""
    from sklearn_dppca import _cli, display

    drawn = []
    draw = display.plot_overview

    def recording(*args, **kwargs):
        drawn.append(draw(*args, **kwargs))
        return drawn[-1]

    out, release = Path(workdir) / "overview.png", Path(workdir) / "released.json"
    display.plot_overview = recording
    try:
        status = _cli.main([*COMMAND, "--out", str(out), "--json", str(release),
                            "--quiet"])
    finally:
        display.plot_overview = draw
    if status != 0:
        raise RuntimeError(f"the command {COMMAND} failed with status {status}")
    ledger = json.loads(release.read_text(encoding="utf-8"))["privacy_ledger"]
    return {"command": ["python", "-m", "sklearn_dppca", *COMMAND],
            "ledger": [[entry["step"], entry["mechanism"]] for entry in ledger],
            "figure": figure_fingerprint(drawn[0])}, out


def main():
    """Draw the picture and write its fingerprint beside it."""
    import shutil

    with tempfile.TemporaryDirectory() as workdir:
        printed, out = fingerprint(workdir)
        shutil.copyfile(out, PICTURE)
    FINGERPRINT.write_text(json.dumps(printed, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {PICTURE} and {FINGERPRINT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
