"""open_db's cache: one engine per URL and mode, also when threads open one at the same moment."""

import contextlib
import threading

from sqlalchemy import event
from sqlalchemy.engine import Engine

from npbandit.storage import list_runs, open_db


def test_two_threads_that_open_one_new_url_at_once_get_one_engine(tmp_path):
    """Each thread found the URL uncached, built an engine and cached it; the one cached
    first was replaced and never disposed, its pooled connections left open. Here both
    threads are held inside their first connection to the file until the other gets there
    too: two builds meet there, one build waits the barrier's timeout out alone."""
    db = str(tmp_path / "runs.db")
    start, inside = threading.Barrier(2, timeout=60), threading.Barrier(2, timeout=2)
    openers, met, got = set(), set(), {}

    def meet(dbapi_conn, record):  # every engine's new connection; the openers' first ones wait for each other
        me = threading.current_thread()
        if me in openers and me not in met:
            met.add(me)
            with contextlib.suppress(threading.BrokenBarrierError):  # the other is not building (it waits for us)
                inside.wait()

    def opener(name):
        start.wait()
        got[name] = open_db(db)

    threads = [threading.Thread(target=opener, args=(name,)) for name in ("a", "b")]
    openers.update(threads)
    event.listen(Engine, "connect", meet)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    finally:
        event.remove(Engine, "connect", meet)
    assert got["a"] is got["b"] is open_db(db)
    assert list_runs(db) == []  # the database was made once, as npbandit's
