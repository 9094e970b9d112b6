"""Every command says what it does, every argument has a help text, and a default is said once, never as None."""

from __future__ import annotations

import argparse

import pytest

from g2m_cli.main import make_parser


def _commands(parser: argparse.ArgumentParser, prefix: str = "g2m") -> list[tuple[str, argparse.ArgumentParser]]:
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += [(f"{prefix} {name}", sub), *_commands(sub, f"{prefix} {name}")]
    return out


COMMANDS = _commands(make_parser())


@pytest.mark.parametrize(("name", "parser"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_help(name, parser):
    assert parser.description or any(isinstance(a, argparse._SubParsersAction) for a in parser._actions), (
        f"{name} has no description")
    bare = [a.dest for a in parser._actions if a.help is None and not isinstance(a, argparse._SubParsersAction)]
    assert bare == [], f"{name}: no help for {bare}"
    text = parser.format_help()
    assert "(default: None)" not in text and "(default: False)" not in text, name
    for line in text.split("\n  -"):
        assert line.count("default") <= 1 or "defaults" in line, f"{name}: a default said twice: {line}"

