"""torch.nn's module classes, one small module per theme."""
from derivgen.nn.modules.attention import MultiheadAttention  # noqa: F401
from derivgen.nn.modules.activation import (CELU, ELU, GELU, SELU, Hardsigmoid, Hardswish, Hardtanh,  # noqa: F401
                                            LeakyReLU, LogSoftmax, Mish, ReLU, ReLU6, RReLU, Sigmoid, SiLU, Softmax,
                                            Softplus, Tanh, Threshold)
from derivgen.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d  # noqa: F401
from derivgen.nn.modules.container import (ModuleDict, ModuleList, ParameterDict, ParameterList,  # noqa: F401
                                           Sequential)
from derivgen.nn.modules.conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,  # noqa: F401
                                      ConvTranspose3d)
from derivgen.nn.modules.dropout import Dropout  # noqa: F401
from derivgen.nn.modules.flatten import Flatten, Unflatten  # noqa: F401
from derivgen.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d  # noqa: F401
from derivgen.nn.modules.lazy import LazyModuleMixin  # noqa: F401
from derivgen.nn.modules.lazy_layers import (LazyBatchNorm1d, LazyBatchNorm2d, LazyConv1d, LazyConv2d,  # noqa: F401
                                             LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
                                             LazyConvTranspose3d, LazyLinear)
from derivgen.nn.modules.linear import Bilinear, Identity, Linear, NonDynamicallyQuantizableLinear  # noqa: F401
from derivgen.nn.modules.loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss,  # noqa: F401
                                      L1Loss, MSELoss, NLLLoss, SmoothL1Loss)
from derivgen.nn.modules.module import Module  # noqa: F401
from derivgen.nn.modules.normalization import GroupNorm, LayerNorm  # noqa: F401
from derivgen.nn.modules.padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,  # noqa: F401
                                         ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                                         ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                                         ZeroPad1d, ZeroPad2d, ZeroPad3d)
from derivgen.nn.modules.recurrent import GRU, LSTM, RNN, RNNBase  # noqa: F401
from derivgen.nn.modules.rnn import GRUCell, LSTMCell, RNNCell, RNNCellBase  # noqa: F401
from derivgen.nn.modules.pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d,  # noqa: F401
                                         AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d,
                                         AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d)
from derivgen.nn.modules.sparse import Embedding  # noqa: F401
from derivgen.nn.modules.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,  # noqa: F401
                                             TransformerEncoder, TransformerEncoderLayer)
