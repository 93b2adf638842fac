"""The data of the front ends (the command line and the explorer app): the built-in
``gau`` and ``adult`` data and a CSV file read by declaration.

What is public is declared, never read off the data: the variables are the
declared columns (by default every column but the group column), and a cell of a
variable that is not a finite number is an error, never a reason to drop a row or
a column (that would make ``n`` or ``p`` depend on the data). A group column needs
the list of labels; a row with another label is an error. Messages name files,
options and columns (public), never a cell's value, its row number or a label
found in the data.

What makes a cell a number is our rule (:func:`_cell_values`), not a parser's
guess. A plain file (no quotes, no stray carriage returns) is read by pandas' C
parser, whose float64 cells that are finite are exactly the numbers of that rule;
any other file, and any file with an error, is read cell by cell with the standard
library's ``csv`` module, which names the problem. Both give the same table. Each
front end names its own options in the messages (``spelling``).
"""

import csv
import math
import os

#: The public labels of the groups of the built-in 'gau' data.
_GAU_GROUPS = ["G1", "G2", "G3", "G4", "G5"]
#: Above this many rows the command line always shows the fit's progress.
LARGE_N = 20_000
#: How the command line names the declarations in messages; the app passes its own.
_CLI_SPELLING = {"columns": "--columns", "group": "--group", "groups": "--groups"}
#: Cells reported as missing rather than non-numeric (compared in lower case).
_MISSING = frozenset(["", "na", "n/a", "nan", "-nan", "null", "none", "#n/a", "<na>",
                      "?"])


class UserError(Exception):
    """A problem with the user's input, reported in plain words by the front end
    (the command line: one ``error:`` line and exit status 2; the app: a message)."""


def parse_names(text, option, what):
    """A comma-separated list of distinct names (CSV quoting allowed: "a, b",c)."""
    try:
        names = next(csv.reader([str(text)], skipinitialspace=True), [])
    except csv.Error:
        raise UserError(f"{option}: cannot read the list {text!r}.") from None
    names = [name.strip() for name in names]
    if not names or not all(names):
        raise UserError(f"{option}: empty {what} in {text!r}.")
    if len(set(names)) != len(names):
        raise UserError(f"{option}: {what}s must be distinct, got {text!r}.")
    return names


class TabularData:
    """The variables, the group labels and where they came from."""

    def __init__(self, X, y, labels, source, group_column=None):
        self.X = X
        self.y = y
        self.labels = labels
        self.source = source
        self.group_column = group_column


#: The built-in data sets of the front ends (the command line's ``--data``).
BUILTIN_DATA = ("gau", "adult")


def builtin_labels(name):
    """The public group labels of built-in data set ``name`` (None: no groups)."""
    return list(_GAU_GROUPS) if name == "gau" else None


def builtin_data(name="gau"):
    """Built-in data set ``name``, one of :data:`BUILTIN_DATA`.

    ``gau``: 5 groups x 1000 rows x 20 columns, groups G1..G5 (public). ``adult``:
    the 5 numeric columns of the UCI Adult data (32,561 rows, no groups), as
    float64 like a CSV file's variables.
    """
    if name == "adult":
        from .datasets import load_adult

        X = load_adult().data.astype("float64")
        return TabularData(X, None, None,
                           "built-in 'adult' data (UCI Adult, 5 numeric columns, "
                           "load_adult)")
    if name != "gau":
        raise UserError(f"unknown built-in data {name!r}; choose one of "
                        f"{', '.join(BUILTIN_DATA)}.")
    from .datasets import make_gaussian_clusters

    X, y = make_gaussian_clusters(return_groups=True, as_frame=True, random_state=0)
    return TabularData(X, y.to_numpy(dtype=object), builtin_labels("gau"),
                       "built-in 'gau' data (make_gaussian_clusters, random_state=0)")


def _list(names, limit=12):
    shown = ", ".join(map(repr, names[:limit]))
    return shown + (", ..." if len(names) > limit else "")


def _read_rows(path, shown):
    """The header and the data rows of ``path`` as lists of strings.

    Empty lines before the header are skipped; an empty line after it is an
    error: in a one-column table it is a missing value, and skipping it would
    change ``n``. Messages name the file (as ``shown``) only: a parser's own
    message may quote a line number or the text of a row, which are data.
    """
    if not os.path.exists(path):
        raise UserError(f"cannot read {shown!r}: no such file.")
    if os.path.isdir(path):
        raise UserError(f"cannot read {shown!r}: it is a directory.")
    try:
        # utf-8-sig: a byte order mark is not part of the first column's name
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle, strict=True))
    except UnicodeDecodeError:
        raise UserError(f"cannot read {shown!r}: it is not UTF-8 text.") from None
    except csv.Error:
        raise UserError(f"cannot parse {shown!r} as CSV (a stray quote or a NUL byte); "
                        "check the file's quoting.") from None
    except OSError as error:
        raise UserError(f"cannot read {shown!r}: {error.strerror or error}.") from None
    while rows and not rows[0]:
        rows.pop(0)
    if not rows:
        raise UserError(f"{shown!r} is empty: a CSV with a header row is needed.")
    header, rows = rows[0], rows[1:]
    if not all(rows):
        raise UserError(f"{shown!r} has an empty line after the header: a missing value "
                        "or a stray line (skipping it would change the number of rows); "
                        "remove it or fill in the value.")
    return header, rows


def _plain_parts(data):
    """The header line and the body of a plain file; None for any other.

    Plain: no double quote, no NUL byte and no carriage return but before a line
    feed, so that csv's reading is a split at commas and line ends. Anything else
    is left to the exact reader (which reports what is wrong).
    """
    if b'"' in data or b"\0" in data or (
            b"\r" in data and data.count(b"\r") != data.count(b"\r\n")):
        return None
    data = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    data = data.lstrip(b"\r\n")                  # empty lines before the header
    end = data.find(b"\n")
    if end < 0 or end + 1 == len(data):
        return None
    return data[:end].removesuffix(b"\r").decode("utf-8"), data[end + 1:]


def _read_plain(path, columns, group, declared, max_abs):
    """:func:`read_csv`'s table read by pandas' C parser, or None when the file is
    not plain (:func:`_plain_parts`) or anything in it is an error: then the exact
    reader reads it, and reports what is wrong. The two agree on every table the
    fast one returns (a cell pandas reads as a finite float64 is the same number
    by the cell rule of :func:`_cell_values`; tests/test_data_sources.py
    compares them)."""
    import io

    import numpy as np
    import pandas as pd

    try:
        with open(path, "rb") as handle:
            data = handle.read()
        data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    plain = _plain_parts(data)
    if plain is None:
        return None
    header, body = plain
    names = [name.strip() for name in header.split(",")]
    variables = ([name for name in names if name != group] if columns is None
                 else list(columns))
    if not all(names) or len(set(names)) != len(names) or not variables \
            or not set(variables) <= set(names) or (group is not None and (
                group not in names or group in variables or declared is None)):
        return None
    position = {name: j for j, name in enumerate(names)}
    dtypes = {j: "object" for j in range(len(names))}
    dtypes.update({position[name]: "float64" for name in variables})
    try:
        table = pd.read_csv(io.BytesIO(body), header=None, names=list(range(len(names))),
                            dtype=dtypes, engine="c", na_filter=False,
                            skip_blank_lines=False, quoting=3, encoding="utf-8")
    except (ValueError, pd.errors.ParserError):
        return None
    # Every row must have exactly the header's fields: pandas reads a row with
    # more as an error only when some row has fewer (when every row has more, it
    # takes the first fields as an index and shifts the columns), so the commas
    # are counted (a plain file has no quoted comma).
    if len(table) < 2 or (np.count_nonzero(np.frombuffer(body, dtype=np.uint8) == ord(","))
                          != (len(names) - 1) * len(table)):
        return None
    values = table[[position[name] for name in variables]].to_numpy(dtype="float64")
    if not np.isfinite(values).all() or (
            max_abs is not None and np.abs(values).max() > max_abs):
        return None
    y = None
    if group is not None:
        labels = table[position[group]]
        if not labels.isin(list(declared)).all():     # (stripping costs: only if needed)
            labels = labels.str.strip()
            if not labels.isin(list(declared)).all():
                return None
        y = labels.to_numpy(dtype=object)
    return pd.DataFrame(values, columns=variables), y


def _cell_values(cells):
    """float64 values of one column's cells, and which cells are not numbers.

    A cell is a number when Python's ``float`` reads it (surrounding spaces
    allowed, no digit separators) or when it is ``true`` / ``false`` (1 / 0, any
    case). The rule is per cell: it never depends on the other cells.
    """
    import numpy as np

    values = np.empty(len(cells), dtype=np.float64)
    text = np.zeros(len(cells), dtype=bool)
    for i, cell in enumerate(cells):
        token = cell.strip()
        lowered = token.lower()
        if lowered == "true":
            values[i] = 1.0
        elif lowered == "false":
            values[i] = 0.0
        elif lowered in _MISSING:
            values[i] = np.nan
        else:
            try:
                if "_" in token:
                    raise ValueError
                values[i] = float(token)
            except ValueError:
                values[i] = np.nan
                text[i] = True
    return values, text


def csv_columns(path, *, shown_as=None):
    """The column names of a CSV file's header (public: what the file declares),
    with the header's checks of :func:`read_csv`; no cell is read as a value."""
    shown = path if shown_as is None else shown_as
    header, _ = _read_rows(path, shown)
    return _header_names(header, shown)


def csv_shape(path, columns=None, group=None, *, shown_as=None, spelling=None):
    """The public shape ``(n, p)`` of the table :func:`read_csv` would read: the
    number of data rows and of declared variables. No cell is read as a value
    (the rows are counted); the header's checks are :func:`read_csv`'s."""
    shown = path if shown_as is None else shown_as
    said = _CLI_SPELLING if spelling is None else spelling
    header, rows = _read_rows(path, shown)
    names = _header_names(header, shown)
    if group is not None and group not in names:
        raise UserError(f"{said['group']} {group!r}: no such column in {shown!r} "
                        f"(columns: {_list(names)}).")
    if columns is None:
        return len(rows), len([name for name in names if name != group])
    missing = [name for name in columns if name not in names]
    if missing:
        raise UserError(f"{said['columns']}: no column {_list(missing)} in {shown!r} "
                        f"(columns: {_list(names)}).")
    return len(rows), len(columns)


#: Separators another program may write, which this reader does not guess.
_OTHER_SEPARATORS = (";", "\t", "|")
_SEPARATOR_NAMES = {";": "a semicolon", "\t": "a tab", "|": "a vertical bar"}


def _header_names(header, shown):
    """The header's column names, each named once, separated by commas."""
    names = [name.strip() for name in header]
    other = [mark for mark in _OTHER_SEPARATORS if len(names) == 1 and mark in names[0]]
    if other:
        # one column whose name holds another separator: a file separated by it
        # (often with decimal commas) would be read as something else; refuse
        raise UserError(f"{shown!r}: the header is one column whose name contains "
                        f"{_SEPARATOR_NAMES[other[0]]}: the file seems separated by it, "
                        "and only commas separate fields here (with a decimal point). "
                        "Save the file as comma-separated CSV.")
    for position, name in enumerate(names, start=1):
        if not name:
            raise UserError(f"{shown!r}: column {position} of the header has no name; "
                            "name every column.")
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        raise UserError(f"{shown!r} has duplicate column names: {_list(twice)}.")
    return names


def read_csv(path, columns=None, group=None, declared=None, max_abs=None, *,
             shown_as=None, spelling=None):
    """Read ``path`` into a :class:`TabularData`; every problem is a :class:`UserError`.

    ``columns``: the variables, in this order (None: every column but ``group``).
    ``group`` and ``declared`` (the public labels) come together. Messages name
    columns (public) but never a cell's value, its row, or a label from the data;
    they call the file ``shown_as`` (default ``path``) and the declarations as
    ``spelling`` says (default :data:`_CLI_SPELLING`).

    A plain file (no quotes) is read by pandas' C parser (:func:`_read_plain`);
    any other file, and any file with an error, cell by cell with the csv module
    (:func:`_read_exact`). Both apply the one cell rule and give the same table:
    which one reads a file changes only the time it takes.
    """
    shown = path if shown_as is None else shown_as
    source = f"CSV file {os.path.basename(shown)!r}"
    plain = _read_plain(path, columns, group, declared, max_abs) if os.path.isfile(
        path) else None
    if plain is None:
        plain = _read_exact(path, columns, group, declared, max_abs, shown,
                            _CLI_SPELLING if spelling is None else spelling)
    frame, y = plain
    return TabularData(frame, y, None if group is None else list(declared), source,
                       group)


def _read_exact(path, columns, group, declared, max_abs, shown, said):
    """:func:`read_csv`'s table (the DataFrame of the variables and the labels)
    read cell by cell with the csv module: any file, and every error named."""
    import numpy as np
    import pandas as pd

    as_columns, as_group, as_groups = said["columns"], said["group"], said["groups"]
    header, rows = _read_rows(path, shown)
    names = _header_names(header, shown)
    if not rows:
        raise UserError(f"{shown!r} has a header but no data rows.")
    if any(len(row) != len(names) for row in rows):
        raise UserError(f"{shown!r}: not every row has as many fields as the header "
                        f"({len(names)}); check the separator (a comma) and the quoting.")
    index = {name: position for position, name in enumerate(names)}

    y = None
    if group is not None:
        if group not in index:
            raise UserError(f"{as_group} {group!r}: no such column in {shown!r} (columns: "
                            f"{_list(names)}).")
        raw = np.array([row[index[group]].strip() for row in rows], dtype=object)
        if (raw == "").any():
            raise UserError(f"{as_group} {group!r}: some rows have no group label; every "
                            f"row needs one of {as_groups}.")
        if not np.isin(raw, np.array(declared, dtype=object)).all():
            raise UserError(f"{as_group} {group!r}: some rows have a label that is not one of "
                            f"{as_groups} {','.join(declared)}; declare every label (the "
                            "labels in the file are not shown: they are data).")
        y = raw

    if columns is None:
        variables = [name for name in names if name != group]
        if not variables:
            raise UserError(f"{shown!r} has no column besides {as_group} {group!r}.")
    else:
        missing = [name for name in columns if name not in index]
        if missing:
            raise UserError(f"{as_columns}: no column {_list(missing)} in {shown!r} (columns: "
                            f"{_list(names)}).")
        variables = list(columns)

    values = np.empty((len(rows), len(variables)), dtype=np.float64)
    for j, name in enumerate(variables):
        position = index[name]
        values[:, j], text = _cell_values([row[position] for row in rows])
        if text.any():
            if columns is None:
                raise UserError(
                    f"{shown!r}: column {name!r} has cells that are not numbers. Without "
                    f"{as_columns} every column but {as_group} is a variable; declare "
                    f"the variables with {as_columns} a,b,c (a name with a comma in double "
                    "quotes)."
                )
            raise UserError(f"{shown!r}: column {name!r} (declared by {as_columns}) has cells "
                            "that are not numbers; every cell of a variable must be one.")
        if not np.isfinite(values[:, j]).all():
            raise UserError(
                f"{shown!r}: column {name!r} has missing or infinite values. Remove or "
                "impute them first (an imputation from the data itself is not private)."
            )
        if max_abs is not None and np.max(np.abs(values[:, j])) > max_abs:
            raise UserError(
                f"{shown!r}: column {name!r} has values beyond the data domain "
                f"|x| <= 2**{int(round(math.log2(max_abs)))}; divide it by a constant "
                "first (the directions do not change)."
            )
    if values.shape[0] < 2:
        raise UserError(f"{shown!r} has {values.shape[0]} data row; at least 2 are needed.")
    return pd.DataFrame(values, columns=variables), y
