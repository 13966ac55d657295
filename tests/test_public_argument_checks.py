"""Public functions refuse a careless user's arguments naming the argument and what was
expected, and take NumPy scalars where they take Python numbers: cases a probe of the public
API found crashing deep inside, accepted when they make no sense, or refused when reasonable."""

import numpy as np
import pytest

import npbandit.storage as storage
from npbandit.space import Choice, Float


@pytest.mark.parametrize("make,match", [
    (lambda: Float(0.0, 10**400), r"Float: high must be a finite real number"),  # was OverflowError
    (lambda: Float(-10**400, 0.0), r"Float: low must be a finite real number"),
    (lambda: Float(-1e308, 1e308), r"Float: high - low must be a finite float64"),  # was NaN on decode
    (lambda: Float(0.0, 1.0, step=10**400), r"Float: step must be a finite real number"),
])
def test_a_float_range_float64_cannot_hold_is_refused_naming_the_setting(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_a_float_value_past_float64_is_refused_as_a_value():
    with pytest.raises(TypeError, match="value must be a finite real number"):
        Float(0.0, 1.0).check(10**400)


@pytest.mark.parametrize("values,hint", [({"b", "a"}, "sorted"), (frozenset({1, 2}), "sorted"),
                                         ({"a": 1, "b": 2}, "list")])
def test_choice_refuses_a_set_or_mapping_of_values(values, hint):
    # a set's order differs between processes (str hashing is salted) and places the values in
    # the cube; a mapping would silently keep its keys and drop its values
    with pytest.raises(TypeError, match=rf"Choice: values must be a sequence in a fixed order.*{hint}"):
        Choice(values)


@pytest.mark.parametrize("values", [["a", "b"], ("a", "b"), range(3), np.array([1, 2, 3]), iter(["x", "y"])])
def test_choice_still_takes_ordered_iterables(values):
    assert len(Choice(values).values) in (2, 3)


def test_float_ranges_that_float64_holds_are_unchanged():
    assert Float(-1e307, 1e307).decode(np.array([0.5])) == 0.0
    assert Float(0.0, 1.0).check(np.float32(0.5)) == 0.5


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A database holding one three-step black-box run, its URL and its RunRow."""
    from helpers import forget_engines

    from npbandit import optimize
    from npbandit.storage import list_runs

    db = f"sqlite:///{tmp_path_factory.mktemp('db')}/runs.db"
    optimize(lambda x: float((x ** 2).sum()), [[0.0, 0.0], [1.0, 1.0]], surrogate="random", budget=3, db=db,
             progress=False)
    yield db, list_runs(db)[0]
    forget_engines()


@pytest.mark.parametrize("call,error,match", [
    (lambda db, run: storage.run_evaluations(db, run.id, None), TypeError,
     r"name must be a non-empty str"),  # was AttributeError: 'NoneType' object has no attribute 'startswith'
    (lambda db, run: storage.run_evaluations(db, run.id, ""), TypeError,
     r"name must be a non-empty str"),
    (lambda db, run: storage.fixed_steps(db, run.id), TypeError,
     r"run_ids must be a list of run ids"),  # was "'int' object is not iterable"
    (lambda db, run: storage.fixed_steps(db, None), TypeError, r"run_ids must be"),
    (lambda db, run: storage.fixed_steps(db, [run.id, "2"]), TypeError,
     r"run_ids\[1\] must be a run's id"),
    (lambda db, run: storage.step_params(run, None), TypeError,
     r"step must be a step record"),  # was AttributeError: 'NoneType' object has no attribute 'get'
    (lambda db, run: storage.step_params(run.id, {"params": {"x0": 1}}), TypeError,
     r"run must be the step's run, a RunRow"),
    (lambda db, run: storage.open_db(db, readonly=1), TypeError,
     r"readonly must be a bool"),  # 1 and "no" were taken as true
    (lambda db, run: storage.open_db(db, readonly="no"), TypeError,
     r"readonly must be a bool"),
    (lambda db, run: storage.display_url(None), TypeError,
     r"url must be an SQLAlchemy URL or a file path"),  # was "expected string or bytes-like object"
    (lambda db, run: storage.effective_status(None), TypeError,
     r"run must be a run"),  # was AttributeError: 'NoneType' object has no attribute 'status'
    (lambda db, run: storage.effective_status(run, "now"), TypeError,
     r"now must be a datetime.datetime"),
    (lambda db, run: storage.run_key(
        kind="bo", env_id="e", env_params={}, policy="p", checkpoint="cmanp-bo", n_steps=3), TypeError,
     r"checkpoint must be a mapping"),  # was AttributeError: 'str' object has no attribute 'get'
])
def test_storage_functions_refuse_bad_arguments_naming_them(recorded, call, error, match):
    db, run = recorded
    with pytest.raises(error, match=match):
        call(db, run)


def test_storage_functions_take_numpy_scalars_and_paths(recorded, tmp_path):
    from pathlib import Path

    from npbandit.storage import RunLogger, fixed_steps, open_db, run_evaluations, step_params

    db, run = recorded
    assert fixed_steps(db, (np.int64(run.id),)) == {}
    assert open_db(db, readonly=np.bool_(True)) is open_db(db, readonly=True)
    logger = RunLogger(str(tmp_path / "np.db"), commit_every=np.int64(5))  # was refused: not an int
    assert logger.commit_every == 5 and type(logger.commit_every) is int
    steps = run_evaluations(Path(db.removeprefix("sqlite:///")), np.int64(run.id))
    assert len(steps) == 3 and step_params(run, steps[0]) == steps[0]["params"]


def test_optimize_takes_numpy_bools_and_ints_where_it_takes_python_ones():
    from npbandit import optimize

    result = optimize(lambda x: float((x ** 2).sum()), [[0.0, 0.0], [1.0, 1.0]], surrogate="random", budget=3,
                      db=None, progress=False, avoid_repeats=np.False_, threads=np.int64(1))
    assert len(result.history) == 3  # avoid_repeats=np.False_ was refused: "must be a bool, got bool"


@pytest.mark.parametrize("seed", [2**63, 2**64])
def test_a_seed_no_run_can_record_is_refused_naming_it(seed):
    from npbandit import optimize
    from npbandit.loop import run_wheel_bandits

    with pytest.raises(ValueError, match=r"seed must be an int <= 2\*\*63 - 1"):  # was an OverflowError from torch
        optimize(lambda x: 0.0, [[0.0], [1.0]], surrogate="random", budget=2, seed=seed, db=None, progress=False)
    with pytest.raises(ValueError, match=r"seeds\[1\] must be an int <= 2\*\*63 - 1"):  # was SQLite's OverflowError
        run_wheel_bandits(["uniform"], [0.5], [0, seed], 3, db="sqlite://", say=None)


def test_the_largest_seed_still_runs():
    from npbandit import optimize

    assert optimize(lambda x: 0.0, [[0.0], [1.0]], surrogate="random", budget=2, seed=2**63 - 1, db=None,
                    progress=False).seed == 2**63 - 1


@pytest.mark.parametrize("setting", ["length_init", "length_min", "length_max"])
@pytest.mark.parametrize("bad", ["1", True, None])
def test_trust_region_lengths_that_are_no_numbers_are_refused_naming_them(setting, bad):
    from npbandit.policies.trust_region import TrustRegionSettings

    # a str raised "'<' not supported between instances of 'float' and 'str'"; True passed as 1
    with pytest.raises(ValueError, match=rf"{setting} must be a real number"):
        TrustRegionSettings(**{setting: bad})


def test_trust_region_settings_take_numpy_numbers():
    from npbandit.policies.trust_region import TrustRegionSettings

    settings = TrustRegionSettings(length_init=np.float32(0.8), success_tolerance=np.int64(2),
                                   failure_tolerance=np.int64(5), context_factor=np.float32(1.5),
                                   success_margin=np.float32(0.01))
    assert type(settings.success_tolerance) is int and type(settings.failure_tolerance) is int
    assert settings.region(3).failure_tolerance == 5


@pytest.mark.parametrize("setting,bad,error,match", [
    ("dim", True, ValueError, r"dim must be an int >= 1"),  # True was a one-dimensional problem
    ("beta", -1.0, ValueError, r"beta must be >= 0.0"),  # was taken
    ("beta", float("nan"), ValueError, r"beta must be a finite real number"),  # was taken
    ("thompson_candidates", 0, ValueError, r"thompson_candidates must be an int >= 1"),  # was taken
    ("noise_free", 1, TypeError, r"noise_free must be a bool"),  # was taken as True
    ("n_init", True, ValueError, r"n_init must be an int >= 1"),  # True was one point
])
def test_bo_policy_refuses_settings_that_make_no_sense(setting, bad, error, match):
    from npbandit.policies.bo import BOPolicy

    with pytest.raises(error, match=match):
        BOPolicy(**{"dim": 2, "model": "gp", setting: bad})


def test_bo_policy_takes_numpy_ints_and_bools():
    from npbandit.policies.bo import BOPolicy

    policy = BOPolicy(np.int64(2), model="gp", n_init=np.int64(3), budget=np.int64(10), beta=np.float32(1.0),
                      thompson_candidates=np.int64(64), noise_free=np.True_, avoid_repeats=np.False_,
                      trust_region=np.True_, constrained=np.False_, max_context=np.int64(64), threads=np.int64(1))
    assert (policy.dim, policy.n_init, policy.budget, policy.max_context) == (2, 3, 10, 64)
    assert type(policy.dim) is int and policy.avoid_repeats is False and policy.trust_region is True


@pytest.fixture(scope="module")
def tiny_np(tmp_path_factory):
    import torch
    from helpers import tiny_checkpoint

    from npbandit import load_surrogate

    net = load_surrogate(tiny_checkpoint(tmp_path_factory.mktemp("ckpt")), dtype=torch.float64)
    X = torch.rand(5, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    return net, X, (X ** 2).sum(dim=-1, keepdim=True)


@pytest.mark.parametrize("setting,bad,error,match", [
    ("input_domain", "x", ValueError, r"input_domain must be \(low, high\), two real numbers"),  # was IndexError
    ("restandardize_tol", "0.2", ValueError, r"restandardize_tol must be positive"),  # was a comparison TypeError
    ("standardize", 1, TypeError, r"standardize must be a bool"),  # was taken as True
    ("input_transform", 3, TypeError, r"input_transform must be a BoTorch InputTransform"),  # was AttributeError
    ("outcome_transform", "x", TypeError, r"outcome_transform must be a BoTorch OutcomeTransform"),
])
def test_np_model_refuses_options_of_the_wrong_type_naming_them(tiny_np, setting, bad, error, match):
    from npbandit import NPModel

    net, X, Y = tiny_np
    with pytest.raises(error, match=match):
        NPModel(net, X, Y, **{setting: bad})


def test_np_model_takes_numpy_counts_and_bools(tiny_np):
    from npbandit import NPModel

    net, X, Y = tiny_np
    plain = NPModel(net, X, Y, noise_points=16)
    given = NPModel(net, X, Y, noise_points=np.int64(16), n_views=np.int64(1), standardize=np.True_,
                    input_domain=(np.float64(0.0), np.float64(1.0)), restandardize_tol=np.float32(0.2))
    import torch

    at = torch.rand(3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    assert torch.equal(plain.posterior(at).mean, given.posterior(at).mean)


def test_load_surrogate_takes_a_numpy_bool(tmp_path):
    from helpers import tiny_checkpoint

    from npbandit import load_surrogate

    net = load_surrogate(tiny_checkpoint(tmp_path), requires_grad=np.False_)  # "must be a bool, got bool"
    assert not any(p.requires_grad for p in net.parameters())
