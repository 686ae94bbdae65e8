"""``derivgen.optim``: torch's optimizers (``SGD``, ``Adam``, ``AdamW``, ``RMSprop``, ``Adagrad``, ``Adamax``,
``Adadelta``, ``NAdam``, ``RAdam``, ``ASGD``, ``Rprop``, ``Adafactor``, ``Muon``, ``LBFGS``, ``SparseAdam``), learning-rate schedulers
(``derivgen.optim.lr_scheduler``) and weight averaging (``derivgen.optim.swa_utils``). Each update rule is
one Numba loop per parameter, in place, matching torch's single-tensor (``foreach=False``) formulas
bit-for-bit in float64 where no square root is taken; ``differentiable=True`` runs the same rules as
autograd-recorded tensor operations (``derivgen.optim.differentiable``)."""
from derivgen.optim.optimizer import Optimizer
from derivgen.optim.sgd import SGD
from derivgen.optim.adam import Adam
from derivgen.optim.adamw import AdamW
from derivgen.optim.rmsprop import RMSprop
from derivgen.optim.adagrad import Adagrad
from derivgen.optim.adamax_adadelta import Adadelta, Adamax
from derivgen.optim.nadam_radam import NAdam, RAdam
from derivgen.optim.asgd_rprop import ASGD, Rprop
from derivgen.optim.lbfgs import LBFGS
from derivgen.optim.adafactor import Adafactor
from derivgen.optim.muon import Muon
from derivgen.optim.sparse_adam import SparseAdam
from derivgen.optim import lr_scheduler, swa_utils
from derivgen.optim.swap_in import swap_in_optimizer_params_and_state

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "Adadelta", "NAdam", "RAdam",
           "ASGD", "Rprop", "LBFGS", "SparseAdam", "Adafactor", "Muon", "lr_scheduler", "swa_utils",
           "swap_in_optimizer_params_and_state"]
