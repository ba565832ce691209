"""The rules are what the catalog modules declare, and every list of rules is generated from
those declarations or checked against them."""

import re
from pathlib import Path

import pytest

from ttrecord.analysis import catalog, loading
from ttrecord.analysis.registry import modules, rules
from ttrecord.cli.main import main
from ttrecord.report.rule_docs import generate

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_rule_tables_are_the_generated_ones():
    """GIVEN README.md and docs/check.md WHEN their rule tables are generated from the
    declarations THEN nothing changes (run `python -m ttrecord.report.rule_docs --write`)."""
    for path, (now, wanted) in generate(ROOT, list(rules().values())).items():
        assert now == wanted, f"{path.name}: python -m ttrecord.report.rule_docs --write"


def test_check_help_lists_exactly_the_registered_rules(capsys):
    """GIVEN the registry WHEN `check --help` runs THEN its rule list is the registered ids,
    in order, with their titles: no id (TR012 until its module exists) that is not one."""
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    text = capsys.readouterr().out
    listed = re.findall(r"^  (TR\d{3})  (.+) \(", text, re.M)
    assert listed == [(r.id, r.title) for r in rules().values()]
    assert set(re.findall(r"TR\d{3}", text)) == set(rules())


def test_every_declaration_is_complete_and_its_facts_have_loaders():
    """GIVEN every rule THEN its id names its module, its texts are filled in, and each fact it
    names is a loader of analysis/loading.py."""
    names = [Path(m).stem for m in modules()]
    assert [n[:5].upper() for n in names] == list(rules())
    for rule in rules().values():
        assert re.fullmatch(r"TR\d{3}", rule.id)
        for text in (rule.title, rule.levels, rule.summary, rule.reported_when, rule.at, rule.why, rule.fix):
            assert text.strip() and text == text.strip(), rule.id
        assert str(rule.severity) in rule.levels, rule.id
        assert set(rule.facts) <= loading.CORE_PARTS.keys() | loading.LOADERS.keys(), rule.id
    assert loading.wanted() == {n for r in rules().values() for n in r.facts}
    assert all(Path(p).is_relative_to(Path(catalog.__file__).parent) for p in modules())


def test_only_tr004_highlights_in_the_memory_map():
    assert [r.id for r in rules().values() if r.highlight is not None] == ["TR004"]
