"""``derivgen.nn.utils.rnn``: torch's ``PackedSequence`` and its helpers (``pack_padded_sequence``,
``pad_packed_sequence``, ``pad_sequence``, ``pack_sequence``, ...), with torch's layouts and errors.

A packed sequence stores the time steps one after another, each holding only the sequences still running
(``batch_sizes[t]`` rows, sorted longest first). Packing and padding are built from slices, ``cat``,
``constant_pad_nd`` and ``stack``, so gradients flow back to the padded input (torch records its fused
PackPaddedSequenceBackward0 instead)."""
from collections import namedtuple

import numpy as np

from derivgen.core import dtypes
from derivgen.core.registry import aten
from derivgen.core.tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]

_PackedSequenceBase = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """``(data, batch_sizes, sorted_indices, unsorted_indices)``; ``unsorted_indices`` defaults to the
    inverse of ``sorted_indices``."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def double(self):
        return self.to(dtype=dtypes.float64)

    def float(self):
        return self.to(dtype=dtypes.float32)

    def cpu(self, *args, **kwargs):
        return self

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _int64(values):
    return Tensor._make(np.asarray(values, dtype=np.int64))


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths._array.reshape(-1)]
    return [int(v) for v in lengths]


def invert_permutation(permutation):
    if permutation is None:
        return None
    return _int64(np.argsort(permutation._array, kind="stable"))


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded ``(T, B, *)`` (or ``(B, T, *)``) batch whose sequence ``b`` has ``lengths[b]`` steps."""
    lengths = _lengths_list(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
        sorted_indices = _int64(order)
        lengths = [lengths[i] for i in order]
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if len(lengths) != input.size(1):
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={input.size(1)})")
    if lengths and lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    for previous, current in zip(lengths, lengths[1:]):
        if previous < current:
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
    if lengths[0] > input.size(0):
        raise RuntimeError(f"Expected sequence length to be larger than 0 in RNN or padded input sequences to "
                           f"have length at least {lengths[0]}, got {input.size(0)}")
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(lengths[0])]
    steps = [input[t] if bs == input.size(1) else input[t].narrow(0, 0, bs) for t, bs in enumerate(batch_sizes)]
    data = aten.cat(steps, 0)
    return PackedSequence(data, _int64(batch_sizes), sorted_indices, None)


def _pad_rows(piece, rows, value, before=False):
    """``piece`` with ``rows`` rows of ``value`` added after (or before) its first dimension."""
    if rows == 0:
        return piece
    pad = [0, 0] * (piece.dim() - 1) + ([rows, 0] if before else [0, rows])
    return aten.constant_pad_nd(piece, pad, value)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of ``pack_padded_sequence``: ``(padded, lengths)`` in the original batch order."""
    batch_sizes = _lengths_list(sequence.batch_sizes)
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_seq_length}")
        max_seq_length = total_length
    batch = batch_sizes[0]
    steps = [_pad_rows(piece, batch - piece.size(0), padding_value)
             for piece in sequence.data.split(batch_sizes, 0)]
    padded = aten.stack(steps, 0)
    if max_seq_length > len(batch_sizes):
        padded = _pad_rows(padded, max_seq_length - len(batch_sizes), padding_value)
    lengths = np.asarray([sum(1 for bs in batch_sizes if bs > b) for b in range(batch)], dtype=np.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices._array]
    return padded, _int64(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks variable-length ``(L_i, *)`` tensors into ``(max L, B, *)`` (``(B, max L, *)`` with
    ``batch_first``), padding each on ``padding_side``."""
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    elif not hasattr(sequences, "__iter__"):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.size(0) for s in sequences)
    padded = [_pad_rows(s, longest - s.size(0), padding_value, before=padding_side == "left") for s in sequences]
    return aten.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq.narrow(0, 0, n) for seq, n in zip(padded_sequences.unbind(0), _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
