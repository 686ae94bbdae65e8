"""``derivgen.nn``: torch.nn's modules (``Module``, ``Linear``, containers, activations, losses, ...),
``Parameter``, ``functional`` and ``init``, with torch's names, signatures, texts and printed forms."""
from derivgen.nn import functional  # noqa: F401
from derivgen.nn import init  # noqa: F401
from derivgen.nn import utils  # noqa: F401
from derivgen.nn.modules import *  # noqa: F401,F403
# parametrize builds on nn.modules' containers, which nn.utils (imported by the recurrent modules) must not
from derivgen.nn.utils import parametrizations, parametrize  # noqa: F401,E402
from derivgen.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401
