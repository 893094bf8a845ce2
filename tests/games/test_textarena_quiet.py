"""games._textarena_probe.quiet mutes TextArena's own printing in the thread that runs it, and
only there: a web server or TRL plays TextArena games in worker threads while the main thread
prints a match's result (a process-wide stream swap lost such lines, and interleaved exits left
the wrong stream in place)."""

import sys
import threading

from games._textarena_probe import quiet


def _inside_quiet(entered: threading.Event, leave: threading.Event) -> None:
    with quiet():
        print("textarena chatter")
        entered.set()
        leave.wait(5)


def test_other_threads_print_while_one_is_quiet(capsys):
    entered, leave = threading.Event(), threading.Event()
    worker = threading.Thread(target=_inside_quiet, args=(entered, leave))
    worker.start()
    assert entered.wait(5)
    print("result: X wins")  # the main thread, while the worker is inside quiet()
    sys.stderr.write("a warning\n")
    leave.set()
    worker.join(5)
    out, err = capsys.readouterr()
    assert "result: X wins" in out and "a warning" in err
    assert "textarena chatter" not in out


def test_interleaved_exits_leave_nothing_muted(capsys):
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()

    def first() -> None:
        with quiet():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with quiet():
            second_in.set()
            first_out.wait(5)  # the first leaves while the second is still inside

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    print("after both")
    with quiet():
        print("muted here")
    print("and after again")
    out = capsys.readouterr().out
    assert "after both" in out and "and after again" in out and "muted here" not in out
