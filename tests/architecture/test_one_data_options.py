"""The command line names a table's columns in one place (core.cli.options: add_data_options
declares them, data_columns passes them on): ``screen`` declared two of its own and had no
``--label-column``, its cluster path passed no label, and ``evaluate`` had none."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OWN = re.compile(r"""["']--(smiles|id|label)-column["']|args\.(smiles|id|label)_column""")


def test_only_the_options_module_declares_or_reads_the_column_options():
    found = [f"{p.relative_to(ROOT)}:{n}" for p in (ROOT / "core" / "cli").glob("*.py") if p.name != "options.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if OWN.search(line)]
    assert not found, f"use add_data_options / data_columns: {found}"


def test_every_command_that_reads_a_table_takes_all_three():
    from core.cli.main import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for command in ("info", "train", "score", "screen", "evaluate"):
        options = {o for a in sub.choices[command]._actions for o in a.option_strings}
        assert {"--smiles-column", "--id-column", "--label-column"} <= options, command
