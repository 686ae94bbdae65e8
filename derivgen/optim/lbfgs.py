"""``LBFGS``: torch's L-BFGS (two-loop recursion over ``history_size`` pairs, optional strong-Wolfe line
search, ``max_iter`` / ``max_eval`` / ``tolerance_grad`` / ``tolerance_change`` stops), on the
parameters' arrays flattened into one vector.

The arithmetic is torch's, step for step: what torch keeps as 0-dim tensors (``ys``, ``ro``,
``H_diag``, ``al``, the directional derivatives, the step ``t`` after the first iteration's scaling)
are NumPy scalars of the parameters' dtype here, and Python floats stay Python floats, so the mixed
expressions round as torch's weak-scalar promotion rounds them (NumPy 2's rules are the same).
``x.add_(y, alpha=a)`` is a fused multiply-add as in torch's kernels. Dot products and sums are
NumPy's, whose summation order can differ from torch's in the last bit."""
import numpy as np

from derivgen.core.grad_mode import enable_grad, no_grad
from derivgen.core.tensor import Tensor, bump_version
from derivgen.optim import _kernels
from derivgen.optim.optimizer import Optimizer, check_nonnegative


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through ``(x1, f1, g1)`` and ``(x2, f2, g2)``, within ``bounds``."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions (bracketing, then zooming by cubic
    interpolation), as torch's ``_strong_wolfe``: ``(f_new, g_new, t, evaluations)``."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # a point too near a bracket's end makes no progress: move it inside, once in a row
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


# the state entries torch keeps as tensors (or lists of them); here NumPy values while a step runs
_TENSOR_STATE = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad", "al")


def _to_state(value):
    if isinstance(value, list):
        return [_to_state(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return Tensor._make(np.array(value))
    return value


def _from_state(value):
    if isinstance(value, list):
        return [_from_state(v) for v in value]
    if isinstance(value, Tensor):
        arr = value._array
        return arr[()] if arr.ndim == 0 else np.array(arr)
    return value


class LBFGS(Optimizer):
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        check_nonnegative(lr=lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size,
                    "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def __setstate__(self, state):
        super().__setstate__(state)
        self._params = self.param_groups[0]["params"]

    def _gather_flat_grad(self):
        return np.concatenate([np.zeros(p._array.size, p._array.dtype) if p.grad is None
                               else p.grad._array.reshape(-1) for p in self._params])

    def _add_grad(self, step_size, update):
        """Every parameter ``+= step_size * update`` (its slice of the flat vector)."""
        offset = 0
        for p in self._params:
            arr = p._array
            numel = arr.size
            flat = arr.reshape(-1) if arr.flags.c_contiguous and arr.flags.writeable else arr.flatten()
            _kernels.add_scaled(flat, np.ascontiguousarray(update[offset:offset + numel]), arr.dtype.type(step_size))
            if not np.shares_memory(flat, arr):
                p._array[...] = flat.reshape(arr.shape)
            bump_version(p)
            offset += numel

    def _clone_param(self):
        return [p._array.copy() for p in self._params]

    def _set_param(self, params_data):
        for p, data in zip(self._params, params_data):
            p._array[...] = data
            bump_version(p)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        with no_grad(), np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return self._step(enable_grad()(closure))

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # the whole optimizer's state lives with the first parameter (torch's layout)
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d, t, old_dirs, old_stps, ro, H_diag, prev_flat_grad = (
            _from_state(state.get(k)) for k in ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        al = _from_state(state["al"]) if "al" in state else None
        opt_cond = False
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # curvature condition: only then is the pair kept
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if al is None:
                    al = [None] * history_size
                    state["al"] = None  # holds torch's place in the state's order; filled below
                # two-loop recursion: d = -H g
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    _kernels.add_scaled(q, old_dirs[i], -al[i])
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    _kernels.add_scaled(r, old_stps[i], al[i] - be_i)
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # not a descent direction
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    # the last iteration needs no new gradient: the next step's closure computes it
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        for key, value in (("d", d), ("t", t), ("old_dirs", old_dirs), ("old_stps", old_stps), ("ro", ro),
                           ("H_diag", H_diag), ("prev_flat_grad", prev_flat_grad)):
            state[key] = _to_state(value)
        state["prev_loss"] = prev_loss
        if al is not None:
            state["al"] = _to_state(al)
        return orig_loss
