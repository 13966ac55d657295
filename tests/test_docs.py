"""The docs a user can open: every ``*.md`` a file cites exists in the repository; the
documentation site's navigation and relative links resolve; its Results page and README's
headline table still say what the lab log says; the Layout of docs/contributing.md
names every module; and the user docs' cheap Python snippets run as written (README, getting
started, and the guides to optimize, bandits, BoTorch, Ax and Optuna; budgets and rounds shortened
where a snippet's own would take seconds).

Cheap: nothing here builds the site (``mkdocs build --strict`` does, in ``make docs``)."""

import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# generated, installed or vendored trees; training_runs/ holds run states, not docs
SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "npbandit.egg-info", "training_runs", "runs",
             ".pytest_cache", "build", "dist"}
TEXT_SUFFIXES = {".py", ".md", ".sh", ".toml", ".cfg", ".ini", ".txt", ".yml", ".yaml"}
TEXT_NAMES = {"Makefile", "run"}  # run: .ci/run
MD_REF = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.md)(?![\w])")


def text_files():
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT)
        if any(part in SKIP_DIRS for part in rel.parts[:-1]) or not path.is_file():
            continue
        if path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
            yield path


def resolves(ref: str, source: Path) -> bool:
    """A reference is good if the file exists relative to the citing file, the
    repository root, docs/ (the site's pages, cited by name) or experiments/log/
    (benchmark scripts name the pages they write there)."""
    return any((base / ref).is_file() for base in (source.parent, ROOT, ROOT / "docs", ROOT / "experiments" / "log"))


def dangling_references(files):
    """``path:line: ref`` for every ``*.md`` reference in ``files`` that does not resolve."""
    missing = []
    for path in files:
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for ref in MD_REF.findall(line):
                if "://" in line and f"/{ref}" in line.split("://", 1)[1]:
                    continue  # part of a URL: not a file of this repository
                if not resolves(ref, path):
                    missing.append(f"{shown}:{number}: {ref}")
    return missing


def test_every_cited_markdown_file_is_in_the_repository():
    files = list(text_files())
    assert any(p.name == "README.md" for p in files) and any(p.suffix == ".py" for p in files)
    assert dangling_references(files) == []


def test_the_reference_check_reports_a_file_that_is_not_here(tmp_path):
    gone = "PROTOCOLS" + ".md"  # spelled in two parts so that this file cites nothing missing
    cites = tmp_path / "cites.py"
    cites.write_text(f'"""The wheel bandit of {gone} §3.\n\nSee README.md."""\n')
    assert dangling_references([cites]) == [f"{cites}:1: {gone}"]


LAYOUT_PAGE = ROOT / "docs" / "contributing.md"


def layout_block() -> list[str]:
    text = LAYOUT_PAGE.read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1].splitlines()


def layout_files() -> set[str]:
    """Repository paths of the files the Layout of docs/contributing.md names: a line at column 0 whose
    first word ends with ``/`` opens a directory, and the first word of each indented
    line below it is a file (or folder) of that directory; a ``.py`` path at column 0
    names itself."""
    named, directory = set(), None
    for line in layout_block():
        if not line.strip():
            continue
        head = line.split()[0]
        if not line[0].isspace():
            directory = head if head.endswith("/") else None
            if head.endswith(".py"):
                named.add(head)
        elif directory is not None and head.endswith(".py"):
            named.add(directory + head)
    return named


def test_layout_names_every_module_and_only_existing_ones():
    named = layout_files()
    modules = {p.relative_to(ROOT).as_posix() for top in ("npbandit", "experiments/benchmarks")
               for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts}
    assert modules, "no modules found"
    assert sorted(modules - named) == [], "modules missing from the Layout of docs/contributing.md"
    assert sorted(n for n in named if not (ROOT / n).is_file()) == [], "Layout names files that do not exist"


# --- the documentation site (mkdocs.yml + docs/) ---------------------------------------

DOCS = ROOT / "docs"
# a Markdown link or image: [text](target) / ![alt](target); the target up to a space or ")"
MD_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
NAV_PAGE = re.compile(r"^\s*-\s+(?:(?:\"[^\"]*\"|[^:\"\n]+):\s+)?([\w./-]+\.md)\s*$")


def nav_pages() -> list[str]:
    """The pages mkdocs.yml's nav lists (``- Title: <page>`` or ``- <page>`` lines),
    read without a YAML parser so the test needs nothing outside the test extra."""
    lines = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:\n", 1)[1].splitlines()
    section = []
    for line in lines:
        if line and not line[0].isspace():
            break  # the next top-level key
        section.append(line)
    return [m.group(1) for line in section if (m := NAV_PAGE.match(line))]


def broken_links(pages) -> list[str]:
    """``page: target`` for every relative link or image in ``pages`` whose file does not
    exist relative to the page (anchors are mkdocs' to check; URLs are not followed)."""
    broken = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)  # code blocks hold no links
        for target in MD_LINK.findall(text):
            if "://" in target or target.startswith(("#", "mailto:")):
                continue
            path = target.split("#", 1)[0]
            if not (page.parent / path).is_file():
                shown = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page
                broken.append(f"{shown}: {target}")
    return broken


def test_every_page_of_the_site_navigation_exists():
    pages = nav_pages()
    assert "index.md" in pages and len(pages) >= 10, pages
    assert sorted(p for p in pages if not (DOCS / p).is_file()) == []
    # every page is reachable from the navigation (mkdocs --strict refuses one that is not)
    on_disk = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert sorted(on_disk - set(pages)) == []


def test_every_relative_link_in_the_docs_resolves():
    assert broken_links(sorted(DOCS.rglob("*.md"))) == []


def test_the_link_check_reports_a_missing_page(tmp_path):
    md = ".md"  # page names spelled in two parts so that this file cites nothing missing
    page = tmp_path / f"page{md}"
    (tmp_path / f"here{md}").write_text("# here\n")
    page.write_text(f"[ok](here{md}#top) [gone](gone{md}) ![fig](figures/none.png) [web](https://example.org/x{md})\n"
                    f"```\n[in code](nowhere{md})\n```\n")
    assert broken_links([page]) == [f"{page}: gone{md}", f"{page}: figures/none.png"]


def test_readme_stays_a_front_page():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


# --- snippets that run as written (the cheap ones: shipped checkpoints, no training) -------


def python_blocks(page: str) -> list[str]:
    """The ```python blocks of ``page`` (a path from the repository root), in order."""
    return re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(encoding="utf-8"), flags=re.S)


def run_block(code: str, namespace: dict | None = None) -> dict:
    namespace = {} if namespace is None else namespace
    exec(compile(code, "<docs snippet>", "exec"), namespace)
    return namespace


def test_the_first_steps_of_getting_started_and_readme_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the runs log to ./npbandit.db
    door_1 = run_block(python_blocks("README.md")[0])["result"]
    assert len(door_1.history) == 30 and door_1.run_id == 1
    first, loading = python_blocks("docs/getting-started.md")
    result = run_block(first)["result"]
    assert len(result.history) == 30 and result.best_value == min(h["value"] for h in result.history)
    assert set(result.history[-1]) == {"t", "x", "value", "best_value", "failed"}  # as its comment lists
    model = run_block(loading)["model"]
    assert not model.training and model.card["name"] == "cmanp-bo"


def test_the_wheel_surrogate_snippet_of_the_bandits_guide_runs():
    snippet = next(b for b in python_blocks("docs/guides/bandits.md") if "RewardFill" in b)
    namespace = run_block(snippet)
    dist, rows = namespace["dist"], namespace["rows"]
    assert dist.mean.shape == dist.icdf(namespace["torch"].tensor(0.84)).shape == (1, 8, 5)
    assert rows.shape == (1, 3, 5) and bool(namespace["torch"].isfinite(rows).all())


def test_your_own_bandit_snippet_runs_every_policy_it_names(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    snippet = next(b for b in python_blocks("docs/guides/bandits.md") if "class LinearBandit" in b)
    assert snippet.count("steps=500") == 1
    run_block(snippet.replace("steps=500", "steps=12"))  # the page's rounds, shortened: the names are checked
    printed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in printed] == ["cmanp-bo-ucb", "cmanp-bo-thompson", "linucb", "lin-ts",
                                                     "gp-ucb", "uniform"]


def test_the_data_set_sweeps_of_the_bandits_guide_run_as_written(tmp_path, monkeypatch, capsys):
    """The guide's commands, their rounds shortened and their database in tmp_path (an engine of
    the relative default URL may be open on another test's directory), on a CSV file of the
    columns they name."""
    import shlex

    from npbandit.cli import main
    from npbandit.storage import list_runs

    monkeypatch.chdir(tmp_path)  # the runs log to ./npbandit.db
    rows = ["1.4,5.1,setosa", "4.7,7.0,versicolor", "1.3,4.9,setosa", "6.0,6.3,virginica", "4.5,6.4,versicolor",
            "5.1,5.8,virginica"]
    (tmp_path / "flowers.csv").write_text("petal,sepal,species\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (commands,) = re.findall(r"```bash\n(.*?)```", section("docs/guides/bandits.md", "Data-set sweeps"), flags=re.S)
    lines = commands.strip().splitlines()
    assert [shlex.split(line)[:2] for line in lines] == [[".venv/bin/npbandit", "bandit"]] * 2 + [
        [".venv/bin/npbandit", "report"]]
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    for line in lines:
        args = shlex.split(line.replace("--steps 500", "--steps 3"))[1:]
        assert "--steps" in args or args[0] == "report"
        assert main([*args, "--db", db]) == 0, line
    runs = list_runs(db)
    assert len(runs) == 30 + 9 and all(r.status == "completed" for r in runs)
    assert "csv=flowers.csv" in capsys.readouterr().out
    snippet = next(b for b in python_blocks("docs/guides/bandits.md") if "run_bandit_sweep" in b)
    assert snippet.count("steps=500") == 1
    assert snippet.count('db="sqlite:///npbandit.db"') == 1
    results = run_block(snippet.replace("steps=500", "steps=3").replace('db="sqlite:///npbandit.db"', f"db={db!r}"))
    assert len(results["results"]) == 6 and len(list_runs(db)) == 45


def test_the_commands_of_readmes_door_2_run_and_write_the_figure_they_name(tmp_path, monkeypatch, capsys):
    """README's Door 2, its rounds shortened and its database in tmp_path: the sweeps run and
    ``report --plot`` writes the figure the comment names (a database of bandit runs alone
    gives one figure, at the path given)."""
    import shlex

    from npbandit.cli import main

    monkeypatch.chdir(tmp_path)
    (commands,) = re.findall(r"```bash\n(.*?)```", section("README.md", "Door 2"), flags=re.S)
    lines = [line.partition("#")[::2] for line in commands.strip().splitlines()]
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    for command, _ in lines:
        args = shlex.split(command)[1:]
        if args[0] == "bandit":
            args = [a for i, a in enumerate(args) if "--steps" not in (a, args[i - 1])] + ["--steps", "3"]
        assert main([*args, "--db", db]) == 0, command
    named = re.search(r"figures?: (\S+?\.png)", lines[-1][1])
    assert named is not None, lines[-1][1]
    assert (tmp_path / named.group(1)).is_file(), sorted(p.name for p in tmp_path.iterdir())
    assert f"wrote {named.group(1)}" in capsys.readouterr().out


def test_the_several_objectives_command_of_the_cli_guide_runs_as_written(tmp_path, monkeypatch, capsys):
    """The CLI guide's module written where it says and its command run, the budget shortened and
    the database in tmp_path; the front it prints has the header the page describes."""
    import shlex
    import sys

    from npbandit.cli import main

    monkeypatch.chdir(tmp_path)  # the objective's module is looked up in the current directory
    text = section("docs/guides/cli-and-reports.md", "Several objectives")
    (module,) = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    (command,) = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    name = re.search(r'"""(\w+)\.py:', module)[1]
    monkeypatch.delitem(sys.modules, name, raising=False)  # the page's module, not another test's of that name
    (tmp_path / f"{name}.py").write_text(module, encoding="utf-8")
    args = shlex.split(shortened(command.strip(), ("--budget 30", "--budget 6")))
    assert args[:2] == [".venv/bin/npbandit", "optimize"] and f"{name}:f" in args
    assert main([*args[1:], "--db", str(tmp_path / "runs.db")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(" on the Pareto front after 6 evaluations")
    assert lines[-1].startswith("runs saved in ")  # the database, as the page says
    assert lines[1] == "  t  value 1 (minimize)  value 2 (minimize)  point"


def section(page: str, heading: str) -> str:
    """The text of ``page`` from the heading that starts with ``heading`` to the next heading."""
    text = (ROOT / page).read_text(encoding="utf-8")
    start = re.search(rf"^#+ {re.escape(heading)}.*$", text, flags=re.M)
    assert start is not None, heading
    end = re.search(r"^#+ ", text[start.end():], flags=re.M)
    return text[start.end():start.end() + end.start()] if end else text[start.end():]


def shortened(code: str, *replacements: tuple[str, str]) -> str:
    """``code`` with each ``(old, new)`` replaced, every ``old`` checked to occur exactly once, so
    that a page whose numbers change fails here rather than running unshortened."""
    for old, new in replacements:
        assert code.count(old) == 1, f"{old!r} occurs {code.count(old)} times in the snippet"
        code = code.replace(old, new)
    return code


def test_the_wheel_sweep_and_classification_snippets_of_the_bandits_guide_run(tmp_path, monkeypatch, capsys):
    from npbandit.storage import list_runs

    monkeypatch.chdir(tmp_path)  # the runs log to ./npbandit.db
    blocks = python_blocks("docs/guides/bandits.md")
    sweep = next(b for b in blocks if "run_wheel_bandits(" in b)
    results = run_block(shortened(sweep, ("steps=2000", "steps=3")))["results"]
    runs = list_runs("sqlite:///npbandit.db")
    assert len(results) == len(runs) == 4 and all(r.status == "completed" for r in runs)
    capsys.readouterr()
    # the page's iris example uses the imports of "Your own bandit" above it; 10 rounds reach the
    # per-arm models (2 per arm of 3, then at random until more rounds than the 6 columns)
    own = next(b for b in blocks if "class LinearBandit" in b)
    imports = "\n".join(line for line in own.splitlines() if line.startswith(("import ", "from ")))
    iris = next(b for b in blocks if '"npbandit/ClassificationBandit-v0", dataset="iris"' in b)
    run_block(imports + "\n" + shortened(iris, ("horizon=500", "horizon=10")))
    printed = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [p[0] for p in printed] == ["cmanp-bo", "linucb", "uniform"]
    assert all(0.0 <= float(p[1]) <= 10.0 for p in printed)  # a regret of at most 1 a round


# the shortened space runs stay inside their initial design, which optimize says in a UserWarning
@pytest.mark.filterwarnings("ignore:budget=.*does not exceed n_init:UserWarning")
def test_the_optimize_guide_snippets_run_with_shortened_budgets(tmp_path, monkeypatch):
    """Every snippet of the optimize guide, in order, in one namespace, as a reader runs the page;
    the objectives the page leaves to the reader (``objective``, ``train_and_score``'s body,
    ``bounds``, ``noisy_f``) given, and the budgets cut to a few evaluations."""
    import numpy as np

    monkeypatch.chdir(tmp_path)  # the runs log to ./npbandit.db
    first, space, conditional, warm, constrained, linear, several, callbacks, batched, asked, noisy = python_blocks(
        "docs/guides/optimize.md")
    rng = np.random.default_rng(0)
    ns = {"objective": lambda x: float((x[0] - 1) ** 2 + (x[1] + 2) ** 2), "bounds": [[0, 0], [1, 1]],
          "noisy_f": lambda x: float(x[0] + x[1] + 0.1 * rng.standard_normal())}
    run_block(shortened(first, ("budget=60", "budget=7")), ns)
    assert ns["result"].run_id == 1 and ns["result"].recommended_x.shape == (2,)

    score = "    return params['lr'] * params['layers'] + params['dropout'] + (params['act'] == 'relu')\n"
    run_block("import npbandit\n" + shortened(space, ("    ...\n", score), ("budget=60", "budget=4")), ns)
    assert set(ns["result"].best_x) == {"lr", "layers", "dropout", "act"}
    branches = {"svm": {"model", "C", "gamma", "scale_inputs"}, "forest": {"model", "trees", "depth", "scale_inputs"}}
    seen = []

    def branch_score(params):  # the conditional snippet's objective: gets each branch's parameters alone
        assert set(params) == branches[params["model"]], params
        seen.append(params["model"])
        return params.get("C", 1.0) / 1e3 + params.get("depth", 0) / 16

    ns["train_and_score"] = branch_score
    run_block(shortened(conditional, ("budget=60", "budget=8")), ns)
    assert len(ns["result"].history) == 8 and set(seen) == {"svm", "forest"}
    run_block(shortened(warm, ("initial=13", "initial=first.run_id"), ("budget=20 - 11", "budget=2"),
                        ("budget=20 - len(", "budget=4 - len("), ("budget=20)", "budget=4)"),
                        ("budget=20, initial=first", "budget=3, initial=first"),
                        ("budget=20, db=None", "budget=4, db=None")), ns)
    assert len(ns["first"].history) == 4 and len(ns["more"].history) == 3 and len(ns["rest"].history) == 2

    run_block(shortened(constrained, ("budget=30", "budget=7")), ns)
    assert ns["result"].feasible in (True, False) and len(ns["result"].history) == 7
    ns["f"], ns["train"] = ns["objective"], lambda p: (p["lr"] - 0.05) ** 2 + p["momentum"] + p["layers"]
    run_block(shortened(linear, ("budget=30", "budget=4"), ("budget=40", "budget=4")), ns)
    assert all(h["x"]["lr"] <= 0.1 * h["x"]["momentum"] for h in ns["result"].history)
    run_block(shortened(several, ("budget=40", "budget=7")), ns)
    assert len(ns["result"].history) == 7 and ns["result"].front_values.shape[1] == 2
    assert ns["result"].objective_names == ("cost", "accuracy")  # the guide shows the objectives named
    run_block(shortened(callbacks, ("budget=500", "budget=9")), ns)
    stopped = len(ns["result"].history) < 9
    assert stopped == (ns["result"].stopped_early is not None)
    run_block(shortened(batched, ("budget=60", "budget=6")), ns)
    assert len(ns["result"].history) == 6 and ns["result"].history[0]["worker"]
    ns["run_on_the_rig"] = ns["objective"]
    with pytest.warns(UserWarning, match="never told"):
        run_block(shortened(asked, ("budget=30", "budget=7"), ("range(30)", "range(7)")), ns)
    assert len(ns["result"].history) == 2 and ns["result"].stopped_early == "by close() after 2 of 6 evaluations"
    assert ns["opt"].status == "completed" and ns["more"].status == "completed"
    run_block(shortened(noisy, ("budget=60", "budget=6")), ns)
    assert ns["result"].recommended_by in ("model", "observed")


def test_the_botorch_guide_snippets_run_on_a_small_problem():
    """The swap (README's Door 3 is the same snippet), the candidate search and the threads
    block, given the data and imports the page leaves to the reader's BoTorch script."""
    import textwrap

    swap, objectives, search, threads = python_blocks("docs/guides/botorch.md")
    assert swap == python_blocks("README.md")[1]
    setup = ("import torch\nfrom botorch.acquisition import LogExpectedImprovement\n"
             "from botorch.fit import fit_gpytorch_mll\nfrom botorch.optim import optimize_acqf\n"
             "from gpytorch.mlls import ExactMarginalLogLikelihood\n"
             "bounds = torch.tensor([[0.0, 0.0], [1.0, 1.0]], dtype=torch.float64)\n"
             "train_X = torch.rand(8, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))\n"
             "train_Y = -((train_X - 0.3) ** 2).sum(-1, keepdim=True)\n")
    lines = swap.splitlines()
    at = next(i for i, line in enumerate(lines) if "optimize_acqf(" in line) + 1
    evaluate = "new_Y = -((candidate - 0.3) ** 2).sum(-1, keepdim=True)"  # the reader's objective
    ns = run_block(setup + "\n".join([*lines[:at], evaluate, *lines[at:]]) + "\n")
    assert ns["model"].train_X.shape == (9, 2)  # the candidate joined the 8 points
    run_block(search, ns)
    assert ns["candidate"].shape == (1, 2) and bool((ns["points"] >= 0).all() and (ns["points"] <= 1).all())
    several = run_block(objectives)  # its own data and imports
    assert several["model"].num_outputs == 2 and several["model"].train_Y.shape == (11, 2)
    run_block(textwrap.dedent(threads), {"iterations": 2})


def test_the_optuna_guide_snippet_runs():
    optuna = pytest.importorskip("optuna")
    from npbandit.integrations.optuna import NPSampler

    snippet, several = python_blocks("docs/guides/optuna.md")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    ns = run_block(shortened(snippet, ("n_trials=60", "n_trials=11")),
                   {"objective": lambda trial: (trial.suggest_float("x", -1, 1) - 0.3) ** 2})
    assert len(ns["study"].trials) == 11 and all(t.state.name == "COMPLETE" for t in ns["study"].trials)

    def two_objectives(trial):
        x = trial.suggest_float("x", -1, 1)
        return (x - 0.3) ** 2, (x + 0.3) ** 2

    ns = run_block(shortened(several, ("n_trials=60", "n_trials=12")), {**ns, "two_objectives": two_objectives})
    assert len(ns["study"].trials) == 12 and all(t.state.name == "COMPLETE" for t in ns["study"].trials)
    assert ns["front"] and all(len(t.values) == 2 for t in ns["front"])
    assert 'checkpoint="tnpd-bo" by default' in snippet
    assert inspect.signature(NPSampler).parameters["checkpoint"].default == "tnpd-bo"


def test_the_ax_guide_snippet_runs():
    pytest.importorskip("ax")
    from npbandit import NPModel

    snippet, _ = python_blocks("docs/guides/ax.md")
    config = run_block(snippet)["model_config"]
    assert config.botorch_model_class is NPModel and config.model_options == {"checkpoint": "cmanp-bo"}


@pytest.mark.slow
@pytest.mark.integration
def test_the_several_objectives_snippet_of_the_ax_guide_runs_with_fewer_trials():
    """Two objectives with thresholds, the shipped network: the initial trials and one proposed
    by the NP models (the page's 12 trials shortened to 6)."""
    pytest.importorskip("ax")
    import warnings

    _, snippet = python_blocks("docs/guides/ax.md")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Ax's and pandas' deprecation notices
        ns = run_block(shortened(snippet, ("range(12)", "range(6)")))
    trials = ns["client"]._experiment.trials.values()
    assert [t.status.name for t in trials] == ["COMPLETED"] * 6
    assert [t.generator_runs[0]._generation_node_name for t in trials][5:] == ["MBM"]
    assert ns["frontier"] and all(set(values) == {"f", "g"} for _, values, _, _ in ns["frontier"])
