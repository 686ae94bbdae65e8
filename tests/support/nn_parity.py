"""Helpers for the nn parity tests: copy a torch module's weights into a derivgen module (through numpy
and ``load_state_dict``), turn tensors of either library into numpy, and normalise the one spelling that
differs in error texts (``torch.Size`` / ``derivgen.Size``)."""
import numpy as np

import derivgen


def to_numpy(t):
    return t.detach().numpy()


def copy_weights(torch_module, derivgen_module):
    """Load ``torch_module``'s state into ``derivgen_module``; returns what ``load_state_dict`` returned."""
    state = {k: derivgen.from_numpy(np.array(v.detach().numpy())) for k, v in torch_module.state_dict().items()}
    return derivgen_module.load_state_dict(state)


def same_text(text):
    """An error text with the library's namespace spelled one way."""
    return text.replace("derivgen.", "torch.")
