"""Grad mode belongs to a thread, as in PyTorch: ``no_grad()`` in one thread leaves every
other thread recording, and a new thread starts with recording on. Each scenario runs on
minigrad and on PyTorch and must give the same answers."""

import threading

import pytest

import minigrad as mg

TIMEOUT = 20  # seconds: a barrier that is never reached fails the test instead of hanging


def _run_threads(*targets):
    """Run each target in its own thread; re-raise the first exception one of them raised."""
    errors = []

    def guarded(target):
        try:
            target()
        except BaseException as error:  # reported to the test below
            errors.append(error)

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a thread is stuck"
    if errors:
        raise errors[0]


def _no_grad_in_one_thread_while_another_records(lib):
    """Thread A sits inside ``no_grad`` while thread B records a graph and runs backward."""
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    both_inside = threading.Barrier(2, timeout=TIMEOUT)
    b_done = threading.Barrier(2, timeout=TIMEOUT)
    seen = {}

    def thread_a():
        with lib.no_grad():
            both_inside.wait()           # B works while A is inside no_grad
            seen["a_enabled"] = lib.is_grad_enabled()
            seen["a_requires_grad"] = (w * 2).requires_grad
            b_done.wait()                # stay inside until B has finished
        seen["a_after"] = lib.is_grad_enabled()

    def thread_b():
        both_inside.wait()
        seen["b_enabled"] = lib.is_grad_enabled()
        y = (w * w).sum()
        seen["b_requires_grad"] = y.requires_grad
        seen["b_grad_fn"] = type(y.grad_fn).__name__
        y.backward()
        seen["b_grad"] = w.grad.tolist()
        b_done.wait()

    _run_threads(thread_a, thread_b)
    return seen


def test_no_grad_in_one_thread_does_not_stop_another(torch):
    ours = _no_grad_in_one_thread_while_another_records(mg)
    theirs = _no_grad_in_one_thread_while_another_records(torch)
    assert ours == theirs
    assert ours["a_enabled"] is False and ours["a_requires_grad"] is False
    assert ours["b_enabled"] is True and ours["b_requires_grad"] is True
    assert ours["b_grad"] == [2.0, 4.0] and ours["a_after"] is True


def _new_thread_starts_recording(lib):
    """A thread started from inside ``no_grad`` (or after ``set_grad_enabled(False)``) records."""
    seen = {}

    def child():
        seen["child_enabled"] = lib.is_grad_enabled()
        seen["child_records"] = (lib.ones(1, requires_grad=True) * 3).requires_grad

    with lib.no_grad():
        _run_threads(child)
        seen["parent_enabled"] = lib.is_grad_enabled()
    lib.set_grad_enabled(False)
    try:
        _run_threads(lambda: seen.setdefault("child_after_set", lib.is_grad_enabled()))
    finally:
        lib.set_grad_enabled(True)
    return seen


def test_a_new_thread_starts_with_grad_enabled(torch):
    ours = _new_thread_starts_recording(mg)
    assert ours == _new_thread_starts_recording(torch)
    assert ours == {"child_enabled": True, "child_records": True, "parent_enabled": False,
                    "child_after_set": True}


def _decorated_function_from_several_threads(lib, workers=4):
    """``@no_grad`` function called by several threads at once, while each of them also
    records ops before and after the call."""
    inside = threading.Barrier(workers, timeout=TIMEOUT)
    w = lib.tensor([3.0], requires_grad=True)

    @lib.no_grad()
    def predict(x):
        inside.wait()  # every thread is inside the decorated function at the same time
        return x * w, lib.is_grad_enabled()

    results = [None] * workers

    def worker(i):
        before = (w * i).requires_grad
        out, enabled_inside = predict(lib.tensor([float(i)]))
        after = (w * i).requires_grad
        results[i] = (before, out.requires_grad, enabled_inside, after, out.tolist(),
                      lib.is_grad_enabled())

    _run_threads(*[lambda i=i: worker(i) for i in range(workers)])
    return results


def test_no_grad_decorator_used_by_several_threads(torch):
    ours = _decorated_function_from_several_threads(mg)
    assert ours == _decorated_function_from_several_threads(torch)
    assert ours == [(True, False, False, True, [3.0 * i], True) for i in range(4)]


def test_set_grad_enabled_in_a_thread_leaves_the_others_alone(torch):
    for lib in (mg, torch):
        ready = threading.Barrier(2, timeout=TIMEOUT)
        checked = threading.Barrier(2, timeout=TIMEOUT)
        seen = {}

        def switch_off():
            lib.set_grad_enabled(False)  # left off: the thread ends with it off
            ready.wait()
            checked.wait()

        def look():
            ready.wait()
            seen["other"] = lib.is_grad_enabled()
            checked.wait()

        _run_threads(switch_off, look)
        assert seen == {"other": True}, lib.__name__
        assert lib.is_grad_enabled(), lib.__name__  # the main thread too


def test_one_no_grad_object_entered_by_two_threads_restores_each_threads_mode():
    """A shared ``no_grad()`` instance remembers what to restore per thread. (PyTorch keeps
    one ``prev`` per instance, so there the second thread's entry overwrites the first's.)"""
    shared = mg.no_grad()
    a_in, b_in, a_out = (threading.Barrier(2, timeout=TIMEOUT) for _ in range(3))
    seen = {}

    def thread_a():  # recording on; leaves the block first
        with shared:
            a_in.wait()
            b_in.wait()
        seen["a"] = mg.is_grad_enabled()
        a_out.wait()

    def thread_b():  # recording off before the block; leaves it second
        mg.set_grad_enabled(False)
        a_in.wait()
        with shared:
            b_in.wait()
            a_out.wait()
        seen["b"] = mg.is_grad_enabled()

    _run_threads(thread_a, thread_b)
    assert seen == {"a": True, "b": False}
    assert shared.prev == {}  # nothing kept for threads that have left


@pytest.mark.parametrize("manager", ["no_grad", "enable_grad"])
def test_one_object_entered_twice_in_one_thread_restores_both_levels(manager):
    """(PyTorch's instance keeps a single ``prev``, so there the inner entry overwrites the
    outer one and the outer exit restores the wrong mode; minigrad keeps a stack.)"""
    outer = getattr(mg, manager)()
    states = []
    with mg.set_grad_enabled(manager == "no_grad"):
        with outer:
            states.append(mg.is_grad_enabled())
            with outer:
                states.append(mg.is_grad_enabled())
            states.append(mg.is_grad_enabled())
        states.append(mg.is_grad_enabled())
    expected = manager == "enable_grad"
    assert states == [expected, expected, expected, not expected]


def test_set_grad_enabled_object_entered_later_sets_its_mode(torch):
    def run(lib):
        off = lib.set_grad_enabled(False)  # switches off now, as a function call does
        lib.set_grad_enabled(True)
        with off:                          # and again when the block is entered
            inside = lib.is_grad_enabled()
        return inside, lib.is_grad_enabled()

    assert run(mg) == run(torch) == (False, True)
