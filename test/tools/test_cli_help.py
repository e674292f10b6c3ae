"""Every sub-command's ``--help``: each option has a help text, and defaults are shown only where there is one."""

from __future__ import annotations

import pytest

from robot_state_estimator.tools import cli


@pytest.mark.parametrize("command", sorted(cli.SUBCOMMANDS))
def test_help_shows_real_defaults_only(command: str, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main([command, "--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    assert "(default: None)" not in text and "(default: False)" not in text


def test_every_option_has_a_help_text() -> None:
    import argparse
    import importlib

    for command, (module_name, _) in cli.SUBCOMMANDS.items():
        parser = argparse.ArgumentParser()
        importlib.import_module(module_name).add_arguments(parser)
        bare = [a.option_strings or a.dest for a in parser._actions if not a.help]
        assert not bare, f"{command}: options without help: {bare}"
