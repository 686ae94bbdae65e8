"""Grad mode and saved-tensor hooks are per thread. Ops consult two module-level counts first (threads with
grad mode off, hook pairs pushed in any thread) and read the thread-local state only when a count is
non-zero: the counts must follow every switch, and another thread's switch must not leak into this one."""
import threading

import derivgen
from derivgen.core import grad_mode, saved_hooks


def _in_thread(body):
    """Run ``body(started, release)`` on a thread; returns (thread, started, release) once it started."""
    started, release = threading.Event(), threading.Event()
    t = threading.Thread(target=body, args=(started, release))
    t.start()
    assert started.wait(10)
    return t, started, release


def test_no_grad_on_another_thread_does_not_switch_this_one_off():
    x = derivgen.ones(3, requires_grad=True)
    before = grad_mode.off_threads

    def body(started, release):
        with derivgen.no_grad():
            started.set()
            release.wait(10)

    t, _, release = _in_thread(body)
    try:
        assert grad_mode.off_threads == before + 1
        y = x * 2  # this thread's grad mode is on: the op records
        assert y.grad_fn is not None and derivgen.is_grad_enabled()
    finally:
        release.set()
        t.join()
    assert grad_mode.off_threads == before


def test_counts_follow_nested_switches_on_this_thread():
    x = derivgen.ones(3, requires_grad=True)
    before = grad_mode.off_threads
    with derivgen.no_grad():
        assert grad_mode.off_threads == before + 1
        assert (x * 2).grad_fn is None
        with derivgen.no_grad():  # already off: counted once
            assert grad_mode.off_threads == before + 1
        with derivgen.enable_grad():
            assert grad_mode.off_threads == before
            assert (x * 2).grad_fn is not None
        assert (x * 2).grad_fn is None
    assert grad_mode.off_threads == before
    derivgen.set_grad_enabled(False)
    try:
        assert (x.exp()).grad_fn is None and grad_mode.off_threads == before + 1
    finally:
        derivgen.set_grad_enabled(True)
    assert grad_mode.off_threads == before
    with derivgen.inference_mode():
        assert grad_mode.off_threads == before + 1
    assert grad_mode.off_threads == before


def test_saved_tensor_hooks_on_another_thread_are_not_used_here():
    x = derivgen.tensor([0.5, 1.0], requires_grad=True)
    packed = []
    before = saved_hooks.pushed

    def body(started, release):
        with derivgen.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
            started.set()
            release.wait(10)

    t, _, release = _in_thread(body)
    try:
        assert saved_hooks.pushed == before + 1
        y = x.exp() * x  # saves an output and inputs on this thread: no hooks here
        y.sum().backward()
    finally:
        release.set()
        t.join()
    assert packed == []
    assert saved_hooks.pushed == before
    with derivgen.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        assert saved_hooks.pushed == before + 1
        x.exp()
    assert len(packed) == 1 and saved_hooks.pushed == before


def test_a_reentrant_backward_thread_leaves_the_counts_as_they_were():
    # deep reentrant backwards continue on a fresh thread that starts with the caller's grad mode and
    # hooks (engine.execute._on_fresh_thread); what that thread ends with must not stay counted
    from derivgen.engine.execute import _on_fresh_thread
    before = (grad_mode.off_threads, saved_hooks.pushed)

    def body():
        derivgen.set_grad_enabled(False)  # left off, as a backward that raised midway would
        saved_hooks.set_stack(saved_hooks._tls.stack + [(lambda t: t, lambda t: t)])
        return grad_mode.off_threads, saved_hooks.pushed

    with derivgen.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        inside = _on_fresh_thread(body)
        assert inside == (before[0] + 1, before[1] + 3)  # the caller's pair, its copy there, one more
        assert saved_hooks.pushed == before[1] + 1
    assert (grad_mode.off_threads, saved_hooks.pushed) == before
