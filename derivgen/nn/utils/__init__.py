"""``derivgen.nn.utils``: gradient clipping, parameters <-> vector, weight and spectral norm hooks, as torch's
(``parametrize`` and ``parametrizations`` are imported by ``derivgen.nn``, above ``nn.modules``)."""
from derivgen.nn.utils.clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, get_total_norm  # noqa: F401
from derivgen.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from derivgen.nn.utils import rnn  # noqa: F401
from derivgen.nn.utils.weight_norm import remove_weight_norm, weight_norm  # noqa: F401
from derivgen.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
