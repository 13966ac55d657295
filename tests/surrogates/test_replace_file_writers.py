"""``replace_file`` (checkpoints, the evaluation-set cache): each write goes through a
temporary file of its own beside the target, so writers of one file at once (two processes
saving the same checkpoint, two trainings filling one cache) never move another's
half-written file into place; the file's mode is still what the umask allows."""

import os
import stat
import threading

from npbandit.surrogates.checkpoint_files import replace_file


def test_another_writers_temporary_file_is_left_alone(tmp_path):
    target = tmp_path / "model.safetensors"
    theirs = tmp_path / "model.safetensors.tmp"  # the name every writer shared: another's half-written file
    theirs.write_bytes(b"half of another")
    replace_file(target, b"whole")
    assert target.read_bytes() == b"whole" and theirs.read_bytes() == b"half of another"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.safetensors", "model.safetensors.tmp"]


def test_writers_at_once_leave_one_whole_file_and_no_temporary_ones(tmp_path):
    target = tmp_path / "cache.pt"
    payloads = [bytes([i]) * (1 << 20) for i in range(4)]  # 1 MiB each, every byte telling its writer
    errors = []

    def write(data):
        try:
            for _ in range(10):
                replace_file(target, data)
        except Exception as err:  # noqa: BLE001 - reported by the assert below
            errors.append(err)

    threads = [threading.Thread(target=write, args=(data,)) for data in payloads]
    for thread in threads:
        thread.start()
    seen = set()
    while any(thread.is_alive() for thread in threads):
        if target.exists():
            seen.add(target.read_bytes() in payloads)
    for thread in threads:
        thread.join()
    assert not errors and seen <= {True} and target.read_bytes() in payloads
    assert [p.name for p in tmp_path.iterdir()] == ["cache.pt"]


def test_the_file_mode_follows_the_umask(tmp_path):
    for umask, mode in ((0o022, 0o644), (0o077, 0o600)):
        previous = os.umask(umask)
        try:
            replace_file(tmp_path / f"card{umask}.json", b"{}")
        finally:
            os.umask(previous)
        assert stat.S_IMODE((tmp_path / f"card{umask}.json").stat().st_mode) == mode


def test_a_failed_write_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "model.safetensors"
    (target / "inside").mkdir(parents=True)  # a directory where the file goes: the temporary one is written, not moved
    try:
        replace_file(target, b"x")
    except OSError:
        pass
    else:
        raise AssertionError("replace_file replaced a directory")
    assert [p.name for p in tmp_path.iterdir()] == ["model.safetensors"] and target.is_dir()
