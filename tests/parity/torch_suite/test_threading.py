"""Ported from PyTorch's test/test_autograd.py (TestAutograd and TestMultithreadAutograd): sequence
numbers, node metadata, and autograd from several threads."""
import threading
import weakref


from tests.support.torch_assert import assert_equal


def _run_threads(fn, num_threads=4):
    errors = []

    def guarded():
        try:
            fn()
        except BaseException as exc:  # a thread's assertion must fail the test
            errors.append(exc)

    threads = [threading.Thread(target=guarded) for _ in range(num_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def test_sequence_nr(torch):
    a = torch.ones(1, requires_grad=True)
    b = a * 2
    c = b * 2
    assert b.grad_fn._sequence_nr() < c.grad_fn._sequence_nr()
    d = c.clone()
    assert c.grad_fn._sequence_nr() < d.grad_fn._sequence_nr()


def test_sequence_nr_increments_per_node(torch):
    a = torch.ones(2, requires_grad=True)
    nodes = []
    x = a
    for _ in range(5):
        x = x * 2
        nodes.append(x.grad_fn._sequence_nr())
    assert nodes == sorted(nodes)
    assert len(set(nodes)) == 5


def test_get_sequence_nr_thread_local(torch):
    results = {}

    def worker(name):
        a = torch.ones(1, requires_grad=True)
        b = a * 2
        c = b * 2
        results[name] = (b.grad_fn._sequence_nr(), c.grad_fn._sequence_nr())

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for b_nr, c_nr in results.values():
        assert c_nr == b_nr + 1


def test_simple_backward(torch):
    def train_fn():
        x = torch.ones(5, 5, requires_grad=True)
        y = (x + 3) * (x + 4) * 0.5
        y.sum().backward()
        assert_equal(x.grad, x + 3.5)

    _run_threads(train_fn, 4)


def test_simple_backward_same_input(torch):
    x = torch.ones(5, 5, requires_grad=True)

    def train_fn_backward(x):
        y = (x + 3) * (x + 4) * 0.5
        y.sum().backward()

    threads = [threading.Thread(target=train_fn_backward, args=(x,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert_equal(x.grad, 4 * (x + 3.5))

    def train_fn_grad(x):
        y = (x + 3) * (x + 4) * 0.5
        grads = torch.autograd.grad(y.sum(), x)
        assert len(grads) == 1
        assert_equal(grads[0], x + 3.5)

    threads = [threading.Thread(target=train_fn_grad, args=(x,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_multithread_saved_tensors_hooks(torch):
    def pack(x):
        return x

    def unpack(x):
        return x

    def test_fn(input):
        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            input.sin().sum().backward()
        return True

    ok = []

    def run():
        ok.append(test_fn(torch.rand(2, 2, requires_grad=True)))

    _run_threads(run, 4)
    assert ok == [True] * 4


def test_saved_tensors_hooks_are_thread_local(torch):
    def pack(x):
        return x

    counter = [0]

    def unpack(x):
        counter[0] += 1
        return x

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        def worker():
            a = torch.ones(2, requires_grad=True)
            (a * a).sum().backward()

        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert counter[0] == 0


def test_grad_mode_per_thread_in_backward(torch):
    seen = []

    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            seen.append(torch.is_grad_enabled())
            return g

    def worker():
        a = torch.ones(2, requires_grad=True)
        F.apply(a).sum().backward()

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert seen == [False]


def test_node_name_and_metadata(torch):
    a = torch.ones(2, requires_grad=True)
    b = a.exp()
    assert b.grad_fn.name() == "ExpBackward0"
    b.grad_fn.metadata["key"] = 1
    assert b.grad_fn.metadata == {"key": 1}


def test_node_next_functions_and_grad_fn_identity(torch):
    a = torch.ones(2, requires_grad=True)
    b = a * 2
    c = b + 1
    assert c.grad_fn.next_functions[0][0] is b.grad_fn
    assert isinstance(b.grad_fn, torch.autograd.graph.Node)


def test_python_thread_in_middle(torch):
    success_vs_raises = [0, 0]

    def train_fn_no_retain_graph(x):
        y = x + x ** 2
        try:
            y.sum().backward()
            success_vs_raises[0] += 1
        except RuntimeError as error:
            success_vs_raises[1] += 1
            assert "Specify retain_graph=True" in str(error)

    x_no_retain = torch.ones(5, 5, requires_grad=True)
    y_no_retain = x_no_retain + x_no_retain ** 2
    _run_threads(lambda: train_fn_no_retain_graph(y_no_retain), 5)
    assert success_vs_raises[0] >= 1

    def train_fn_retain_graph(x):
        y = x + x ** 2
        y.sum().backward(retain_graph=True)

    x_retain = torch.ones(5, 5, requires_grad=True)
    y_retain = x_retain + x_retain ** 2
    _run_threads(lambda: train_fn_retain_graph(y_retain), 5)
    assert_equal(x_retain.grad, 5 * (4 * x_retain ** 3 + 6 * (x_retain ** 2) + 4 * x_retain + 1))


def test_grad_thread_safety(torch):
    import threading
    from concurrent.futures import ThreadPoolExecutor

    NUM_ITERS = 10
    NUM_THREADS = 4

    def access_grad(tensor, barrier):
        barrier.wait()
        return weakref.ref(tensor.grad)

    for _ in range(NUM_ITERS):
        tensor = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        (tensor**2).sum().backward()
        barrier = threading.Barrier(NUM_THREADS)
        with ThreadPoolExecutor(max_workers=NUM_THREADS) as executor:
            futures = [executor.submit(access_grad, tensor, barrier) for _ in range(NUM_THREADS)]
            for future in futures:
                assert_equal(future.result()(), tensor.grad)
            assert tensor.grad is not None
