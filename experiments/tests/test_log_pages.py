"""The pages that copy the lab log (experiments/log/): the documentation site's Results page and
README's headline table still say what the log says."""

import pytest

from .helpers import LAB, ROOT

pytestmark = pytest.mark.lab

DOCS = ROOT / "docs"
LOG = LAB / "log"


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


def test_the_results_page_copies_current_rows_of_the_lab_log():
    """Every table row of docs/current-results.md is a row of experiments/log/: a benchmark
    that is re-run changes the log, and this fails until the page is updated too."""
    log_rows = set(table_rows((LOG / "results.md").read_text(encoding="utf-8"))
                   + table_rows((LOG / "benchmarks.md").read_text(encoding="utf-8")))
    page_rows = table_rows((DOCS / "current-results.md").read_text(encoding="utf-8"))
    assert len(page_rows) > 20
    assert [row for row in page_rows if row not in log_rows] == []


def first_table(text: str) -> list[str]:
    """The rows of the first Markdown table in ``text``."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    return rows


def log_section(page: str, name: str) -> str:
    text = (LOG / page).read_text(encoding="utf-8")
    return text.split(f"<!-- {name}:begin -->", 1)[1].split(f"<!-- {name}:end -->", 1)[0]


def cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def test_readme_headline_table_is_the_bo_tables_medians():
    """README's headline rows (method | one median per function) equal the first number of
    the matching column of the BO regret table in experiments/log/results.md."""
    regret = first_table(log_section("results.md", "bo"))
    header = cells(regret[0])
    medians = {cells(r)[0]: {m: cells(r)[i].split()[0] for i, m in enumerate(header) if i} for r in regret[2:]}
    readme = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Headline result\n", 1)[1]
    rows = first_table(readme)
    functions = cells(rows[0])[1:]
    assert functions == list(medians) and len(rows) >= 5
    for row in rows[2:]:
        method, *values = cells(row)
        assert values == [medians[f][method] for f in functions], method
