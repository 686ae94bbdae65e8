"""vmap over the hand rules and the schema-derived dim rules: one body per op, run on derivgen and on
torch.func.vmap (the oracle), with the batch dim in front, inside, or only on some arguments."""
import pytest

from tests.func.support import arr, check

# name -> (body(m, *inputs), input shapes per example, in_dims)
CASES = {
    "sum": (lambda m, x: x.sum(), [(3, 4)], 0),
    "sum_dim": (lambda m, x: x.sum(-1), [(3, 4)], 1),
    "sum_dims_keepdim": (lambda m, x: x.sum((0, 1), keepdim=True), [(3, 4)], 0),
    "mean": (lambda m, x: x.mean(), [(3, 4)], 0),
    "mean_dim": (lambda m, x: x.mean(0), [(3, 4)], 2),
    "prod": (lambda m, x: x.prod(), [(3, 2)], 0),
    "prod_dim": (lambda m, x: x.prod(1), [(3, 2)], 0),
    "max": (lambda m, x: x.max(), [(3, 4)], 0),
    "max_dim": (lambda m, x: tuple(x.max(1)), [(3, 4)], 1),
    "amin": (lambda m, x: m.amin(x, (0,)), [(3, 4)], 0),
    "argmax": (lambda m, x: x.argmax(), [(3, 4)], 0),
    "argmax_dim": (lambda m, x: x.argmax(0, keepdim=True), [(3, 4)], 0),
    "var": (lambda m, x: x.var(1), [(3, 4)], 0),
    "std_all": (lambda m, x: x.std(), [(3, 4)], 0),
    "logsumexp": (lambda m, x: m.logsumexp(x, 1), [(3, 4)], 0),
    "norm": (lambda m, x: m.linalg.vector_norm(x), [(3, 4)], 0),
    "cumsum": (lambda m, x: m.cumsum(x, -1), [(3, 4)], 0),
    "sort": (lambda m, x: tuple(m.sort(x, 0)), [(3, 4)], 1),
    "topk": (lambda m, x: tuple(m.topk(x, 2)), [(3, 4)], 0),
    "softmax": (lambda m, x: m.softmax(x, -1), [(3, 4)], 0),
    "log_softmax": (lambda m, x: m.nn.functional.log_softmax(x, 0), [(3, 4)], 1),
    "sum_0dim": (lambda m, x: x.sum(), [()], 0),
    "softmax_0dim": (lambda m, x: m.softmax(x, 0), [()], 0),
    "mm": (lambda m, x, y: x @ y, [(2, 3), (3, 4)], 0),
    "mm_left": (lambda m, x, y: x @ y, [(2, 3), (3, 4)], (0, None)),
    "mm_right": (lambda m, x, y: x @ y, [(2, 3), (3, 4)], (None, 0)),
    "mv": (lambda m, x, y: m.mv(x, y), [(2, 3), (3,)], (None, 0)),
    "mv_both": (lambda m, x, y: m.mv(x, y), [(2, 3), (3,)], 0),
    "dot": (lambda m, x, y: m.dot(x, y), [(3,), (3,)], (0, None)),
    "vec_mat": (lambda m, x, y: x @ y, [(3,), (3, 4)], (0, None)),
    "bmm": (lambda m, x, y: m.bmm(x, y), [(2, 2, 3), (2, 3, 4)], (0, 1)),
    "matmul_batched": (lambda m, x, y: m.matmul(x, y), [(2, 2, 3), (3, 4)], 0),
    "addmm": (lambda m, b, x, y: m.addmm(b, x, y, beta=0.5, alpha=2.0), [(4,), (2, 3), (3, 4)], (None, 0, None)),
    "linear": (lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(5, 3), (4, 3), (4,)], (0, None, None)),
    "linear_1d": (lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(3,), (4, 3), (4,)], (0, None, 0)),
    "view": (lambda m, x: x.view(2, 6), [(3, 4)], 0),
    "reshape": (lambda m, x: x.reshape(4, 3), [(3, 4)], 2),
    "flatten": (lambda m, x: x.flatten(), [(3, 4)], 1),
    "transpose": (lambda m, x: x.transpose(0, 1), [(3, 4)], 0),
    "contiguous": (lambda m, x: x.t().contiguous().view(-1), [(3, 4)], 1),
    "nn_modules": (lambda m, x: m.nn.Sequential(m.nn.Flatten(0), m.nn.Tanh())(x).sum(), [(3, 4)], 0),
    "t": (lambda m, x: x.t(), [(3, 4)], 1),
    "permute": (lambda m, x: x.permute(2, 0, 1), [(2, 3, 4)], 1),
    "unsqueeze": (lambda m, x: x.unsqueeze(-1), [(3, 4)], 0),
    "squeeze": (lambda m, x: x.squeeze(), [(3, 1, 4)], 0),
    "squeeze_dim": (lambda m, x: x.squeeze(1), [(3, 1, 4)], 2),
    "expand": (lambda m, x: x.expand(2, 3, 4), [(3, 1)], 0),
    "expand_as": (lambda m, x, y: x.expand_as(y), [(4,), (3, 4)], (0, None)),
    "repeat": (lambda m, x: x.repeat(2, 1, 2), [(3, 4)], 0),
    "flip": (lambda m, x: x.flip(0), [(3, 4)], 1),
    "roll": (lambda m, x: m.roll(x, 1), [(3, 4)], 0),
    "roll_dim": (lambda m, x: m.roll(x, 1, 1), [(3, 4)], 0),
    "getitem_int": (lambda m, x: x[1], [(3, 4)], 0),
    "getitem_slices": (lambda m, x: x[:, 1:3], [(3, 4)], 1),
    "getitem_none_ellipsis": (lambda m, x: x[None, ..., 0], [(3, 4)], 0),
    "getitem_tensor": (lambda m, x: x[m.tensor([2, 0])], [(3, 4)], 0),
    "select_split": (lambda m, x: tuple(x.split(2, dim=1)), [(3, 4)], 0),
    "chunk": (lambda m, x: tuple(x.chunk(2, 0)), [(4, 2)], 0),
    "unbind": (lambda m, x: tuple(x.unbind(1)), [(3, 2)], 0),
    "cat": (lambda m, x, y: m.cat([x, y], 1), [(3, 4), (3, 2)], 0),
    "cat_unbatched": (lambda m, x, y: m.cat([x, y], -1), [(3, 4), (3, 2)], (0, None)),
    "stack": (lambda m, x, y: m.stack([x, y], 0), [(3, 4), (3, 4)], (None, 1)),
    "stack_last": (lambda m, x, y: m.stack([x, y], -1), [(3, 4), (3, 4)], 0),
    "where": (lambda m, c, x, y: m.where(c > 0, x, y), [(3, 4), (3, 4), (4,)], (0, None, 0)),
    "clamp": (lambda m, x: m.clamp(x, -0.5, 0.5), [(3, 4)], 0),
    "clamp_tensor": (lambda m, x, lo: m.clamp(x, min=lo), [(3, 4), (4,)], (None, 0)),
    "relu_gelu": (lambda m, x: m.nn.functional.gelu(m.relu(x) - 0.2), [(3, 4)], 0),
    "tril": (lambda m, x: m.tril(x), [(3, 4)], 1),
    "index_select": (lambda m, x: m.index_select(x, 1, m.tensor([0, 2])), [(3, 4)], 0),
    "gather": (lambda m, x: m.gather(x, 1, m.tensor([[0, 1], [1, 0], [2, 2]])), [(3, 4)], 0),
    "pad": (lambda m, x: m.nn.functional.pad(x, (1, 2)), [(3, 4)], 0),
    "mse_loss": (lambda m, x, y: m.nn.functional.mse_loss(x, y), [(3, 4), (3, 4)], (0, None)),
    "layer_norm": (lambda m, x, w: m.nn.functional.layer_norm(x, (4,), w), [(3, 4), (4,)], (0, None)),
    "embedding": (lambda m, w: m.nn.functional.embedding(m.tensor([[1, 0], [2, 2]]), w), [(3, 4)], (0,)),
    "embedding_indices": (lambda m, i, w: m.nn.functional.embedding((i.abs() * 2).long().clamp(max=2), w), [(2,), (3, 4)], (0, None)),
    "zeros_like_add": (lambda m, x: m.zeros_like(x) + x, [(3, 4)], 0),
    "scalar_ops": (lambda m, x: 2 - x / 3 + x ** 2, [(3, 4)], 0),
    "avg_pool": (lambda m, x: m.nn.functional.avg_pool2d(x, 2), [(2, 4, 4)], 0),
    "max_pool_batched": (lambda m, x: m.nn.functional.max_pool2d(x, 2), [(2, 1, 4, 4)], 0),
    "conv2d": (lambda m, x, w: m.nn.functional.conv2d(x, w), [(1, 2, 5, 5), (3, 2, 3, 3)], (0, None)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_vmap_rule(name):
    body, shapes, in_dims = CASES[name]
    batch = 3

    def run(m):
        dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(shapes)
        inputs = []
        for k, (shape, d) in enumerate(zip(shapes, dims)):
            if d is None:
                inputs.append(arr(m, *shape, seed=k))
            else:
                full = list(shape)
                full.insert(d, batch)
                inputs.append(arr(m, *full, seed=k))
        return m.vmap(lambda *xs: body(m, *xs), in_dims=dims)(*inputs)
    check(run)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("rows", [False, True])
def test_vmap_cross_entropy(reduction, rows):
    def run(m):
        x = arr(m, 4, 3, 5, seed=1) if rows else arr(m, 4, 5, seed=1)
        y = m.tensor([[0, 4, 2], [1, 1, -100], [3, 0, 2], [4, 4, 4]]) if rows else m.tensor([0, 4, 2, 1])
        w = m.tensor([0.5, 1.0, 2.0, 1.5, 1.0], dtype=m.float64)
        return m.vmap(lambda a, t: m.nn.functional.cross_entropy(a, t, weight=w, reduction=reduction))(x, y)
    check(run)


def test_vmap_grad_of_cross_entropy():
    def run(m):
        x, y, w = arr(m, 4, 5, seed=1), m.tensor([0, 4, 2, 1]), arr(m, 5, 6, seed=2)

        def loss(w, a, t):
            return m.nn.functional.cross_entropy((a @ w).unsqueeze(0), t.unsqueeze(0))
        return m.vmap(m.func.grad(loss), in_dims=(None, 0, 0))(w, x, y)
    check(run)
