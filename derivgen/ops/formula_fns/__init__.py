"""Functions that backward formulas in ``formulas.yaml`` may call besides elementwise math.

Each tensor function has two implementations with one meaning: ``name`` works on numpy arrays (the fast
path, no graph) and ``name_graph`` on Tensors through differentiable ops (``create_graph=True``), so one
table row serves both paths. ``META_FUNCTIONS`` compute plain Python values from saved metadata and are
the same on both paths. The generator reads ``TENSOR_FUNCTIONS`` and ``META_FUNCTIONS`` to know which
names a formula may use.

The helpers live in themed modules (shapes, pointwise, reductions, losses, conv, pooling,
normalization); this package merges
their registries and exposes every helper by name, which is how generated nodes call them (``_fns.name``)."""
from derivgen.ops.formula_fns import shapes as _shapes
from derivgen.ops.formula_fns.shapes import (  # noqa: F401
    as_strided_backward,
    as_strided_backward_graph,
    cat_tensors_backward,
    cat_tensors_backward_graph,
    expand,
    expand_graph,
    full_like,
    full_like_graph,
    numel,
    permute_backward,
    permute_backward_graph,
    reduced_numel,
    reshape,
    reshape_graph,
    split_backward,
    split_backward_graph,
    split_with_sizes_backward,
    split_with_sizes_backward_graph,
    stack_tensors_backward,
    stack_tensors_backward_graph,
    sum_backward,
    sum_backward_graph,
    sum_to,
    sum_to_graph,
    unbind_backward,
    unbind_backward_graph,
    unsqueeze_to,
    unsqueeze_to_graph,
    zeros_like,
    zeros_like_graph,
)
from derivgen.ops.formula_fns import pointwise as _pointwise
from derivgen.ops.formula_fns.pointwise import (  # noqa: F401
    clamp_backward,
    clamp_backward_graph,
    clamp_backward_min_max,
    clamp_backward_min_max_graph,
    clamp_jvp,
    clamp_jvp_graph,
    elu_result_backward,
    elu_result_backward_graph,
    gelu_double_backward,
    gelu_double_backward_graph,
    isfinite,
    isfinite_graph,
    isnan,
    isnan_graph,
    leaky_relu_result_backward,
    leaky_relu_result_backward_graph,
    logit_backward,
    logit_backward_graph,
    zero_if_rounding,
    zero_if_rounding_graph,
)
from derivgen.ops.formula_fns import reductions as _reductions
from derivgen.ops.formula_fns.reductions import (  # noqa: F401
    cumprod_backward,
    cumprod_backward_graph,
    cumprod_jvp,
    cumprod_jvp_graph,
    evenly_distribute_backward,
    evenly_distribute_backward_graph,
    linalg_vector_norm_backward,
    linalg_vector_norm_backward_graph,
    prod_backward,
    prod_backward_graph,
    prod_dim_backward,
    prod_dim_backward_graph,
    repeat_backward,
    repeat_backward_graph,
    scale_grad_by_count,
    scale_grad_by_count_graph,
    value_selecting_reduction_backward,
    value_selecting_reduction_backward_graph,
    var_backward,
    var_backward_graph,
    zeros_like_sized,
    zeros_like_sized_graph,
)
from derivgen.ops.formula_fns import losses as _losses
from derivgen.ops.formula_fns.losses import (  # noqa: F401
    log_softmax_backward_data,
    log_softmax_backward_data_graph,
    bce_with_logits_backward,
    bce_with_logits_backward_graph,
    bce_with_logits_target_backward,
    bce_with_logits_target_backward_graph,
    binary_cross_entropy_backward,
    binary_cross_entropy_backward_graph,
    binary_cross_entropy_target_backward,
    binary_cross_entropy_target_backward_graph,
    embedding_backward,
    embedding_backward_graph,
    layer_norm_backward,
    layer_norm_backward_graph,
    layer_norm_jvp,
    layer_norm_jvp_graph,
    neg_list,
    nll_loss_backward,
    nll_loss_backward_graph,
    reduction_divisor,
)

from derivgen.ops.formula_fns import conv as _conv
from derivgen.ops.formula_fns.conv import (  # noqa: F401
    convolution_backward,
    convolution_backward_graph,
    convolution_jvp,
    convolution_jvp_graph,
)
from derivgen.ops.formula_fns import pooling as _pooling
from derivgen.ops.formula_fns.pooling import (  # noqa: F401
    adaptive_avg_pool2d_backward,
    adaptive_avg_pool2d_backward_graph,
    adaptive_avg_pool3d_backward,
    adaptive_avg_pool3d_backward_graph,
    adaptive_max_pool2d_backward,
    adaptive_max_pool2d_backward_graph,
    adaptive_max_pool3d_backward,
    adaptive_max_pool3d_backward_graph,
    avg_pool2d_backward,
    avg_pool2d_backward_graph,
    avg_pool3d_backward,
    avg_pool3d_backward_graph,
    max_pool2d_with_indices_backward,
    max_pool2d_with_indices_backward_graph,
    max_pool2d_with_indices_jvp,
    max_pool2d_with_indices_jvp_graph,
    max_pool3d_with_indices_backward,
    max_pool3d_with_indices_backward_graph,
    max_pool3d_with_indices_jvp,
    max_pool3d_with_indices_jvp_graph,
)
from derivgen.ops.formula_fns import padding as _padding
from derivgen.ops.formula_fns.padding import (  # noqa: F401
    reflection_pad_backward,
    reflection_pad_backward_graph,
    replication_pad_backward,
    replication_pad_backward_graph,
)
from derivgen.ops.formula_fns import rrelu as _rrelu
from derivgen.ops.formula_fns.rrelu import rrelu_with_noise_backward, rrelu_with_noise_backward_graph  # noqa: F401
from derivgen.ops.formula_fns import rnn as _rnn
from derivgen.ops.formula_fns.rnn import mkldnn_rnn_layer_backward, mkldnn_rnn_layer_backward_graph  # noqa: F401
from derivgen.ops.formula_fns import normalization as _normalization
from derivgen.ops.formula_fns.normalization import (  # noqa: F401
    batch_norm_backward,
    batch_norm_backward_graph,
    batch_norm_jvp,
    batch_norm_jvp_graph,
    group_norm_backward,
    group_norm_backward_graph,
    group_norm_jvp,
    group_norm_jvp_graph,
)

from derivgen.ops.formula_fns import selection as _selection
from derivgen.ops.formula_fns.selection import (  # noqa: F401
    embedding_bag_backward,
    embedding_bag_backward_graph,
    embedding_bag_per_sample_weights_backward,
    embedding_bag_per_sample_weights_backward_graph,
    glu_backward,
    glu_backward_graph,
    glu_jvp,
    glu_jvp_graph,
    linalg_det_backward,
    linalg_det_backward_graph,
    linalg_det_jvp,
    linalg_det_jvp_graph,
    linalg_inv_backward,
    linalg_inv_backward_graph,
    linalg_inv_jvp,
    linalg_inv_jvp_graph,
    masked_select_backward,
    masked_select_backward_graph,
    norm_backward,
    norm_backward_graph,
    trace_backward,
    trace_backward_graph,
)

from derivgen.ops.formula_fns import upsample as _upsample
from derivgen.ops.formula_fns.upsample import (  # noqa: F401
    upsample_bilinear2d_backward,
    upsample_bilinear2d_backward_graph,
    upsample_nearest2d_backward,
    upsample_nearest2d_backward_graph,
)

TENSOR_FUNCTIONS = {}
META_FUNCTIONS = {}
for _module in (_shapes, _pointwise, _reductions, _losses, _conv, _pooling, _padding, _rrelu, _normalization, _rnn,
                _selection, _upsample):
    TENSOR_FUNCTIONS.update(getattr(_module, "TENSOR_FUNCTIONS", {}))
    META_FUNCTIONS.update(getattr(_module, "META_FUNCTIONS", {}))
