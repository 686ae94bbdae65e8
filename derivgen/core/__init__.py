"""The core layer: dtypes, grad mode, anomaly mode, hooks, shapes, Tensor, Node, AccumulateGrad, saved
values and the op registry. It imports nothing from the layers above it."""
