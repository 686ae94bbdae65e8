"""torch.nn's module classes, one small module per theme."""
from derivgen.nn.modules.attention import MultiheadAttention  # noqa: F401
from derivgen.nn.modules.activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid,  # noqa: F401
                                            Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, PReLU,
                                            ReLU, ReLU6, RReLU, Sigmoid, SiLU, Softmax, Softmin, Softplus,
                                            Softshrink, Softsign, Tanh, Tanhshrink, Threshold)
from derivgen.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d  # noqa: F401
from derivgen.nn.modules.container import (ModuleDict, ModuleList, ParameterDict, ParameterList,  # noqa: F401
                                           Sequential)
from derivgen.nn.modules.conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,  # noqa: F401
                                      ConvTranspose3d)
from derivgen.nn.modules.distance import CosineSimilarity, PairwiseDistance  # noqa: F401
from derivgen.nn.modules.dropout import Dropout, Dropout1d, Dropout2d, Dropout3d  # noqa: F401
from derivgen.nn.modules.flatten import Flatten, Unflatten  # noqa: F401
from derivgen.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401
from derivgen.nn.modules.lazy import LazyModuleMixin  # noqa: F401
from derivgen.nn.modules.lazy_layers import (LazyBatchNorm1d, LazyBatchNorm2d, LazyConv1d, LazyConv2d,  # noqa: F401
                                             LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
                                             LazyConvTranspose3d, LazyLinear)
from derivgen.nn.modules.linear import Bilinear, Identity, Linear, NonDynamicallyQuantizableLinear  # noqa: F401
from derivgen.nn.modules.loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss,  # noqa: F401
                                      GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss,
                                      MarginRankingLoss, MSELoss, MultiLabelSoftMarginLoss, NLLLoss, PoissonNLLLoss,
                                      SmoothL1Loss, SoftMarginLoss, TripletMarginLoss)
from derivgen.nn.modules.module import Module  # noqa: F401
from derivgen.nn.modules.normalization import GroupNorm, LayerNorm, RMSNorm  # noqa: F401
from derivgen.nn.modules.padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,  # noqa: F401
                                         ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                                         ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                                         ZeroPad1d, ZeroPad2d, ZeroPad3d)
from derivgen.nn.modules.recurrent import GRU, LSTM, RNN, RNNBase  # noqa: F401
from derivgen.nn.modules.rnn import GRUCell, LSTMCell, RNNCell, RNNCellBase  # noqa: F401
from derivgen.nn.modules.pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d,  # noqa: F401
                                         AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d,
                                         AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d)
from derivgen.nn.modules.sparse import Embedding, EmbeddingBag  # noqa: F401
from derivgen.nn.modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # noqa: F401
from derivgen.nn.modules.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: F401
                                             TransformerEncoder, TransformerEncoderLayer)

# what ``from derivgen.nn.modules import *`` (derivgen.nn) exports: the module classes, as torch.nn.modules'
# __all__ lists them; the mixin and the quantization stand-in stay here only, as in torch
__all__ = sorted(name for name, value in globals().items()
                 if isinstance(value, type) and name not in ("LazyModuleMixin", "NonDynamicallyQuantizableLinear"))
