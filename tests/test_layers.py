"""Imports run one way: no module imports a layer above its own (docs/architecture.md, "Layers").

    arena            the game API, policies, the match driver, redaction: imports no other layer
    games            native games, the TextArena adapter, the registry:  arena
    league           store, schedulers, runner, ratings, opponent pool:  arena, games
    evaluation       suites, anchored ratings, report cards,             arena, games, league
                     exploitability
    trainer, web     self-play GRPO; the leaderboard site and JSON API:  arena, games, league, evaluation
    serve_env,       serve-env; PettingZoo, GEM and verifiers adapters:  arena, games, league
    interop          (outer layer: nothing below imports them, nor they each other)
    serve_model      serve-model: the engines behind an OpenAI API:      arena, server_guards
    server_guards    Host/Origin checks, JSON depth, client slots:       nothing of ours
    arena_verifiers  verifiers' dotless plugin name, a re-export:        interop and what interop may import
    llm_arena_cli    the `arena` command, the composition root:          anything

Every top-level package of the repository (a folder with `__init__.py`) must have a rule here, so a
new package is placed in the picture on purpose. Each module is parsed with `ast`, and every
import counts, at module level and inside functions (an import inside a function hides a cycle
or an upward dependency, it does not remove it), as do module names given as string literals to
`importlib.import_module`, in `*_MODULES` tuples (the command registry) and as "module:attr"
entries of a registry constant (the game and policy-kind registries).
A layer above reaches down through registration instead: `league.cli.export.register_export_kind`
(trainer adds `arena export --kind atropos`), `arena.policy.register_kind`, `COMMAND_MODULES`.

The core serves no web page and parses no command line: it imports no web or CLI framework.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_BELOW_LEAGUE = {"arena", "games", "league"}
MAY_IMPORT: dict[str, set[str] | None] = {
    "arena": set(),
    "games": {"arena"},
    "league": {"arena", "games"},
    "evaluation": _BELOW_LEAGUE,
    "trainer": _BELOW_LEAGUE | {"evaluation"},
    "web": _BELOW_LEAGUE | {"evaluation", "server_guards"},
    "server_guards": set(),  # Host/Origin checks, JSON depth, client slots: knows no game, model or store
    "serve_env": _BELOW_LEAGUE | {"server_guards"},
    "serve_model": {"arena", "server_guards"},  # arena serve-model: the engines behind FastAPI
    "interop": _BELOW_LEAGUE,
    "arena_verifiers": _BELOW_LEAGUE | {"interop"},
    "llm_arena_cli": None,  # the composition root: anything
}
NOT_PACKAGES = {"tests", "bench"}  # tests and the benchmark scripts may import every layer; examples/ holds no package

WEB_AND_CLI_FRAMEWORKS = {"fastapi", "starlette", "uvicorn", "jinja2", "typer", "click"}
ENTRY_POINT = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*):[A-Za-z_]\w*")  # "module:attr" in a registry


def _packages() -> list[str]:
    return sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name not in NOT_PACKAGES)


def _package_of(path: Path, root: Path) -> list[str]:
    """The package a file's relative imports start from: its folder, as dotted parts."""
    return list(path.relative_to(root).parent.parts)


def imported_names(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, module name) for every import of the file, wherever it sits, sorted by line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: climb from the file's package (`from ..y import z`, `from . import x`)
                package = _package_of(path, root)
                base = package[: len(package) - (node.level - 1)]
                targets = [node.module] if node.module else [alias.name for alias in node.names]
                found += [(node.lineno, ".".join([*base, target])) for target in targets]
            else:
                found.append((node.lineno, node.module or ""))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            names = [t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)]
            if any(name.endswith("_MODULES") for name in names) and isinstance(node.value, (ast.Tuple, ast.List)):
                found += [(node.lineno, e.value) for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            elif any(name.isupper() for name in names):  # a registry constant: its "module:attr" entries
                strings = [c for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
                found += [(c.lineno, m[1]) for c in strings if (m := ENTRY_POINT.fullmatch(c.value))]
    return sorted(found)


def test_every_package_has_a_layer():
    assert set(_packages()) == set(MAY_IMPORT), "place the new package in MAY_IMPORT (and in docs/architecture.md's picture)"


@pytest.mark.parametrize("package", sorted(MAY_IMPORT))
def test_no_module_imports_a_layer_above_its_own(package):
    allowed = MAY_IMPORT[package]
    if allowed is None:
        return
    layers = set(MAY_IMPORT)
    upward: list[str] = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for line, name in imported_names(path):
            top = name.split(".")[0]
            if top in layers and top != package and top not in allowed:
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not upward, f"{package} may import only {sorted(allowed) or 'no other layer'}:\n" + "\n".join(upward)


def test_the_checker_sees_imports_inside_functions_and_registries(tmp_path):
    """The check itself: imports hidden in functions, relative ones and registry strings are found."""
    (tmp_path / "league").mkdir()
    source = tmp_path / "league" / "probe.py"
    source.write_text(
        "import arena.game\n"
        "def later():\n    from trainer.atropos import scored_groups\n    import web.app\n"
        "COMMAND_MODULES = ('league.cli', 'serve_env.cli')\n"
        "def lazy():\n    importlib.import_module('interop.gem')\n"
        "from .store import Store\nfrom .. import games\n"
        "KINDS: dict = {'x': Entry('evaluation.cli:register', 'x:example,k=v')}\n"
        "NATIVE = ('games.nim:Nim', 'http://not.a:module')\n"
    )
    names = [name for _, name in imported_names(source, tmp_path)]
    assert names == ["arena.game", "trainer.atropos", "web.app", "league.cli", "serve_env.cli", "interop.gem", "league.store", "games",
                     "evaluation.cli", "games.nim"]


def _framework_imports(package: str) -> dict[str, list[str]]:
    """file -> the web or CLI frameworks it imports, for every module of `package` that imports one."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        frameworks = sorted({name.split(".")[0] for _, name in imported_names(path)} & WEB_AND_CLI_FRAMEWORKS)
        if frameworks:
            found[path.relative_to(ROOT).as_posix()] = frameworks
    return found


def test_the_core_imports_no_web_or_cli_framework():
    found = _framework_imports("arena")
    assert not found, f"the core imports web or CLI frameworks: {found}; they belong to the packages above it"
