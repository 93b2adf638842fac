"""The module map holds: who may import whom inside the package.

The import graph is read from the sources with :mod:`ast` (every ``import``
statement, at module level or inside a function), so a lazy import counts as
much as a top-level one. See the user guide, "Architecture".
"""

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sklearn_dppca"
ARCHITECTURE = PACKAGE.parent / "doc" / "architecture.rst"
ESTIMATORS = ("sklearn_dppca._directions", "sklearn_dppca._scree", "sklearn_dppca._pca")
# the modules of the releases (writing, reading, ReleasedPCA) and of the command line
# and the explorer app, by the prefix their module names share
FRONT_END_PREFIXES = ("sklearn_dppca._release", "sklearn_dppca._cli", "sklearn_dppca.app")


def _module_names():
    """Dotted name -> (path, is_package) for every module of the package."""
    names = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        names[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return names


def _imported(node, package, modules):
    """The package modules one import statement names."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name.startswith("sklearn_dppca")}
    if node.level:
        base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if not target.startswith("sklearn_dppca"):
        return set()
    return {f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target
            for alias in node.names}


def _import_graph():
    modules = _module_names()
    graph = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rsplit(".", 1)[0]
        statements = [node for node in ast.walk(ast.parse(path.read_text()))
                      if isinstance(node, (ast.Import, ast.ImportFrom))]
        graph[name] = set().union(*(_imported(node, package, modules)
                                    for node in statements)) - {name}
    return graph


GRAPH = _import_graph()


def test_the_graph_is_read():
    # The reader must see the edges we know exist, or every rule below is vacuous.
    assert "sklearn_dppca._base" in GRAPH["sklearn_dppca._pca"]
    assert "sklearn_dppca._algorithms._directions" in GRAPH["sklearn_dppca._scree"]
    assert "sklearn_dppca._kendall_kernel" in GRAPH["sklearn_dppca._kendall"]


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_estimators_import_none_of_each_other(estimator):
    assert not GRAPH[estimator] & (set(ESTIMATORS) - {estimator})


def test_algorithms_import_no_estimator_display_or_front_end():
    above = set(ESTIMATORS) | {"sklearn_dppca._base", "sklearn_dppca"}
    for name, imported in GRAPH.items():
        if name.startswith("sklearn_dppca._algorithms"):
            assert not {m for m in imported if m in above or ".display" in m
                        or m.startswith(FRONT_END_PREFIXES)}, name


def test_nothing_imports_back_up_into_a_package_face():
    for name, imported in GRAPH.items():
        ancestors = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        assert not imported & ancestors, f"{name} imports its package face"


def test_no_cycle():
    state = {}

    def visit(name, path):
        state[name] = "open"
        for child in sorted(GRAPH.get(name, ())):
            if state.get(child) == "open":
                raise AssertionError(" -> ".join(path + [child]))
            if child not in state:
                visit(child, path + [child])
        state[name] = "done"

    for name in sorted(GRAPH):
        if name not in state:
            visit(name, [name])


@pytest.mark.parametrize("leaf", ["sklearn_dppca._validation", "sklearn_dppca._version",
                                  "sklearn_dppca._algorithms._projection"])
def test_leaf_modules_import_nothing_of_the_package(leaf):
    assert GRAPH[leaf] == set()


def test_privacy_toolkit_stands_on_validation_only():
    for name, imported in GRAPH.items():
        if name.startswith("sklearn_dppca.privacy"):
            outside = {m for m in imported if not m.startswith("sklearn_dppca.privacy")}
            assert outside <= {"sklearn_dppca._validation"}, name


def test_displays_read_estimators_by_their_attributes_only():
    estimator_side = set(ESTIMATORS) | {"sklearn_dppca._base"}
    for name, imported in GRAPH.items():
        if name.startswith("sklearn_dppca.display"):
            assert not imported & estimator_side, name
            assert not {m for m in imported if m.startswith(FRONT_END_PREFIXES)}, name
            assert not {m for m in imported if m.startswith("sklearn_dppca._algorithms")}


def test_a_broken_graph_is_caught():
    # The cycle check must fail on a cycle.
    GRAPH["sklearn_dppca._validation"].add("sklearn_dppca._base")
    try:
        with pytest.raises(AssertionError):
            test_no_cycle()
    finally:
        GRAPH["sklearn_dppca._validation"].discard("sklearn_dppca._base")


def _imported_names():
    """(module, name) for every name some package module takes from another: by
    ``from module import name`` or as ``module.name`` after importing the module."""
    modules = _module_names()
    imported = set()
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text())
        module_aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for target in _imported(node, package, modules):
                    imported.update((target, alias.name) for alias in node.names)
                    for alias in node.names:
                        if target.endswith("." + alias.name):
                            module_aliases[alias.asname or alias.name] = target
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in module_aliases):
                imported.add((module_aliases[node.value.id], node.attr))
        imported.update(_lazy_names(tree, package))
    return imported


def _lazy_names(tree, package):
    """(module, name) for the names a package face loads on first use: its
    ``_HOMES`` dict maps each public name to the relative module defining it."""
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", None) == "_HOMES"):
            homes = ast.literal_eval(node.value)
            return {(package + home, name) for name, home in homes.items()}
    return set()


def _module_level_names(path):
    names = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [target.id for target in node.targets if isinstance(target, ast.Name)]
    return names


def test_internals_are_prefixed():
    # A module-level name no other module of the package imports is private to
    # its module, so it starts with "_" (scikit-learn's convention).
    imported = _imported_names()
    # a type handed out rather than imported, named in the documentation: the
    # budget leaf a BudgetPlan gives each step
    imported.add(("sklearn_dppca.privacy._accounting", "Allocation"))
    unprefixed = [f"{module}.{name}"
                  for module, (path, is_package) in _module_names().items()
                  if not is_package
                  for name in _module_level_names(path)
                  if not name.startswith("_") and (module, name) not in imported]
    assert unprefixed == []


# --------------------------------------------------------------------------------------
# the floors of doc/architecture.rst
# --------------------------------------------------------------------------------------
# A module path on the map: a path under sklearn_dppca/ ending in .py or .pyx.
_MAP_PATH = re.compile(r"(?<![\w./])(?:\w+/)*\w+\.pyx?(?![\w.])")

def _dotted(path):
    """``app/_ui.py`` -> ``sklearn_dppca.app._ui``; a package's __init__ is the package."""
    parts = ["sklearn_dppca", *path.rsplit(".", 1)[0].split("/")]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _read_floors(text):
    """The module map of the architecture page: [(floor, [module, ...]), ...], highest
    floor first. The map is the first ``text`` code block after the "Module map"
    heading; a line whose first column is not blank opens a floor, named by the
    words before the first run of two spaces."""
    lines = text[text.index("Module map\n"):].split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(".. code-block:: text"))
    floors = []
    for line in lines[start + 2:]:
        if line and not line.startswith("   "):
            break                     # the end of the block
        if not line.strip():
            continue
        if not line[3].isspace():
            floors.append((re.split(r"\s{2,}", line.strip())[0], []))
        floors[-1][1].extend(_dotted(path) for path in _MAP_PATH.findall(line))
    return floors


def _package_modules():
    """Every module of the package, the compiled kernel included."""
    pyx = {_dotted(str(path.relative_to(PACKAGE))) for path in PACKAGE.rglob("*.pyx")}
    return set(_module_names()) | pyx


def _map_problems(floors, modules):
    """What keeps the map from naming each module of the package on exactly one floor."""
    problems = []
    seen = {}
    for floor, names in floors:
        for name in names:
            if name in seen:
                problems.append(f"{name} is on floors {seen[name]!r} and {floor!r}")
            seen[name] = floor
    problems += [f"{name} is on no floor" for name in sorted(modules - set(seen))]
    problems += [f"{name} is on the map but does not exist"
                 for name in sorted(set(seen) - modules)]
    return problems


def _floor_problems(graph, floors):
    """Every import of a module on a higher floor than the importer's."""
    level = {name: rank for rank, (floor, names) in enumerate(floors) for name in names}
    return [f"{name} (floor {floors[level[name]][0]!r}) imports {other} "
            f"(floor {floors[level[other]][0]!r})"
            for name, imported in sorted(graph.items()) if name in level
            for other in sorted(imported) if level.get(other, len(floors)) < level[name]]


FLOORS = _read_floors(ARCHITECTURE.read_text())


def test_the_map_is_read():
    # The reader must see the floors we know, or the two checks below are vacuous.
    names = [floor for floor, _ in FLOORS]
    assert names[0] == "face" and names[-1] == "leaf" and len(names) >= 8
    level = {name: rank for rank, (_, modules) in enumerate(FLOORS) for name in modules}
    assert level["sklearn_dppca"] == 0
    assert level["sklearn_dppca._pca"] < level["sklearn_dppca._algorithms._scree"] \
        < level["sklearn_dppca.privacy._means"] < level["sklearn_dppca._validation"]
    assert level["sklearn_dppca._kendall_kernel"] == level["sklearn_dppca._kendall"]
    assert sum(len(modules) for _, modules in FLOORS) >= len(_package_modules()) - 1


def test_every_module_is_on_exactly_one_floor():
    assert _map_problems(FLOORS, _package_modules()) == []


def test_modules_import_only_their_floor_and_below():
    assert _floor_problems(GRAPH, FLOORS) == []


def test_a_broken_map_is_caught():
    # each check must fail on what it is there to catch
    graph = {name: set(imported) for name, imported in GRAPH.items()}
    graph["sklearn_dppca._validation"].add("sklearn_dppca._cli")
    assert _floor_problems(graph, FLOORS) == [
        "sklearn_dppca._validation (floor 'leaf') imports sklearn_dppca._cli "
        "(floor 'front ends')"]
    dropped = [(floor, [m for m in modules if m != "sklearn_dppca._names"])
               for floor, modules in FLOORS]
    twice = FLOORS + [("again", ["sklearn_dppca._bunch"])]
    ghost = FLOORS + [("more", ["sklearn_dppca._nowhere"])]
    assert _map_problems(dropped, _package_modules()) == ["sklearn_dppca._names is on no floor"]
    assert _map_problems(twice, _package_modules()) == [
        "sklearn_dppca._bunch is on floors 'shared' and 'again'"]
    assert _map_problems(ghost, _package_modules()) == [
        "sklearn_dppca._nowhere is on the map but does not exist"]


# --------------------------------------------------------------------------------------
# one statistics layer: the estimators and the algorithms read rows, never a layout
# --------------------------------------------------------------------------------------
# Names that tell the data's representation apart or schedule passes over it: the
# rows (sklearn_dppca._data._rows) plan their own passes from the fit's budget plan.
_LAYOUT_NAMES = {"_is_dask_collection", "is_dask_collection", "is_dask", "n_blocks", "RowBlocks",
                 "is_row_blocks", "first_pass", "statistics_ahead", "flush", "_ahead",
                 "_pair_sum_ahead", "two_sided_ahead", "interval_ahead"}


def _layout_uses(source):
    """The layout names a module's source reads (as a name or an attribute), and
    the functions other than ``_fit_sequence`` that hand a plan to the rows."""
    uses = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        name = node.id if isinstance(node, ast.Name) else \
            node.attr if isinstance(node, ast.Attribute) else None
        if name in _LAYOUT_NAMES:
            uses.append(name)
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef) and function.name != "_fit_sequence":
            uses += [f"plan_passes in {function.name}" for node in ast.walk(function)
                     if isinstance(node, ast.Attribute) and node.attr == "plan_passes"]
    return uses


def _layer_clients():
    floors = dict(FLOORS)
    return floors["estimators"] + floors["algorithms"]


def test_estimators_and_algorithms_hold_no_fork_on_the_data_layout():
    modules = _module_names()
    found = {name: _layout_uses(modules[name][0].read_text())
             for name in _layer_clients()}
    assert {name: uses for name, uses in found.items() if uses} == {}
    assert len(found) >= 12


def test_a_fork_on_the_layout_is_caught():
    forked = "def fit(self, X):\n    if X.is_dask:\n        X.flush()\n    rows.plan_passes(p)\n"
    assert _layout_uses(forked) == ["is_dask", "flush", "plan_passes in fit"]
    assert _layout_uses("def fit(self, X):\n    return X.n_blocks > 1\n") == ["n_blocks"]


# --------------------------------------------------------------------------------------
# the steps' names belong to the algorithms
# --------------------------------------------------------------------------------------
# A ledger path: a top-level part of a fit's budget, then "/" (as "scree/mean").
_STEP_PATH = re.compile(r"^(loading|directions|scree|scale|score)/")


def _matched_fstrings(tree):
    """The f-strings a module compares or matches (``in``, ``==``,
    ``startswith``): a name read, not one a mechanism gives its own sub-step."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            yield from (n for part in [node.left, *node.comparators]
                        for n in ast.walk(part) if isinstance(n, ast.JoinedStr))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "startswith":
            yield from (n for arg in node.args for n in ast.walk(arg)
                        if isinstance(n, ast.JoinedStr))


def _step_paths(source):
    """The ledger paths a module's source spells: string constants, and
    f-strings it matches that join a name to a step (``f"{part}/radius"``)."""
    tree = ast.parse(source)
    found = [node.value for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and _STEP_PATH.match(node.value)]
    for fstring in _matched_fstrings(tree):
        pieces = fstring.values
        found += ["{...}" + second.value for first, second in zip(pieces, pieces[1:])
                  if isinstance(first, ast.FormattedValue)
                  and isinstance(second, ast.Constant) and str(second.value).startswith("/")]
    return found


def test_no_module_below_the_algorithms_spells_a_step():
    # the rows learn what to compute ahead from the algorithms' first_pass, never
    # by matching a step's name (a renamed step would add a pass unnoticed)
    names = [floor for floor, _ in FLOORS]
    below = [module for _, modules in FLOORS[names.index("algorithms") + 1:]
             for module in modules]
    modules = _module_names()
    found = {name: _step_paths(modules[name][0].read_text())
             for name in below if name in modules}
    assert len(found) >= 20
    assert {name: paths for name, paths in found.items() if paths} == {}


def test_a_spelled_step_is_caught():
    assert _step_paths('if "score/frame" in plan: pass') == ["score/frame"]
    assert _step_paths('if f"{part}/radius" in leaves: pass') == ["{...}/radius"]
    # (a mechanism naming its own sub-step is not a match)
    assert _step_paths('record(step=f"{step}/mean")') == []
    assert _step_paths('message = "scale must be > 0"') == []
