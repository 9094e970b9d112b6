"""The layering the package promises: who may import whom (static and dynamic imports), no cycles, one definition of
each shared constant."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from tests.support.helpers import PACKAGES, REPO

#: Lowest first. A module may import its own package or a package of a strictly lower rank. The pipeline in order:
#: the base, the release and the drawing stack; scoring (the answer core, the run format and re-scoring); the
#: harnesses and probing; then a room per step after the score: the sample viewer and the submission, the report and
#: the audit, the board (``leaderboard``), the board on the Hub (``on_hub``), and the command line on top.
RANK = {"g2m_base": 0, "dataset_builder": 1, "drawing": 1, "scoring": 2, "harness_tasks": 3, "probing": 3,
        "viewer": 4, "submission": 4, "report": 5, "audit": 5, "leaderboard": 6, "on_hub": 7, "g2m_cli": 8}
#: The rooms after the score: each may use of ``harness_tasks`` only its public API (``g2m eval`` as a library, which
#: the audit replays through).
AFTER_THE_SCORE = ("viewer", "submission", "report", "audit", "leaderboard", "on_hub")


def test_every_package_of_the_wheel_has_a_rank():
    assert set(RANK) == set(PACKAGES)


def test_the_command_line_knows_every_package_as_its_own():
    """An ImportError naming one of our packages is a bug, not a missing dependency: ``g2m`` must know them all."""
    from g2m_cli.main import OWN_PACKAGES

    assert OWN_PACKAGES == set(PACKAGES)


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in RANK:
        for path in sorted((REPO / pkg).rglob("*.py")):
            rel = path.relative_to(REPO).with_suffix("")
            parts = list(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
            out[".".join(parts)] = path
    return out


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for every test that walks it."""
    return ast.parse(path.read_text(), str(path))


@functools.cache
def _imports(name: str, path: Path) -> frozenset[str]:
    """Every module ``name`` imports: import statements anywhere (lazy ones too), relative ones resolved, and
    ``importlib.import_module`` / ``__import__`` calls with a constant argument."""
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            mod = ".".join([*base, *(node.module.split(".") if node.module else [])])
            if node.module:  # ``from . import x`` names submodules; the package itself is already loaded
                found.add(mod)
            found |= {f"{mod}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            found.add(str(node.args[0].value))
    return frozenset(found)


MODULES = _modules()


@functools.cache
def graph() -> dict[str, set[str]]:
    """Each module's imports among our own: parsed by the first test that needs it (about a second of parsing that
    every xdist worker would otherwise pay when it collects this file)."""
    return {name: {m for m in _imports(name, path) if m in MODULES and m != name} for name, path in MODULES.items()}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_package_above_it(module):
    pkg = module.split(".")[0]
    for target in graph()[module]:
        tpkg = target.split(".")[0]
        assert tpkg == pkg or RANK[tpkg] < RANK[pkg], f"{module} imports {target}, which is not below {pkg}"


def test_the_module_graph_has_no_cycle():
    state: dict[str, int] = {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph()[node]):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join([*stack[stack.index(nxt):], nxt]))
            if nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for module in sorted(graph()):
        if module not in state:
            visit(module, [module])


#: Inside ``harness_tasks``, the rooms by trade, lowest first: serving, what every run shares, one folder per harness
#: (and its generated task folders' hooks), then ``evaluate`` on top (its command line: ``g2m_cli.evaluate``).
#: The answer core is ``scoring``, a package below ``harness_tasks`` and every room after the score.
HARNESS_ROOMS = {"serving": 1, "evaluation": 2, "with_lm_eval": 3, "with_lmms_eval": 3, "with_inspect": 3,
                 "with_vlmevalkit": 3, "lm_eval_tasks": 3, "lmms_eval_tasks": 3, "evaluate": 4}
#: Inside ``dataset_builder``: the grids (spec, palette, generator, renderer, PNG, prompt) know nothing of the
#: release (tables, shards, manifest, card, verify, push); the command line is ``g2m_cli.release``.
DATASET_BUILDER_ROOMS = {"grids": 0, "release": 1}


def _room(module: str, package: str = "harness_tasks") -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == package and len(parts) > 1 else None


def _check_rooms(module: str, package: str, ranks: dict[str, int]) -> None:
    """``module`` (in a room of ``package``) imports only rooms ranked strictly below its own."""
    room = _room(module, package)
    assert room in ranks, f"{module}: a new room of {package}; give it a rank"
    for target in graph()[module]:
        other = _room(target, package)
        if other and other != room:
            assert ranks.get(other, len(ranks)) < ranks[room], f"{module} imports {target}, which is not below {room}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _room(m)))
def test_each_room_of_harness_tasks_imports_only_rooms_below_it(module):
    _check_rooms(module, "harness_tasks", HARNESS_ROOMS)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _room(m, "dataset_builder")))
def test_each_room_of_the_dataset_builder_imports_only_rooms_below_it(module):
    _check_rooms(module, "dataset_builder", DATASET_BUILDER_ROOMS)


def test_scoring_sits_below_both_of_its_users_and_both_use_it():
    """The parsers, literal reader, paper protocol and metrics are what every harness and every room after the score
    score with: one package under both, so a score cannot depend on which of them computed it."""
    for user in ("harness_tasks", "submission", "report", "leaderboard"):
        assert RANK["scoring"] < RANK[user]
        assert any(t.startswith("scoring.") for m in MODULES if m.split(".")[0] == user for t in graph()[m]), user
    assert not [t for m in MODULES if m.startswith("scoring") for t in graph()[m] if RANK[t.split(".")[0]] > 2]


def test_the_run_format_has_one_home_below_probing_and_every_reader():
    """Written by the harness drivers, laid out and read back in ``scoring.runs``: probing and the rooms after the
    score read runs directly, with no reader handed down by the command line."""
    runs = [m for m in MODULES if m.startswith("scoring.runs.")]
    assert {"scoring.runs.layout", "scoring.runs.write", "scoring.runs.run"} <= set(runs)
    assert RANK["scoring"] < RANK["probing"] and RANK["scoring"] < min(RANK[p] for p in AFTER_THE_SCORE)
    assert not [m for m in MODULES if m.rsplit(".", 1)[-1] in ("run_files", "run_layout")], "a second home"


@pytest.mark.parametrize("room", AFTER_THE_SCORE)
def test_the_rooms_after_the_score_use_only_the_harnesses_public_api(room):
    for module in (m for m in MODULES if m.split(".")[0] == room):
        for target in graph()[module]:
            if target.startswith("harness_tasks"):
                assert target == "harness_tasks", f"{module} imports {target}: only harness_tasks' public API"


def test_no_room_reaches_into_another_rooms_private_names():
    """``from room.module import _name`` across rooms: a private name is its own room's business."""
    hits = []
    for name, path in MODULES.items():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module.split(".")[0] != name.split(".")[0] and node.module.split(".")[0] in RANK:
                    hits += [f"{name}: {node.module}.{a.name}" for a in node.names
                             if a.name.startswith("_") and not a.name.startswith("__")]
    assert hits == []


#: Inside ``probing``, lowest first: the single-point probe (encoders, token layouts, feature cache, probe), the layer
#: sweep built on it (the command line: ``g2m_cli.probe``). ``tiny`` (the offline test models) and ``figures`` (the
#: probes' pictures, on ``drawing``) serve both.
PROBING_ROOMS = {"tiny": 0, "figures": 0, "core": 1, "sweep": 2}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _room(m, "probing")))
def test_each_room_of_probing_imports_only_rooms_below_it(module):
    _check_rooms(module, "probing", PROBING_ROOMS)


def test_the_probe_core_never_imports_the_sweep():
    """The sweep is built on the single-point probe; a core module reaching up into it would tie ``g2m probe`` to
    the sweep's store, hooks and chat input."""
    core = [m for m in MODULES if m == "probing.core" or m.startswith("probing.core.")]
    assert len(core) > 1, "probing.core is missing: the test would pass on nothing"
    assert {m: sorted(t for t in graph()[m] if t.startswith("probing.sweep")) for m in core} == {m: [] for m in core}


#: The most modules one folder of package code holds, and the most lines one module has: past these, split by job.
FOLDER_MODULES, MODULE_LINES = 10, 300


def test_no_package_folder_holds_more_than_ten_modules():
    for folder in {path.parent for path in MODULES.values()}:
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        assert len(modules) <= FOLDER_MODULES, (
            f"{folder.relative_to(REPO)} holds {len(modules)} modules; split it into rooms")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_over_300_lines(module):
    lines = len(MODULES[module].read_text().splitlines())
    assert lines <= MODULE_LINES, f"{module} is {lines} lines; split it by job"


def test_argparse_is_only_in_the_command_line():
    """Library modules take typed arguments; parsing flags is ``g2m_cli``'s job (and ``g2m_base.flags``'s shared
    vocabulary), so a library call never depends on a parser. Two child programs keep a command line of their own: the
    lm-eval runner (``g2m-lm-eval``) and the server's supervisor (``g2m-serve-supervisor``)."""
    own_cli = ("g2m_cli", "g2m_base.flags", "harness_tasks.with_lm_eval.cli", "harness_tasks.serving.supervisor")
    users = sorted(m for m in MODULES if "argparse" in _imports(m, MODULES[m]) and not m.startswith(own_cli))
    assert users == []


def test_every_page_is_a_template_rendered_with_autoescape():
    """HTML is written only by templates: no leaderboard module builds a tag in a Python string, nor escapes by hand."""
    tag = re.compile(r"[\"'](?:[^\"']*)<(?:/?)(?:html|body|h[1-6]|p|a|div|table|tr|td|th|img|pre|svg|g|script|span)\b")
    hits = [f"{m}:{k}" for m, path in MODULES.items() if m.split(".")[0] in (*AFTER_THE_SCORE, "drawing")
            for k, line in enumerate(path.read_text().splitlines(), 1) if tag.search(line) or "esc(" in line]
    assert hits == [], f"HTML built outside a template at {hits}"


def test_the_command_module_registers_every_package_statically():
    assert {"g2m_cli.release", "g2m_cli.evaluate", "g2m_cli.probe", "g2m_cli.report",
            "g2m_cli.submit", "g2m_cli.board"} <= graph()["g2m_cli.main"]


#: Each shared value, as it would be written if someone typed it again, and its one home. 512 also names things that
#: are not the image side (the probe's hidden width, a token allowance, a cache size): those lines say so by name.
CONSTANTS = [
    (r"^(?!.*(?:hidden|PROMPT_TOKS|maxsize)).*\b512\b", "DEFAULT_RESOLUTION"),
    (r"\"<image>\"", "IMAGE_PLACEHOLDER"),
    (r"\"manifest\.json\"", "MANIFEST_NAME"),
    (r"\"README\.md\"", "README_NAME"),
    (r"g2m-probe-result/", "PROBE_RESULT_FORMAT"),
    (r"14(?:\.0)?, 16(?:\.0)?, 28", "PATCH_SIZES"),
    (r"check_int\(\"grid_size\"", "check_grid_size"),
    (r"^class HarnessError\b", "HarnessError"),
    (r"n\{[^}]*:02d\}_c\{", "cell_key"),
    (r"(?<![\w.])99\b", "MAX_GRID_SIZE"),
    (r"\"exact_match\", \"cell_accuracy\", \"cell_accuracy_strict\", \"parse_failed\"", "METRICS"),
    (r"serves \{len\(names\)\} models", "served_model"),
    (r"^class ModelArgs\b", "ModelArgs"),
    (r"^MAX_RESULTS_BYTES\b", "MAX_RESULTS_BYTES"),
    (r"[\"']results_\*\.json[\"']", "RESULTS_PATTERN"),
    (r"\^results_\(", "results_date"),
    (r"must be an integer\b", "check_int"),
    (r"must be a finite number in", "check_number"),
    (r"^def check_workers\b", "check_workers"),
    (r"unknown probing config", "ProbeSettings"),
    (r"^MAX_PROBE_RESULT_BYTES\b", "MAX_PROBE_RESULT_BYTES"),
    (r"\bMAX_SWEEP_BYTES =", "MAX_SWEEP_BYTES"),
    (r"\bos\.replace\(", "durable_replace"),
    (r"^def atomic_open\b", "atomic_open"),
    (r"\bnp\.save\(", "save_npy"),
]


@functools.cache
def code_lines() -> tuple[tuple[str, int, str], ...]:
    """Every line of code in our packages as (module, line number, the code before a trailing comment): docstrings
    and comment lines left out. Read once for all the constants below."""
    comment_only = re.compile(r"^\s*(#|\"\"\"|''')")
    out = []
    for module, path in MODULES.items():
        in_doc = False
        for k, line in enumerate(path.read_text().splitlines(), 1):
            if line.strip().count('"""') % 2 == 1:
                in_doc = not in_doc
                continue
            if not in_doc and not comment_only.match(line):
                out.append((module, k, line.split("  #")[0]))
    return tuple(out)


@pytest.mark.parametrize(("pattern", "name"), CONSTANTS, ids=[n for _, n in CONSTANTS])
def test_each_shared_constant_is_written_once(pattern, name):
    written = re.compile(pattern)
    hits = [f"{module}:{k}" for module, k, code in code_lines() if written.search(code)]
    assert len(hits) == 1, f"{name} is written in {len(hits)} places: {hits}"


def test_model_args_are_parsed_only_by_ModelArgs():
    """The ad-hoc parsers ModelArgs replaced all looked for ``(?:^|,)key=`` or split pieces on ``=`` by hand."""
    pattern = re.compile(r"\(\?:\^\|,\)|split\(\"=\", 1\)")
    hits = [f"{m}:{k}" for m, path in MODULES.items() for k, line in enumerate(path.read_text().splitlines(), 1)
            if pattern.search(line)]
    assert hits == [], f"model arguments parsed by hand at {hits}; use harness_tasks.ModelArgs"
