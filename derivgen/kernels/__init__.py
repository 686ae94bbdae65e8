"""The kernel layer: Numba helpers, the array dispatcher (1-D / 2-D / rows / parallel variants), the
buffer pool and hand-written loops. Arrays in, arrays out: it knows nothing of Tensors or graphs."""
