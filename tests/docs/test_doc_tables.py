"""The privacy documentation states each solver's relation and guarantee.

Parses the per-solver table of ``doc/privacy_statement.rst`` and the
neighbouring paragraph of ``doc/privacy_model.rst`` and compares them with
the ``neighbouring`` and ``privacy_notion`` every registered solver
declares, so the docs cannot drift from the code again (they once described
dp-gd as Gaussian and add/remove after it became pure-DP and replace-one).
"""

import re
from pathlib import Path

import pytest

from dpestim.solvers import SOLVERS

DOC = Path(__file__).resolve().parents[2] / "doc"


def _statement_rows():
    """``{solver name: (neighbouring cell, accounting cell)}``."""
    text = (DOC / "privacy_statement.rst").read_text()
    table = text[text.index("Per solver") : text.index("What every solver is checked")]
    rows = {}
    for block in re.split(r"\n   \* - ", table)[1:]:
        cells = [" ".join(c.split()) for c in re.split(r"\n     - ", block.rstrip())]
        for name in re.findall(r"``([a-z0-9-]+)``", cells[0]):
            rows[name] = (cells[2], cells[4])
    return rows


ROWS = _statement_rows()


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_privacy_statement_table_matches_the_solver(name):
    solver = SOLVERS[name]()
    assert name in ROWS, f"{name} has no row in doc/privacy_statement.rst"
    neighbouring, accounting = ROWS[name]
    expected = {
        "add_or_remove_one": "add/remove one record",
        "replace_one": "replace one record",
    }[solver.neighbouring]
    assert neighbouring.startswith(expected), (name, neighbouring)
    pure = accounting.startswith("pure epsilon-DP")
    assert pure == (solver.privacy_notion == "pure"), (name, accounting)
    if not pure:
        assert accounting.startswith("``(epsilon, delta)``"), (name, accounting)


def test_privacy_model_lists_each_solver_under_its_relation():
    text = " ".join((DOC / "privacy_model.rst").read_text().split())
    start = text.index("Neighbouring datasets")
    para = text[start : text.index("The dataset size is public")]
    add_part, replace_part = para.split('declares ``neighbouring = "replace_one"``')
    for name in SOLVERS:
        relation = SOLVERS[name]().neighbouring
        part = add_part if relation == "add_or_remove_one" else replace_part
        assert f"``{name}``" in part or (
            name.endswith("-opt") and '"-opt" variants' in part
        ), name
