"""The environment a benchmark's numbers were measured in: the package versions ``publish`` records (every results
JSON, and a line of its section)."""

import importlib.metadata
import json
import re

import pytest

from .helpers import load_benchmark

pytestmark = pytest.mark.lab

ABSENT = "npbandit-test-no-such-distribution"  # installed nowhere


def installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def test_versions_are_read_from_the_metadata_and_an_absent_package_is_named_absent():
    import numpy
    import scipy

    common = load_benchmark("common")
    versions = common.package_versions(("numpy", "scipy", ABSENT))
    assert versions == {"numpy": numpy.__version__, "scipy": scipy.__version__, ABSENT: None}
    assert common.packages_line(versions, ("numpy", ABSENT, "numpy")) == \
        f"Packages: numpy {numpy.__version__}, {ABSENT} absent."
    assert common.packages_line({"numpy": "2.0"}, ("numpy", "optuna"), where="r.json") == \
        "Packages: numpy 2.0, optuna not recorded (every recorded version: r.json)."
    assert common.packages_line(None, ("numpy",)).startswith("Packages: not recorded with these numbers")
    for bad in ("numpy", ["numpy", ""], [3]):  # a bare string would be read letter by letter
        with pytest.raises(TypeError, match="names: expected a sequence of distribution names"):
            common.package_versions(bad)
    with pytest.raises(TypeError, match="versions: expected"):
        common.packages_line(["numpy 2.0"], ("numpy",))


def published(tmp_path, monkeypatch, payload: dict, **options) -> tuple[dict, list[str]]:
    """What ``publish`` writes for a small section under ``tmp_path``: the JSON record and the section's paragraphs."""
    common = load_benchmark("common")
    monkeypatch.setattr(common, "ROOT", tmp_path)
    text = "## A table\n\nCommand: `python x.py` (CPU: x86_64).\n\n| a |\n|---|\n| 1 |\n"
    common.publish("sec", text, "sec.json", "python x.py", payload, **options)
    record = json.loads((tmp_path / "experiments" / "log" / "results" / "sec.json").read_text())
    page = (tmp_path / "experiments" / "log" / "benchmarks.md").read_text()
    return record, page.split("<!-- sec:begin -->\n", 1)[1].split("\n<!-- sec:end -->", 1)[0].split("\n\n")


def test_publish_records_every_version_and_the_section_names_its_own_packages(tmp_path, monkeypatch):
    common = load_benchmark("common")
    record, paragraphs = published(tmp_path, monkeypatch, {"rows": [1]}, packages=("optuna", "greenlet", ABSENT))
    assert list(record)[:3] == ["command", "machine", "packages"] and record["rows"] == [1]
    assert record["packages"] == {name: installed(name) for name in (*common.BENCH_PACKAGES, ABSENT)}
    assert record["packages"]["numpy"] is not None and record["packages"][ABSENT] is None
    # the line comes after the command's paragraph: the core packages, then the section's own, in that order
    assert paragraphs[:2] == ["## A table", "Command: `python x.py` (CPU: x86_64)."]
    assert paragraphs[3:] == ["| a |\n|---|\n| 1 |"]
    shown = re.fullmatch(r"Packages: (.*) \(every recorded version: experiments/log/results/sec\.json\)\.",
                         paragraphs[2]).group(1).split(", ")
    expected = [f"{n} {installed(n)}" if installed(n) else f"{n} absent"
                for n in (*common.CORE_PACKAGES, "optuna", "greenlet", ABSENT)]
    assert shown == expected and shown[-1] == f"{ABSENT} absent"
    with pytest.raises(TypeError, match="packages: expected"):
        published(tmp_path, monkeypatch, {}, packages="optuna")


def test_a_saved_record_published_again_keeps_its_own_versions_or_says_it_has_none(tmp_path, monkeypatch):
    saved = {"numpy": "1.26.0", "scipy": "1.11.0", "botorch": "0.17.0", "gpytorch": "1.14"}
    record, paragraphs = published(tmp_path, monkeypatch, {"packages": saved, "rows": []})
    assert record["packages"] == saved
    assert paragraphs[2].startswith("Packages: numpy 1.26.0, scipy 1.11.0, botorch 0.17.0, gpytorch 1.14 (")
    record, paragraphs = published(tmp_path, monkeypatch, {"packages": None, "rows": []})
    assert record["packages"] is None and paragraphs[2].startswith("Packages: not recorded with these numbers")

