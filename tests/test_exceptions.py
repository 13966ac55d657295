"""npbandit.exceptions: one base for every library exception, each keeping its builtin base,
and each still importable from the module that raises it."""

import pickle

import pytest

from npbandit import exceptions
from npbandit.exceptions import (
    CheckpointError,
    NPBanditError,
    ObjectiveError,
    ObjectiveReturnError,
    RunMadeElsewhere,
    SchemaVersionError,
    StorageError,
    UnknownCheckpointError,
)

BUILTIN_BASE = {StorageError: ValueError, SchemaVersionError: ValueError, ObjectiveError: RuntimeError,
                CheckpointError: ValueError, UnknownCheckpointError: FileNotFoundError,
                ObjectiveReturnError: TypeError, RunMadeElsewhere: RuntimeError}


@pytest.mark.parametrize("cls", list(BUILTIN_BASE), ids=lambda c: c.__name__)
def test_every_exception_is_an_npbandit_error_and_keeps_its_builtin_base(cls):
    args = ("boom", [0.5]) if issubclass(cls, ObjectiveError) else ("boom",)
    err = cls(*args)
    assert isinstance(err, NPBanditError) and isinstance(err, BUILTIN_BASE[cls])
    with pytest.raises(NPBanditError, match="boom"):
        raise err
    with pytest.raises(BUILTIN_BASE[cls], match="boom"):
        raise err


def test_the_module_exports_every_exception_it_defines():
    defined = {name for name, value in vars(exceptions).items()
               if isinstance(value, type) and issubclass(value, BaseException)
               and value.__module__ == exceptions.__name__}
    assert defined == set(exceptions.__all__)
    assert NPBanditError.__bases__ == (Exception,)


def test_a_schema_version_error_is_a_storage_error():
    assert issubclass(SchemaVersionError, StorageError)


def test_an_objective_error_carries_its_point_and_how_it_failed():
    err = ObjectiveError("objective returned nan at x=[0.5]", [0.5])
    assert err.x == [0.5] and str(err) == "objective returned nan at x=[0.5]" and err.kind is None
    assert ObjectiveError("objective returned nan at x=[0.5]", [0.5], kind="nonfinite").kind == "nonfinite"
    assert ObjectiveReturnError("objective must return a float", [0.5]).kind == "returned"
    assert ObjectiveError.KINDS == ("raised", "returned", "nonfinite", "timeout")
    with pytest.raises(ValueError, match=r"kind must be one of 'raised', 'returned', 'nonfinite', 'timeout' or "
                                         r"None, got 'exploded'"):
        ObjectiveError("boom", [0.5], kind="exploded")


def test_old_import_paths_give_the_same_classes():
    from npbandit import storage
    from npbandit.envs import ObjectiveError as from_envs
    from npbandit.envs import blackbox
    from npbandit.surrogates import pretrained

    assert storage.StorageError is StorageError and storage.SchemaVersionError is SchemaVersionError
    assert blackbox.ObjectiveError is ObjectiveError and from_envs is ObjectiveError
    assert pretrained.CheckpointError is CheckpointError
    assert pretrained.UnknownCheckpointError is UnknownCheckpointError


def test_a_storage_error_survives_pickling():
    # errors cross process boundaries (pool and Dask workers)
    err = pickle.loads(pickle.dumps(StorageError("db 'x': cannot read it")))
    assert type(err) is StorageError and str(err) == "db 'x': cannot read it"


def test_a_run_made_elsewhere_survives_pickling_with_the_run_found_and_is_raised_by_storage():
    from npbandit import storage

    err = pickle.loads(pickle.dumps(RunMadeElsewhere("run 3 is the same run", {"id": 3})))
    assert type(err) is RunMadeElsewhere and str(err) == "run 3 is the same run" and err.run == {"id": 3}
    assert storage.RunMadeElsewhere is RunMadeElsewhere


def test_objective_errors_survive_pickling_with_their_point_and_kind():
    import numpy as np

    from npbandit.exceptions import ObjectiveError, ObjectiveReturnError

    for error in (ObjectiveError("objective raised ValueError: boom", np.array([0.1, 0.2]), kind="raised"),
                  ObjectiveReturnError("objective returned 'a'", {"lr": 0.1}), ObjectiveError("all failed", None)):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error) and str(back) == str(error) and back.kind == error.kind
        assert np.array_equal(back.x, error.x) if isinstance(error.x, np.ndarray) else back.x == error.x
