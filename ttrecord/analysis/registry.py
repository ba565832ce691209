"""The registered hazard rules: every module of `ttrecord.analysis.catalog` that declares one.

The declaration contract. A rule is one module in `ttrecord/analysis/catalog/` (any name not
starting with `_`) with a module-level `RULE = Rule(...)` (`ttrecord.analysis.rules.Rule`):
- `id` ("TR0NN", unique), `title`, `severity` (default level), `levels` (the severity policy as
  documented), `summary` (README row), `reported_when` and `at` (docs/check.md row), `why` and
  `fix` (SARIF rule metadata, `check --help`);
- `detect(events, ctx) -> list[Finding]`, a pure function of the loaded events and the
  `Context`, building findings with `rules.finding(RULE.id, ...)`;
- `facts`: names of the loaders in `analysis/loading.py` (`LOADERS`) whose events it scans
  besides the core ones (trace calls, everything inside a capture or audit region);
- `highlight` (optional): the buffers it marks in the UI's memory map, with the trace ranges
  they sit on (`trace_overlap.highlight`, TR004's, shows the signature).
- `folds_under` (optional): the findings of other rules its findings may be consequences of,
  and the evidence (`Finding.links`) both must share for a fold (`rules.FoldsUnder`,
  applied by `grouping`).
Every list of rules reads this registry: `check`, its `--help`, SARIF, the UI (findings, memory
map) and the README/docs tables (generated: `python -m ttrecord.report.rule_docs --write`). A module
without `RULE` is an error, so a misspelt declaration is not silently skipped.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from ttrecord.analysis import catalog
from ttrecord.analysis.rules import Rule


class RuleDeclarationError(Exception):
    """A catalog module that does not declare a valid rule (a programming error)."""


def rules() -> dict[str, Rule]:
    """Every registered rule by id, in id order."""
    return _discover(tuple(catalog.__path__))


def rule_by_id(rule_id: str) -> Rule:
    try:
        return rules()[rule_id]
    except KeyError:
        raise RuleDeclarationError(f"no rule {rule_id} is registered") from None


def modules() -> list[str]:
    """The files the rules are declared in (part of the analysis version)."""
    return sorted(
        str(info.module_finder.path) + f"/{info.name}.py"  # type: ignore[union-attr]
        for info in pkgutil.iter_modules(list(catalog.__path__))
        if not info.name.startswith("_")
    )


@lru_cache(maxsize=4)  # keyed by the search path, so a test that extends it sees its rule
def _discover(path: tuple[str, ...]) -> dict[str, Rule]:
    found: dict[str, Rule] = {}
    for info in sorted(pkgutil.iter_modules(list(path)), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{catalog.__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule):
            raise RuleDeclarationError(f"{module.__name__} declares no RULE = Rule(...)")
        if rule.id in found:
            raise RuleDeclarationError(f"{rule.id} is declared twice ({module.__name__})")
        found[rule.id] = rule
    return dict(sorted(found.items()))
