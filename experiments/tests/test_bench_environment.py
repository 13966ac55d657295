"""The environment a benchmark's numbers were measured in: the package versions ``publish`` records (every results
JSON, and a line of its section), and experiments/constraints-bench.txt, the pins `make bench-env` installs under
(experiments/benchmarks/bench_constraints.py writes it)."""

import importlib.metadata
import json
import re
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .helpers import LAB, ROOT, load_benchmark

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


def test_a_section_from_stored_runs_names_the_versions_its_runs_recorded(tmp_path, monkeypatch):
    runs = [{"numpy": "2.1.0", "scipy": "1.14.0", "botorch": "0.16.0"}] * 3 + [
        {"numpy": "2.1.0", "scipy": "1.14.0", "botorch": "0.15.1"}, {"botorch": "0.15.1"}]  # the last: older
    record, paragraphs = published(tmp_path, monkeypatch, {"rows": []}, packages=("optuna",), runs=runs)
    assert record["run_packages"]["numpy"] == "2.1.0 (4 runs) / not recorded (1 run)"
    assert record["run_packages"]["botorch"] == "0.15.1 (2 runs) / 0.16.0 (3 runs)"
    assert record["run_packages"]["gpytorch"] is None  # no run recorded it
    assert paragraphs[2] == (
        "Packages: numpy 2.1.0 (4 runs) / not recorded (1 run), scipy 1.14.0 (4 runs) / not recorded (1 run), "
        f"botorch 0.15.1 (2 runs) / 0.16.0 (3 runs), gpytorch {installed('gpytorch')}, optuna "
        + (installed("optuna") or "absent")
        + " (numpy, scipy, botorch: as the 5 runs recorded them; gpytorch, optuna: installed when published; "
        "every recorded version: experiments/log/results/sec.json).")


CONSTRAINTS = LAB / "constraints-bench.txt"


def test_the_constraints_file_pins_one_exact_version_a_line_and_torch_as_the_makefile_does():
    pins = load_benchmark("bench_constraints").read_pins(CONSTRAINTS.read_text())
    makefile = (ROOT / "Makefile").read_text()
    torch_pin = re.search(r"^TORCH\s*:=\s*torch==(\S+)$", makefile, re.M).group(1)
    assert pins["torch"] == torch_pin == "2.13.0"
    assert re.search(r"^BENCH_CONSTRAINTS\s*:=\s*experiments/constraints-bench\.txt$", makefile, re.M)
    # every package the numbers depend on is pinned, or named in the header as not installed where it was written
    header = " ".join(line for line in CONSTRAINTS.read_text().splitlines() if line.startswith("#"))
    not_installed = re.search(r"Not installed there, so not pinned: ([^.]*)\.", header)
    unpinned = set() if not_installed is None else set(not_installed.group(1).split(", "))
    assert {canonicalize_name(n) for n in load_benchmark("common").BENCH_PACKAGES} - set(pins) == unpinned


def test_every_pin_is_inside_the_ranges_pyproject_admits_for_what_bench_env_installs():
    """`make bench-env` installs the project with the extras below under the pins: a pin outside a range there
    would make pip refuse (pyproject moved on and the file was not written again)."""
    pins = load_benchmark("bench_constraints").read_pins(CONSTRAINTS.read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = re.search(r'-e "\.\[([\w,]+)\]"', (ROOT / "Makefile").read_text().split("\nbench-env:", 1)[1]).group(1)
    requirements = [Requirement(r) for r in project["dependencies"]]
    requirements += [Requirement(r) for extra in extras.split(",") for r in project["optional-dependencies"][extra]]
    checked = [r for r in requirements if canonicalize_name(r.name) in pins]
    assert {"torch", "botorch", "optuna", "ax-platform"} <= {canonicalize_name(r.name) for r in checked}
    outside = [f"{r} vs {pins[canonicalize_name(r.name)]}" for r in checked
               if not r.specifier.contains(pins[canonicalize_name(r.name)], prereleases=True)]
    assert outside == []


def test_the_pins_are_the_roots_and_what_each_requires_directly_where_installed():
    script = load_benchmark("bench_constraints")
    versions = {"npbandit": "0.1.0.dev0", "a": "1.0+cpu", "b": "2.0", "c": "3.0", "d": "4.0", "e": "5.0"}
    requires = {"npbandit": ["A_>=1", "d; extra == 'x'"],
                "a": ["b", "c; python_version < '3'", "e; extra == 'test'", "gone"],
                "b": ["e"]}
    pinned, absent = script.pins(["npbandit", "a", "missing"], version=lambda n: versions.get(canonicalize_name(n)),
                                 requires=lambda n: requires.get(n, []))
    # a's local label dropped; b is a's direct requirement (not b's own e); c's marker, d's and e's extras do
    # not hold; "gone" is not installed; the project is never pinned; "missing", a root, is named
    assert pinned == {"a": "1.0", "b": "2.0"} and absent == ["missing"]
    assert script.render(pinned, absent).splitlines()[-3:] == [
        "# Not installed there, so not pinned: missing.", "a==1.0", "b==2.0"]
    with pytest.raises(TypeError, match="roots: expected"):
        script.pins([""])


def test_reading_a_constraints_file_refuses_what_is_not_one_exact_pin():
    read_pins = load_benchmark("bench_constraints").read_pins
    assert read_pins("# header\n\nTorch==2.13.0  # the CPU build\nlinear_operator==0.6.1\n") == {
        "torch": "2.13.0", "linear-operator": "0.6.1"}
    for text, problem in (("numpy>=2\n", "is not one"), ("numpy==2.0\nNumPy==2.1\n", "pinned twice"),
                          ("scipy==1.0; python_version > '3'\n", "is not one")):
        with pytest.raises(ValueError, match=problem):
            read_pins(text)


def test_publish_records_the_commit_measured_and_the_modified_files_and_a_saved_record_keeps_its_own(
        tmp_path, monkeypatch):
    import subprocess

    common = load_benchmark("common")
    record, _ = published(tmp_path, monkeypatch, {"rows": []})
    assert record["source"] is None  # not a git checkout: nothing claimed
    repo = tmp_path / "repo"
    (repo / "npbandit").mkdir(parents=True)
    (repo / "npbandit" / "m.py").write_text("x = 1\n")

    def git(*args):
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "one")
    head = git("rev-parse", "HEAD")
    record, _ = published(repo, monkeypatch, {"rows": []})
    assert record["source"] == {"commit": head, "modified": []}
    (repo / "npbandit" / "m.py").write_text("x = 2\n")
    assert common.source_revision(repo) == {"commit": head, "modified": ["npbandit/m.py"]}
    assert common.source_revision(repo / "npbandit") is None  # a folder inside a checkout is not one
    saved = {"packages": {"numpy": "1.26.0"}, "rows": []}
    assert published(repo, monkeypatch, saved)[0]["source"] is None  # measured before commits were recorded
    again = {**saved, "source": {"commit": "abc", "modified": []}}
    assert published(repo, monkeypatch, again)[0]["source"] == {"commit": "abc", "modified": []}
