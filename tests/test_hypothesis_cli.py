"""Property-based tests of the command line: ``main(argv)`` on generated input.

Each case runs ``sklearn_dppca._cli.main(argv)`` in a fresh directory, stdout and
stderr captured, on a generated argument list and generated small files:

* argument values, valid and invalid, for every option: ``--columns``, ``--eps``,
  ``--delta``, ``--components``, ``--scale``, ``--axes``, ``--bins``,
  ``--histogram``, ``--scree-method``, ``--scree-params``, ``--scree-kind``,
  ``--monotone``/``--no-monotone``, ``--synthetic-sampling``, ``--noise``,
  ``--budget-split``, ``--group``/``--groups``, ``--pairs``, ``--seed``, ``--out`` (extensions, missing
  directories), ``--dpi``, ``--json``, ``--from-json`` (saved releases, broken and
  tampered ones), unknown options, and conflicting combinations;
* CSV files with <= 25 rows and <= 4 numeric columns: header variants (unicode,
  ``$`` signs, quoted commas, numbers, spaces), an empty file, a header only,
  only text columns, NaN / inf / empty cells, huge and tiny values, a far offset with
  a tiny spread, one row, duplicated rows, constant columns, a group column with 1..4
  labels, text and boolean columns, ragged rows, undecodable bytes.

The rules the oracle follows: the variables are the ``--columns`` (every column but
``--group`` without it); every cell of a variable must be a finite number (``true``
and ``false`` count as 1 and 0), otherwise the run is an error; ``--group`` needs
``--groups`` and a row with another label is an error.

Property: the exit status is 0 or 2 and nothing prints a traceback. On 2, stderr is
argparse's usage message ending in ``...: error: ...`` (usage errors), or exactly one
``error: ...`` line, last, after nothing but ``warning: ...`` lines; the error names
the invalid option when the case has exactly one; it never quotes a cell of the
file (the generated cells carry a marker); nothing is written; a valid CSV file
with valid options fails only when ``n`` is too small for the scree method or the
pair design, and a damaged file whose damage reaches a variable or the labels always
fails. A saved release always draws; a damaged one only when :func:`load_release`
accepts it. On 0, stderr holds only ``warning:`` lines, the figure exists in the
requested format, and the JSON exists, parses without NaN / Infinity tokens, has
the declared variables as its feature names and spends at most the requested
eps. No numpy RuntimeWarning surfaces (as a ``warning: ... encountered in ...``
line).

Cost: most cases fail during validation (a few milliseconds). The strategies are
biased so that about 1% of the cases are complete runs (fit, figure, JSON; ~2.5 s
each, the overview figure dominates); ``--hypothesis-show-statistics`` reports their
share ("outcome: exit 0"). 1000 cases nominally (``CLI_EXAMPLES``): 50 under the
default ``ci`` profile, all of them under ``HYPOTHESIS_PROFILE=thorough``; see
tests/_hypothesis_support.py.
"""

import contextlib
import csv
import io
import json
import os
import re
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import event, given, note
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

from sklearn_dppca import DPPCA, DPScree, export_release, load_release
from sklearn_dppca._cli import main

from ._hypothesis_support import (
    integer as _int,
    pick as _pick,
    profile_settings as _settings,
)


CLI_EXAMPLES = 1000
HAS_SCALE = "scale" in DPPCA().get_params()

# --------------------------------------------------------------------- CSV files

HEADERS = {
    "plain": ["a", "b", "c", "d"],
    "unicode": ["température", "重量", "Größe", "naïve café"],
    "dollars": ["price_$_usd_$", "cost ($)", "$x_1$", "a $ b $ c"],
    "quoted": ['"x, y"', '"z ""q"""', "w", "v"],
    "numbers": ["1", "2.5", "-3", "1e3"],
    "spaces": [" a", "b ", "c c", "d"],
    # a comma inside a name needs CSV quotes (unquoted, it would split the column)
    "long": ['"' + "a fairly long column name, number one " * 2 + '"', "b", "c", "d"],
}
GROUP_LABELS = {
    "letters": ["a", "b", "c", "d"],
    "unicode": ["nörd", "süd", "東", "west"],
    "numeric": ["1", "2", "10", "-1"],
    "dollars": ["$^$", "cost $", "x", "y"],
}
#: Planted in every cell that is not a number (the text column, a damaged cell) and
#: in a label outside --groups: no error message may contain it.
MARKER = "Qz7secret"


def _number(value):
    return repr(float(value))


def _values(rng, n, p, style):
    if style == "gauss":
        return rng.standard_normal((n, p)) * 10.0 ** rng.integers(-2, 3, p)
    if style == "integers":
        return rng.integers(-3, 4, (n, p)).astype(float)
    if style == "far offset":
        return 1e12 + rng.standard_normal((n, p)) * 1e-3
    if style == "extreme offset":      # 1e150 and a few float steps around it
        return 1e150 + np.spacing(1e150) * rng.integers(-50, 50, (n, p))
    if style == "tiny":
        return rng.standard_normal((n, p)) * 1e-300
    if style == "huge":                 # beyond the data domain 2**500: an error
        return rng.standard_normal((n, p)) * 1e300
    if style == "constant column":
        X = rng.standard_normal((n, p))
        X[:, 0] = 7.0
        return X
    if style == "duplicated rows":
        X = rng.standard_normal((n, p))
        X[n // 2:] = X[: n - n // 2]
        return X
    X = np.full((n, p), 2.5)             # "identical rows"
    return X


def _header_name(cell):
    """The column name the command line reads from a header cell."""
    return next(csv.reader([cell]))[0].strip()


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


@st.composite
def csv_files(draw, valid=True):
    """A generated CSV file and what the command line should make of it: a dict
    with ``content`` (text or bytes), ``kind``, ``names`` (the header's column
    names, None when the file has no usable header), ``generated`` (names of the
    generated numeric columns), ``numeric`` (every column whose cells are all
    numbers), ``group`` and ``labels`` (the group column and its labels, or None),
    ``damaged`` (the column holding a damaged cell, or None) and ``n``."""
    rng = np.random.default_rng(_int(draw, 0, 2**32 - 1))
    if not valid:
        kind = _pick(draw, ["nan", "empty", "header only", "text only", "one row",
                            "ragged", "binary", "semicolons", "inf", "empty cell",
                            "text cell", "missing label", "huge", "blank"])
    else:
        kind = "numeric"
    n = _pick(draw, [12, 25, 5, 4, 3, 2, 8])
    p = _pick(draw, [3, 2, 4, 1])
    header = list(HEADERS[_pick(draw, ["plain", "plain", "unicode", "dollars",
                                       "quoted", "numbers", "spaces", "long"])][:p])
    style = _pick(draw, ["gauss", "gauss", "integers", "far offset", "extreme offset",
                         "tiny", "constant column", "duplicated rows", "identical rows"]
                  + ([] if valid else ["huge"]))
    if kind == "huge":
        style = "huge"
    X = _values(rng, n, p, style)
    cells = [[_number(v) for v in row] for row in X]
    extra = _pick(draw, ["none", "none", "group", "group", "text", "bool", "text+group"])
    spec = {"kind": kind, "n": n, "group": None, "labels": None, "damaged": None,
            "generated": [_header_name(cell) for cell in header],
            "huge": style == "huge"}
    numeric = list(spec["generated"])
    if "group" in extra:
        labels = GROUP_LABELS[_pick(draw, ["letters", "unicode", "numeric", "dollars"])]
        labels = labels[: _int(draw, 1, 4)]
        spec["group"], spec["labels"] = "site", labels
        header.append("site")
        for row, label in zip(cells, rng.choice(labels, n)):
            row.append(str(label))
        if all(_is_number(label) for label in labels):
            numeric.append("site")
    if "text" in extra:
        header.append("name")
        for i, row in enumerate(cells):
            row.append(f"{MARKER} {i}")
    if extra == "bool":
        header.append("flag")
        numeric.append("flag")
        for i, row in enumerate(cells):
            row.append("True" if i % 3 else "False")
    spec["numeric"] = numeric
    spec["names"] = [_header_name(cell) for cell in header]

    def done(content, names=None):
        spec["content"] = content
        if names is not None:
            spec["names"] = names
        return spec

    if kind == "empty":
        return done("", [])
    if kind == "header only":
        return done(",".join(header) + "\n")
    if kind == "text only":
        return done(f"a,b\n{MARKER},y\nz,{MARKER}\n", [])
    if kind == "binary":
        return done(b"\xff\xfe\x00a,\x81\n\x00\xc3\x28,1\n", [])
    if kind == "semicolons":
        return done("a;b\n1;2\n3;4\n", [])
    if kind == "blank":
        return done("\n\n\n", [])
    if kind == "one row":
        cells = cells[:1]
    if kind in ("nan", "inf", "empty cell", "text cell"):
        bad = {"nan": "nan", "inf": _pick(draw, ["inf", "-inf", "1e999"]),
               "empty cell": "", "text cell": MARKER}[kind]
        column = _int(draw, 0, p - 1)
        cells[_int(draw, 0, n - 1)][column] = bad
        spec["damaged"] = spec["generated"][column]
    if kind == "ragged":
        cells[_int(draw, 0, n - 1)].append("1.0")
    if kind == "missing label" and spec["group"] is not None:
        cells[0][header.index("site")] = ""
        spec["damaged"] = "site"
    text = ",".join(header) + "\n" + "".join(",".join(row) + "\n" for row in cells)
    if _int(draw, 0, 9) == 0:
        text = "\ufeff" + text                      # a byte order mark
    return done(text)


def _csv_list(items):
    """``items`` as one CSV line (quoted where needed), the form --columns reads."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="").writerow(items)
    return buffer.getvalue()


# ------------------------------------------------------------------ arguments

VALID = {
    "--eps": ["1", "0.5", "2", "1e-3", "10", " 3 "],
    # (a Gaussian part's delta is at least 1e-270: gdp_mu; 1e-250 keeps every split)
    "--delta": ["1e-5", "1e-6", "0.01", "1e-250"],
    "--bins": ["20", "3", "1", "4,6", "20,20", "1,2"],
    "--histogram": ["additive", "sparse"],
    "--scree-method": ["clipped", "huber", "pmwm"],
    "--noise": ["analytic", "classical"],
    "--budget-split": ["loading=0.4,scree=0.2,score=0.4", "loading=0.5,scree=0.5",
                       "loading=0.3, scree=0.3, score=0.3", "scree=0.1,loading=0.1"],
    "--pairs": ["all", "ALL", "2", "4", "3"],
    "--seed": ["0", "1", "12345"],
    "--scree-kind": ["auto", "both", "pve", "variance"],
    "--synthetic-sampling": ["uniform", "center"],
}
# tuning values of the clipped scree (the default method); other methods refuse them
CLIPPED_SCREE_PARAMS = ["quantile_level=0.9", "quantile_share=0.3, quantile_level=0.95",
                        "clip=component", "clip=norm,C=auto"]
# with --scale the split needs a positive scale part
SCALED_SPLITS = ["loading=0.35,scree=0.15,scale=0.2,score=0.3",
                 "scale=0.3,loading=0.3,scree=0.3", "loading=0.2,scree=0.2,scale=0.1"]
# option -> (invalid values, whether argparse itself rejects them)
INVALID = {
    "--columns": (["", "a,,b", "a,a", " , "], False),
    "--eps": (["0", "-1", "nan", "inf", "abc", "", "1,5", "1e999", "0x10"], False),
    "--delta": (["0", "1", "2", "-1e-5", "nan", "x", ""], False),
    "--components": (["0", "-1", "2.5", "x", ""], False),
    "--axes": (["1,1", "0,1", "1", "1,2,3", "a,b", "1,,2", "", " , "], False),
    "--bins": (["0", "1001", "2,3,4", "x", "", "3,0", "1.5"], False),
    "--histogram": (["bogus", "Additive"], True),
    "--scree-method": (["bogus", ""], True),
    "--noise": (["laplace"], True),
    "--budget-split": (["scree=0.5", "loading=0.7,scree=0.5", "bogus=1",
                        "loading=x,scree=0.2", "loading=0.4,loading=0.2,scree=0.1",
                        "loading=nan,scree=0.2", "", "loading", "loading=0,scree=0.5",
                        "loading=0.5,scree=0.5,score=-0.1"], False),
    "--groups": (["a,,b", "a,b,a", ""], False),
    "--pairs": (["0", "-3", "x", "1.5", ""], False),
    "--seed": (["-1", "x", "1.5", ""], False),
    "--out": (["report.gif", "report", "report.jpeg", "missing/dir/report.png", "."],
              False),
    "--dpi": (["5", "x", "-100", ""], False),
    "--json": (["missing/dir/out.json", "."], False),
    "--scree-params": (["bogus=1", "quantile_level=2", "quantile_level", "=0.5", "",
                        "quantile_level=0.9,quantile_level=0.8", "clip=maybe"], False),
    "--scree-kind": (["bogus", "PVE"], True),
    "--synthetic-sampling": (["bogus", "centre"], True),
}


# The only errors a valid CSV file with valid options may end in: huber and pmwm
# pair the rows (n >= 4), an odd number of partners needs an even n.
VALID_MODE_ERRORS = r"needs at least 4 rows|pairs=\d+ is odd"


def _valid_fit_options(draw, p):
    """A valid option list for a fit on ``p`` variables (and what it asks)."""
    args = []
    requested = {"eps": 1.0}
    components = None
    if p >= 2 and _int(draw, 0, 2) > 0:
        components = _int(draw, 2, p)
    elif p == 1 or _int(draw, 0, 3) == 0:
        components = _int(draw, 1, p)
    if components is not None:
        args += ["--components", str(components)]
    elif _int(draw, 0, 4) == 0:   # k from the private PVE: the axes stay 1 and 2
        args += ["--components", _pick(draw, ["0.5", "0.8", "0.99"])]
    k = 2 if components is None else components
    if k >= 2 and _int(draw, 0, 3) == 0:
        first = _int(draw, 1, k)
        second = 1 + (first + _int(draw, 0, k - 2)) % k
        args += ["--axes", f"{first},{second}"]
    scale = HAS_SCALE and _int(draw, 0, 4) == 0
    if scale:
        args.append("--scale")
    for option in ("--eps", "--delta", "--bins", "--histogram", "--scree-method",
                   "--noise", "--budget-split", "--pairs", "--scree-kind",
                   "--synthetic-sampling"):
        if _int(draw, 0, 2) == 0:
            choices = SCALED_SPLITS if scale and option == "--budget-split" else \
                VALID[option]
            value = _pick(draw, choices)
            args += [option, value]
            if option == "--eps":
                requested["eps"] = float(value)
    if "--scree-method" not in args and _int(draw, 0, 3) == 0:
        args += ["--scree-params", _pick(draw, CLIPPED_SCREE_PARAMS)]
    if _int(draw, 0, 3) == 0:
        args.append(_pick(draw, ["--monotone", "--no-monotone"]))
    return args, requested


def _remove(args, *options):
    """Drop ``--option value`` and ``--option=value`` items from ``args``."""
    for option in options:
        while option in args:
            i = args.index(option)
            del args[i:i + 2]
        args[:] = [arg for arg in args if not arg.startswith(option + "=")]


def _declared_variables(draw, spec, grouped):
    """(--columns list or None, the variables the command line will use)."""
    others = [name for name in spec["names"] if not (grouped and name == spec["group"])]
    candidates = [name for name in spec["numeric"] if name in others]
    needed = any(name not in spec["numeric"] for name in others)
    if not candidates or not (needed or _int(draw, 0, 2) == 0):
        return None, others
    size = _int(draw, 1, len(candidates))
    pool = list(candidates)
    declared = [pool.pop(_int(draw, 0, len(pool) - 1)) for _ in range(size)]
    return declared, declared


def _expected_damage(spec, variables, grouped):
    """Whether the file's damage must end the run in an error."""
    kind = spec["kind"]
    if spec["huge"] and any(name in spec["generated"] for name in variables):
        return True
    if kind in ("nan", "inf", "empty cell", "text cell"):
        return spec["damaged"] in variables
    if kind == "missing label":
        return spec["damaged"] is not None and (grouped or "site" in variables)
    return kind not in ("numeric", "huge")


# Complete runs cost 1-3 s: about 1% of the cases (2 "valid", 1 "release" in 240),
# placed away from the ends of the list (hypothesis favours the first value).
MODES = (["bad option"] * 50 + ["bad csv"] * 10 + ["conflict"] * 10 + ["bad release"] * 5
         + ["bad option"] * 10 + ["valid"] + ["bad option"] * 40 + ["release"]
         + ["bad option"] * 40 + ["valid"] + ["bad csv"] * 20 + ["conflict"] * 20
         + ["bad release"] * 10 + ["bad option"] * 22)


@st.composite
def cli_cases(draw):
    """(files, argv, expectation) of one run."""
    mode = _pick(draw, MODES)
    files = {}
    expect = {"mode": mode, "names": None, "eps": 1.0, "json": "released.json",
              "out": "report.png", "from_json": False, "variables": None,
              "damage_fails": False}
    args = []

    if mode in ("release", "bad release"):
        release = _pick(draw, ["dppca", "dppca groups", "one component", "dpscree"])
        expect["from_json"] = True
        expect["json"] = None              # --from-json writes JSON only with --json
        args += ["--from-json", "saved.json"]
        if mode == "release":
            files["saved.json"] = ("release", release)
            if _int(draw, 0, 1) == 0:
                args += ["--json", "copy.json"]
                expect["json"] = "copy.json"
        else:
            damage = _pick(draw, ["empty", "not json", "list", "empty object",
                                  "other format", "newer format", "NaN token",
                                  "missing key", "wrong type", "inconsistent",
                                  "truncated", "undecodable", "directory", "missing"])
            files["saved.json"] = ("damaged", release, damage,
                                   _int(draw, 0, 2**16))
            if damage == "directory":
                files["saved.json"] = ("directory",)
            elif damage == "missing":
                del files["saved.json"]
        out = _pick(draw, ["report.png", "report.svg", "report.pdf"])
        args += ["--out", out, "--dpi", "10"]
        expect["out"] = out
        if _int(draw, 0, 9) == 0:
            args.append("--quiet")
        return files, args, expect

    spec = draw(csv_files(valid=mode != "bad csv"))
    csv_name = _pick(draw, ["data.csv", "données.csv", "my data.txt"])
    files[csv_name] = ("text", spec["content"])
    use_csv = True
    args.append(csv_name)
    group = spec["group"]
    grouped = group is not None and (mode == "bad csv" or _int(draw, 0, 3) > 0)
    declared, variables = _declared_variables(draw, spec, grouped)
    if declared is not None:
        args.append(f"--columns={_csv_list(declared)}")
    expect["variables"] = variables
    expect["damage_fails"] = _expected_damage(spec, variables, grouped)
    options, requested = _valid_fit_options(draw, max(len(variables), 1))
    args += options
    expect["eps"] = requested["eps"]
    if grouped:
        labels = list(spec["labels"])
        if _int(draw, 0, 2) == 0:           # a declared label need not occur
            labels.append("never seen")
        if _int(draw, 0, 1) == 0:
            labels.reverse()
        args += ["--group", group, f"--groups={_csv_list(labels)}"]
    # a fit is always seeded, so that a failure reproduces
    args += ["--seed", _pick(draw, VALID["--seed"])]
    out = _pick(draw, ["report.png", "report.png", "report.svg", "report.pdf",
                       "résumé.PNG"])
    args += ["--out", out, "--dpi", "10"]
    expect["out"] = out
    if _int(draw, 0, 3) == 0:
        args += ["--json", "release out.json"]
        expect["json"] = "release out.json"
    if _int(draw, 0, 5) == 0:
        args.append("--nonprivate-reference")
    if _int(draw, 0, 5) == 0:
        args.append("--quiet")

    if mode == "bad option":
        # Drop the CSV (and its data options) BEFORE injecting the bad option, so
        # that the clean-up can never remove the bad option itself (a bare --group).
        if _int(draw, 0, 4) == 0:      # without a CSV: the built-in data is not read
            args.remove(csv_name)
            use_csv = False
            _remove(args, "--group", "--groups", "--columns")
        option = _pick(draw, list(INVALID) + ["unknown", "no value"])
        if option == "unknown":
            args.append(_pick(draw, ["--bogus", "--eps=1=2x", "-x", "--out-dir"]))
            expect["names"] = None
        elif option == "no value":
            args.append(_pick(draw, ["--eps", "--bins", "--group", "--out", "--columns"]))
        else:
            values, _ = INVALID[option]
            args.append(f"{option}={_pick(draw, values)}")
            expect["names"] = option
    elif mode == "conflict":
        conflict = _pick(draw, ["components > p", "axes > components", "no such group",
                                "groups without group", "group without groups",
                                "group without csv", "outside groups", "no such column",
                                "text column declared", "group column declared",
                                "from-json and fit", "json is a directory"])
        expect["conflict"] = conflict
        columns = len(variables)
        if conflict == "components > p":
            args += ["--components", str(columns + 1 + _int(draw, 0, 3))]
            expect["names"] = "--components"
        elif conflict == "axes > components":
            args += ["--components", "2", "--axes", "1,3"]
            expect["names"] = "--axes" if columns >= 2 else "--components"
        elif conflict == "no such group":
            _remove(args, "--group", "--groups")
            args += ["--group", "nowhere", "--groups", "a,b"]
            expect["names"] = "--group"
        elif conflict == "groups without group":
            _remove(args, "--group", "--groups")
            args += ["--groups", "a,b"]
            expect["names"] = "--groups"
        elif conflict == "group without groups":
            _remove(args, "--group", "--groups")
            args += ["--group", group or "site"]
            expect["names"] = "--group needs --groups"
        elif conflict == "group without csv":
            args.remove(csv_name)
            use_csv = False
            _remove(args, "--columns")
            args += ["--group", "site", "--groups", "a"]
            expect["names"] = "--group"
        elif conflict == "outside groups" and grouped:
            _remove(args, "--groups")
            args += ["--groups=zzz"]
            expect["names"] = "not one of --groups"
        elif conflict == "text column declared" and "name" in spec["names"]:
            _remove(args, "--columns")
            args.append("--columns=name")
            expect["names"] = "declared by --columns"
        elif conflict == "group column declared" and grouped:
            _remove(args, "--columns")
            args.append(f"--columns={group}")
            expect["names"] = "--columns and --group"
        elif conflict == "from-json and fit":
            args += ["--from-json", "whatever.json"]
            expect["names"] = "--from-json"
        elif conflict == "json is a directory":
            args += ["--json", "."]
            expect["names"] = "--json"
        else:                             # or when the file has no such column
            _remove(args, "--columns")
            args.append("--columns=nowhere")
            expect["names"] = "--columns"
    expect["use_csv"] = use_csv
    # without a CSV and without an error the built-in data (5000 rows) would be fit:
    # never generated (too slow for a property test)
    if not use_csv and mode in ("valid", "bad csv"):
        args.insert(0, csv_name)
    return files, args, expect


# ------------------------------------------------------------------------ running

@pytest.fixture(scope="module")
def releases_dir(tmp_path_factory):
    """Valid release files made by the estimators (no CLI), read by the cases."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    y = np.resize(np.array(["a", "b", "c"], dtype=object), 30)
    base = tmp_path_factory.mktemp("releases")
    made = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        made["dppca"] = export_release(DPPCA(random_state=0).fit(X), allow_seeded=True)
        made["dppca groups"] = export_release(
            DPPCA(n_components=3, groups=["a", "b", "c"], compute_nonprivate=True,
                  bins=(5, 4), random_state=0).fit(X, y), include_nonprivate=True, allow_seeded=True)
        made["one component"] = export_release(DPPCA(n_components=1,
                                                     random_state=0).fit(X), allow_seeded=True)
        made["dpscree"] = export_release(DPScree(2, random_state=0).fit(X), allow_seeded=True)
    for name, release in made.items():
        (base / f"{name}.json").write_text(json.dumps(release), encoding="utf-8")
    return base


def _damaged(text, damage, seed):
    rng = np.random.default_rng(seed)
    release = json.loads(text)
    if damage == "empty":
        return ""
    if damage == "not json":
        return "this is not JSON {"
    if damage == "list":
        return "[1, 2, 3]"
    if damage == "empty object":
        return "{}"
    if damage == "other format":
        release["format"] = "something-else/1"
    elif damage == "newer format":
        release["format"] = "sklearn-dppca-release/2"
    elif damage == "NaN token":
        return text.replace(str(release["components"][0][0]), "NaN", 1)
    elif damage == "missing key":
        keys = ["components", "n_features", "feature_names", "privacy_spent",
                "n_samples", "n_components", "privacy_ledger"]
        del release[keys[rng.integers(len(keys))]]
    elif damage == "wrong type":
        key = sorted(release)[rng.integers(len(release))]
        release[key] = [None, 5, "x", [], {}, [[1.0]], True, -1][rng.integers(8)]
    elif damage == "inconsistent":
        k = release["n_components"]
        choice = rng.integers(6)
        if choice == 0:
            release["axes"] = [0, k + 2]
        elif choice == 1 and release.get("score_histogram") is not None:
            release["score_histogram"] = [row[:-1] for row in release["score_histogram"]]
        elif choice == 2 and release.get("synthetic_scores"):
            release["synthetic_scores"] = [row + [0.0] for row in
                                           release["synthetic_scores"]]
        elif choice == 3 and release.get("frame") is not None:
            release["frame"]["extent"] = release["frame"]["extent"][:3]
        elif choice == 4:
            release["explained_variance"] = [1.0] * (k + 1)
        else:
            release["feature_names"] = release["feature_names"][:-1]
    elif damage == "truncated":
        return text[: len(text) // 2]
    elif damage == "undecodable":
        return b"\xff\xfe\x00\x81" + text.encode("utf-16")[:50]
    return json.dumps(release)


def _write_files(directory, files, releases_dir):
    for name, spec in files.items():
        path = directory / name
        if spec[0] == "text":
            content = spec[1]
        elif spec[0] == "directory":
            path.mkdir()
            continue
        else:
            text = (releases_dir / f"{spec[1]}.json").read_text(encoding="utf-8")
            content = text if spec[0] == "release" else _damaged(text, spec[2], spec[3])
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def _run_main(args, cwd):
    out, err = io.StringIO(), io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(previous)
        plt.close("all")
    return code, out.getvalue(), err.getvalue()


def _loads(path):
    """Whether :func:`load_release` accepts the file."""
    try:
        load_release(path)
    except (ValueError, TypeError, OSError, UnicodeDecodeError):
        return False
    return True


def _reject_constant(name):
    raise AssertionError(f"the JSON holds the non-standard token {name}")


_MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".pdf": b"%PDF", ".svg": b"<?xml"}
_counter = {"n": 0}


@pytest.fixture(scope="module")
def work_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("cli")


@_settings(CLI_EXAMPLES)
@given(case=cli_cases())
def test_cli_property(case, work_dir, releases_dir):
    files, args, expect = case
    _counter["n"] += 1
    cwd = work_dir / f"case{_counter['n']:05d}"
    cwd.mkdir()
    _write_files(cwd, files, releases_dir)
    before = sorted(path.name for path in cwd.iterdir())
    note(f"argv: {args}")
    # one BLAS thread (see tests/test_cli.py: the many small products of the scree
    # are much slower with competing OpenBLAS threads on 2 cores)
    with threadpool_limits(limits=1, user_api="blas"):
        code, out, err = _run_main(args, cwd)
    note(f"exit {code}\nstdout:\n{out}\nstderr:\n{err}")
    event(f"outcome: exit {code}")
    after = sorted(path.name for path in cwd.iterdir())

    assert code in (0, 2), f"exit status {code}"
    if expect["mode"] == "release":                 # an untouched release always draws
        assert code == 0, err
    assert "Traceback" not in out + err
    assert MARKER not in out + err, "a cell of the file was quoted"
    lines = err.splitlines()
    assert not any(re.search(r"encountered in", line) for line in lines), \
        "a numpy RuntimeWarning reached the user"
    if expect["damage_fails"]:
        assert code == 2, f"exit {code} despite a damaged variable or label"
    if code == 2:
        assert lines, "exit 2 without a message"
        if err.startswith("usage:"):          # argparse's own usage errors
            event("exit 2: usage error")
            assert re.match(r"^\S.*: error: ", lines[-1]), err
        else:
            errors = [line for line in lines if line.startswith("error: ")]
            assert len(errors) == 1 and lines[-1] == errors[0], err
            assert all(line.startswith("warning: ") for line in lines[:-1]), err
            if expect["names"] is not None:
                assert expect["names"] in lines[-1], (expect["names"], err)
            if expect["mode"] == "valid" or (expect["mode"] == "bad csv"
                                             and not expect["damage_fails"]):
                # valid files and options: a report, unless the public n is too
                # small for the chosen method or design
                assert re.search(VALID_MODE_ERRORS, lines[-1]), err
        assert after == before, f"exit 2 but files were written: {after}"
        return
    # a complete run; a damaged release may only draw if load_release (whose own
    # checks tests/test_release.py pins entry by entry) accepts it
    assert expect["mode"] in ("valid", "release", "bad csv") or (
        expect["mode"] == "bad release" and _loads(cwd / "saved.json")), \
        f"exit 0 despite {expect['mode']} ({expect.get('names')})"
    assert all(line.startswith("warning: ") for line in lines), err
    figure = cwd / expect["out"]
    magic = _MAGIC[os.path.splitext(expect["out"])[1].lower()]
    assert figure.read_bytes()[: len(magic)] == magic
    if expect["json"] is not None:
        text = (cwd / expect["json"]).read_text(encoding="utf-8")
        release = json.loads(text, parse_constant=_reject_constant)
        if not expect["from_json"]:
            eps = release["privacy_spent"]["eps"]
            assert 0 < eps <= expect["eps"] * (1 + 1e-12), (eps, expect["eps"])
            assert release["feature_names"] == expect["variables"], release["feature_names"]
            assert "dropped_columns" not in release
