"""Ctrl-C (SIGINT) in a collective call of an in-process group, in a child interpreter that the test
signals: the call stops within a second, the group is broken with a clear error, and the program
ends (it used to wait out the group's 300 s timeout, blocking the signal meanwhile). Each case names
its rule; the child runs with the default timeout, so a wait that ignored Ctrl-C would fail the
test's own 20 s limit."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import gdap

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(gdap.__file__)))


def interrupted_child(script):
    """Runs `script`, sends SIGINT once it printed 'waiting' (and half a second more), and returns
    (its output, seconds from the signal to its exit)."""
    env = dict(os.environ, PYTHONPATH=PACKAGE_DIR + os.pathsep + os.environ.get("PYTHONPATH", ""))
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env=env)
    lines = [child.stdout.readline()]
    assert lines[0].strip() == "waiting", lines[0]
    time.sleep(0.5)
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    try:
        rest, _ = child.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        child.kill()
        rest, _ = child.communicate()
        raise AssertionError("the child ignored Ctrl-C for 20 s:\n" + "".join(lines) + rest)
    return "".join(lines) + rest, time.monotonic() - sent


def test_ctrl_c_stops_a_wait_on_the_main_thread_with_keyboard_interrupt():
    # Rule: the main thread, waiting as rank 0 for a rank that never comes, raises KeyboardInterrupt
    # within a second of Ctrl-C; the group is then broken for every rank.
    out, took = interrupted_child("""
        import threading, time, gdap
        comms = gdap.group(2)
        print("waiting", flush=True)
        start = time.monotonic()
        try:
            comms[0].barrier()
        except KeyboardInterrupt as e:
            print("rank 0: %s after %.2f s" % (type(e).__name__, time.monotonic() - start), flush=True)
        try:
            comms[1].barrier()
        except gdap.Error as e:
            print("rank 1 later: %s: %s" % (type(e).__name__, e), flush=True)
    """)
    assert "rank 0: KeyboardInterrupt after" in out, out
    assert "rank 1 later: CollectiveInterruptedError: rank 1: the in-process group is broken" in out, out
    assert took < 5, out


def test_ctrl_c_stops_waits_on_other_threads_while_the_main_thread_joins():
    # Rule: ranks waiting on threads of their own, while the main thread joins them, raise
    # CollectiveInterruptedError (a KeyboardInterrupt) within a second of Ctrl-C, naming the rank
    # that was interrupted; the main thread gets its KeyboardInterrupt, and the program ends.
    out, took = interrupted_child("""
        import threading, time, gdap
        comms = gdap.group(3)
        results = {}
        def rank(r):
            try:
                comms[r].barrier()
                results[r] = "done"
            except BaseException as e:
                results[r] = "%s (a KeyboardInterrupt: %s): %s" % (type(e).__name__, isinstance(e, KeyboardInterrupt), e)
        threads = [threading.Thread(target=rank, args=(r,)) for r in (0, 1)]  # rank 2 never comes
        for t in threads:
            t.start()
        print("waiting", flush=True)
        try:
            for t in threads:
                t.join()
        except KeyboardInterrupt:
            print("main: KeyboardInterrupt", flush=True)
            # A join that KeyboardInterrupt broke can return at once when called again (CPython
            # before 3.13), before the rank has stored its result: wait for the results themselves.
            deadline = time.monotonic() + 10
            while len(results) < 2 and time.monotonic() < deadline:
                time.sleep(0.01)
        for r in (0, 1):
            print("rank %d: %s" % (r, results.get(r)), flush=True)
    """)
    assert "main: KeyboardInterrupt" in out, out
    for r in (0, 1):
        assert "rank %d: CollectiveInterruptedError (a KeyboardInterrupt: True)" % r in out, out
    assert "was interrupted" in out, out
    assert took < 5, out


def test_a_program_with_its_own_sigint_handler_keeps_it():
    # Rule: gdap replaces only Python's default SIGINT handler; a program's own handler stays.
    def mine(signum, frame):
        pass

    previous = signal.signal(signal.SIGINT, mine)
    try:
        comms = gdap.group(1)
        assert signal.getsignal(signal.SIGINT) is mine
        for c in comms:
            c.close()
    finally:
        signal.signal(signal.SIGINT, previous)


def test_interrupted_error_is_a_gdap_error_and_a_keyboard_interrupt():
    assert issubclass(gdap.CollectiveInterruptedError, gdap.Error)
    assert issubclass(gdap.CollectiveInterruptedError, KeyboardInterrupt)
    assert gdap.CollectiveInterruptedError.status == gdap._gdap_c.GDAP_ERR_INTERRUPTED
