"""What NPSampler tells an Optuna user: its log messages go through Optuna's logger (its
verbosity and handler), the independent-sampling warning says why and names its switch, and a
conditional (define-by-run) space is pointed out once per study."""

import contextlib
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

optuna = pytest.importorskip("optuna", reason="the Optuna integration needs the 'optuna' extra: "
                                              "pip install -e \".[optuna]\"")

from optuna.distributions import CategoricalDistribution, FloatDistribution  # noqa: E402
from optuna.trial import create_trial  # noqa: E402

from npbandit.integrations.optuna import NPSampler  # noqa: E402
from npbandit.integrations.optuna_trials import independent_reason  # noqa: E402

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]

optuna.logging.set_verbosity(optuna.logging.WARNING)


def sampler(**kwargs) -> NPSampler:
    return NPSampler(**{"n_startup_trials": 4, "num_restarts": 2, "raw_samples": 64, **kwargs})


def changing_range(t) -> float:
    """``y``'s range changes from trial to trial, so it is outside the intersection search space."""
    return t.suggest_float("x", 0, 1) + (t.suggest_categorical("c", ["a", "b"]) == "b") + \
        t.suggest_float("y", 0, 1 + t.number)


def conditional(t) -> float:
    """A categorical decides which other parameter the trial suggests."""
    if t.suggest_categorical("classifier", ["svc", "rf"]) == "svc":
        return t.suggest_float("svc_c", 1e-3, 1e3, log=True) / 1e3
    return t.suggest_int("rf_depth", 2, 32) / 32


# -- the independent-sampling warning ------------------------------------------------------

@contextlib.contextmanager
def propagating(verbosity: int | None = None):
    """Optuna's records passed on to the root logger (where caplog listens) while the block runs,
    at ``verbosity`` if given; both as they were after."""
    before = optuna.logging.get_verbosity()
    if verbosity is not None:
        optuna.logging.set_verbosity(verbosity)
    optuna.logging.enable_propagation()
    try:
        yield
    finally:
        optuna.logging.disable_propagation()
        optuna.logging.set_verbosity(before)


def test_parameters_left_to_the_independent_sampler_are_reported(caplog):
    with propagating():
        study = optuna.create_study(sampler=sampler(seed=0, n_startup_trials=2))
        study.optimize(changing_range, n_trials=3)
    # one message (a record can reach caplog twice: through Optuna's logger and through the root logger)
    ((name, message),) = {(r.name, r.getMessage()) for r in caplog.records if "independently" in r.getMessage()}
    assert message.startswith("NPSampler samples parameter 'y' of trial 2 independently, not with the NP: "
                              "its distribution changed between trials.")
    assert "warn_independent_sampling=False" in message  # the switch, as Optuna's own message names its
    assert len(message) < 160
    assert name.startswith("optuna.")  # under Optuna's logger: its verbosity and handler apply


def test_no_independent_sampling_warning_before_any_trial_completed(caplog):
    with propagating():
        study = optuna.create_study(sampler=sampler(seed=0, n_startup_trials=0))
        study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=2)
    assert "independently" not in caplog.text


def test_a_start_up_trial_is_not_warned_of_when_others_complete_while_it_runs(caplog):
    # with several workers, trials complete while a start-up trial runs: its later parameters are start-up
    # draws too, not parameters the NP was expected to propose, however many trials have completed by then
    def both(t):
        return t.suggest_float("x", 0, 1) + t.suggest_float("y", 0, 1)

    with propagating():
        study = optuna.create_study(sampler=sampler(seed=0, n_startup_trials=2))
        study.optimize(both, n_trials=1)
        running = study.ask()
        x = running.suggest_float("x", 0, 1)  # Optuna samples the relative point here: one completed, start-up
        study.optimize(both, n_trials=1)  # the second completes while it runs
        study.tell(running, x + running.suggest_float("y", 0, 1))
        late = study.ask()  # three completed: the NP proposes x and y, and z is new
        study.tell(late, both(late) + late.suggest_float("z", 0, 1))
    messages = {r.getMessage().split(":")[0] for r in caplog.records if "independently" in r.getMessage()}
    assert messages == {f"NPSampler samples parameter 'z' of trial {late.number} independently, not with the NP"}


def test_optunas_verbosity_silences_the_warning(caplog):
    # caplog listens on the root logger: with propagation on, a message reaches it unless Optuna's level stops it
    with propagating(optuna.logging.ERROR):
        study = optuna.create_study(sampler=sampler(seed=0, n_startup_trials=2))
        study.optimize(changing_range, n_trials=3)
    assert "NPSampler" not in caplog.text


def test_optunas_handler_formats_the_warning_and_its_verbosity_hides_it():
    # a fresh process, as a user runs a study: what reaches stderr at Optuna's default level, then at ERROR
    script = textwrap.dedent(f"""
        import sys, torch, optuna
        torch.set_num_threads(1)
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_optuna_messages import changing_range, sampler

        def run():
            study = optuna.create_study(sampler=sampler(seed=0, n_startup_trials=2))
            study.optimize(changing_range, n_trials=3)

        run()
        print("== ERROR ==", file=sys.stderr, flush=True)
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        run()
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    default, quiet = done.stderr.split("== ERROR ==\n")
    # Optuna's handler writes "[W <date> <time>] message"; Python's last-resort handler would write the bare message
    assert re.search(r"^\[W \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] NPSampler samples parameter 'y' of trial 2 "
                     r"independently", default, re.MULTILINE), default
    assert "NPSampler" not in quiet and "Trial 0 finished" not in quiet, quiet


@pytest.mark.parametrize(("distributions", "dist", "reason"), [
    ([{"x": FloatDistribution(0, 1)}, {}], FloatDistribution(0, 1), "some completed trial lacks it"),
    ([{"x": FloatDistribution(0, 1)}, {"x": FloatDistribution(0, 2)}], FloatDistribution(0, 2),
     "its distribution changed between trials"),
    # a branch's parameter whose range changed: that is why, though the other branch's trial lacks it
    ([{"x": FloatDistribution(0, 1)}, {"x": FloatDistribution(0, 2)}, {}], FloatDistribution(0, 2),
     "its distribution changed between trials"),
    ([{"x": CategoricalDistribution([1.0, float("nan")])}] * 2, CategoricalDistribution([1.0, float("nan")]),
     "the NP cannot hold its choices"),
    ([{"x": FloatDistribution(0, 1)}] * 2, FloatDistribution(0, 1),
     "the NP had no proposal for it when this trial started"),
])
def test_the_warning_says_why_the_parameter_is_sampled_independently(distributions, dist, reason):
    completed = [create_trial(params={n: (1.0 if isinstance(d, CategoricalDistribution) else 0.5)
                                      for n, d in ds.items()}, distributions=ds, value=0.0) for ds in distributions]
    assert independent_reason("x", dist, completed) == reason


# -- conditional (define-by-run) search spaces ---------------------------------------------

def test_a_conditional_space_left_to_the_independent_sampler_is_pointed_out_once_per_study():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # said whatever warn_independent_sampling: it is about what the NP models, not one parameter's draw
        study = optuna.create_study(sampler=sampler(seed=0, warn_independent_sampling=False, conditional=False))
        study.optimize(conditional, n_trials=8)
    branches = {t.params["classifier"] for t in study.trials[:4]}
    assert branches == {"svc", "rf"}  # both branches among the start-up trials: the NP's space is {classifier}
    said = [str(w.message) for w in caught if "conditional" in str(w.message)]
    assert len(said) == 1, said
    assert all(name in said[0] for name in ("'classifier'", "'rf_depth'", "'svc_c'", "conditional=True"))


def test_a_conditional_space_whose_shared_parameters_the_np_models_is_not_warned_of_without_conditional():
    def shared_and_branches(t):
        scale = t.suggest_float("scale", 0.0, 1.0)
        if t.suggest_categorical("classifier", ["svc", "rf"]) == "svc":
            return scale + t.suggest_float("svc_c", 0.0, 1.0)
        return scale + t.suggest_int("rf_depth", 2, 32) / 32

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study = optuna.create_study(sampler=sampler(seed=0, warn_independent_sampling=False, conditional=False))
        study.optimize(shared_and_branches, n_trials=8)
    assert {t.params["classifier"] for t in study.trials[:4]} == {"svc", "rf"}  # the NP's space: scale, classifier
    assert not [w for w in caught if "conditional" in str(w.message)]


def test_a_conditional_space_modelled_group_by_group_is_not_warned_of():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        study = optuna.create_study(sampler=sampler(seed=0))
        study.optimize(conditional, n_trials=8)
    assert {t.params["classifier"] for t in study.trials[:4]} == {"svc", "rf"}
    assert not [w for w in caught if "conditional" in str(w.message)]


def test_a_space_of_categoricals_alone_is_not_called_conditional():
    def objective(t):
        return (t.suggest_categorical("a", ["p", "q"]) == "p") + (t.suggest_categorical("b", [1, 2, 3]) == 2)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        optuna.create_study(sampler=sampler(seed=0)).optimize(objective, n_trials=6)
    assert not [w for w in caught if "conditional" in str(w.message)]


# -- once per study ---------------------------------------------------------------------------

def test_each_in_memory_study_is_warned_even_when_its_storage_reuses_a_collected_ones_address():
    # every in-memory study has id 0, and a collected storage's address is given to a new one: a
    # warning marked by id(storage) was never given to a study whose storage landed there
    import gc

    shared = sampler(seed=0)
    dist = CategoricalDistribution([1, True, "a"])  # True equals 1: warned of once per study
    warned = []
    for _ in range(8):
        study = optuna.create_study(sampler=shared)
        study.add_trial(create_trial(params={"c": "a"}, distributions={"c": dist}, value=0.0))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            shared.infer_relative_search_space(study, study.trials[0])
            shared.infer_relative_search_space(study, study.trials[0])  # the same study: not again
        warned.append(len([w for w in caught if "positions [1]" in str(w.message)]))
        del study, caught
        gc.collect()  # the next storage may land at this one's address (CPython usually reuses it)
    assert warned == [1] * len(warned)


def test_two_studies_of_one_storage_are_each_warned_once():
    shared = sampler(seed=0)
    storage = optuna.storages.InMemoryStorage()
    dist = CategoricalDistribution([1, True, "a"])
    first = optuna.create_study(study_name="first", storage=storage, sampler=shared)
    second = optuna.create_study(study_name="second", storage=storage, sampler=shared)
    again = optuna.load_study(study_name="first", storage=storage, sampler=shared)  # the first, already told
    warned = []
    for study in (first, second, again):
        study.add_trial(create_trial(params={"c": "a"}, distributions={"c": dist}, value=0.0))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            shared.infer_relative_search_space(study, study.trials[0])
        warned.append(len([w for w in caught if "positions [1]" in str(w.message)]))
    assert warned == [1, 1, 0]


@pytest.mark.parametrize("directions", [["minimize"], ["minimize", "maximize"]])
def test_a_discrete_space_evaluated_everywhere_says_so_without_a_trust_region_too(directions):
    """Four points in all (an int of two values, a choice of two): once each is evaluated a
    proposal must repeat one, which optimize's policies say with a RuntimeWarning; NPSampler
    said it only through its trust region (not used here, nor with several objectives)."""
    def objective(trial):
        x, c = trial.suggest_int("x", 0, 1), trial.suggest_categorical("c", ["a", "b"])
        value = float(x + (c == "b"))
        return value if len(directions) == 1 else (value, value * 2)

    study = optuna.create_study(directions=directions, sampler=NPSampler(n_startup_trials=2, seed=0,
                                                                         trust_region=False))
    with pytest.warns(RuntimeWarning, match="every point of the discrete search space"):
        study.optimize(objective, n_trials=8)
