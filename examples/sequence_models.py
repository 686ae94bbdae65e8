"""Two next-character models on a synthetic language, written as a plain PyTorch program:

* a 2-layer LSTM over variable-length sentences, packed with ``pack_padded_sequence`` (unsorted
  lengths) and unpacked with ``pad_packed_sequence``, with a ``LazyLinear`` head sized by a dummy batch;
* a tiny causal Transformer encoder (``batch_first``, a causal mask plus a key padding mask).

Both use ``Embedding``, ``CrossEntropyLoss(ignore_index=...)``, ``Adam`` and ``clip_grad_norm_``. Weights and
data come from numpy, so ``--torch`` prints the same losses up to float32 rounding.

    python examples/sequence_models.py            # derivgen
    python examples/sequence_models.py --torch    # PyTorch
"""
import sys

import numpy as np

if "--torch" in sys.argv:
    import torch
else:
    import derivgen as torch

nn = torch.nn
rnn_utils = torch.nn.utils.rnn

ALPHABET = "abcdefgh"
PAD = len(ALPHABET)  # also the index the loss ignores
VOCAB = len(ALPHABET) + 1


def make_sentences(rng, count):
    """Each sentence counts up from a random letter and wraps: 'cdefgha...', lengths 4 to 12."""
    sentences = []
    for _ in range(count):
        start, length = rng.integers(len(ALPHABET)), rng.integers(4, 13)
        sentences.append([(start + i) % len(ALPHABET) for i in range(length)])
    return sentences


def batch_tensors(sentences):
    """Inputs (each sentence but its last letter), targets (but its first), padded with PAD; lengths."""
    lengths = [len(s) - 1 for s in sentences]
    width = max(lengths)
    inputs = np.full((len(sentences), width), PAD, np.int64)
    targets = np.full((len(sentences), width), PAD, np.int64)
    for row, s in enumerate(sentences):
        inputs[row, :len(s) - 1] = s[:-1]
        targets[row, :len(s) - 1] = s[1:]
    return torch.from_numpy(inputs), torch.from_numpy(targets), lengths


class LSTMModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 8)
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.head = nn.LazyLinear(VOCAB)

    def forward(self, inputs, lengths):
        packed = rnn_utils.pack_padded_sequence(self.embed(inputs), lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = rnn_utils.pad_packed_sequence(out, batch_first=True, total_length=inputs.shape[1])
        return self.head(out)


class TransformerModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.position = nn.Embedding(16, 16)
        layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(16, VOCAB)

    def forward(self, inputs, lengths):
        steps = inputs.shape[1]
        x = self.embed(inputs) + self.position(torch.arange(steps))
        causal = torch.ones(steps, steps, dtype=torch.bool).triu(1)  # True: may not attend (a later position)
        padding = torch.arange(steps)[None, :] >= torch.tensor(lengths)[:, None]
        return self.head(self.encoder(x, mask=causal, src_key_padding_mask=padding, is_causal=True))


def numpy_weights(model, seed):
    rng = np.random.default_rng(seed)
    return {k: torch.from_numpy((rng.standard_normal(tuple(v.shape)) * 0.3).astype(np.float32))
            if v.dtype == torch.float32 else v for k, v in model.state_dict().items()}


def train(name, model, batches, epochs=5):
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for epoch in range(epochs):
        total = 0.0
        for inputs, targets, lengths in batches:
            opt.zero_grad()
            logits = model(inputs, lengths)
            loss = loss_fn(logits.reshape(-1, VOCAB), targets.reshape(-1))
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            total += loss.item()
        print(f"{name} epoch {epoch}  loss {total / len(batches):.5f}")


def main():
    rng = np.random.default_rng(0)
    batches = [batch_tensors(make_sentences(rng, 12)) for _ in range(6)]

    lstm = LSTMModel()
    lstm(*batches[0][::2])  # a dummy batch sizes the LazyLinear head
    lstm.load_state_dict(numpy_weights(lstm, 1))
    train("lstm", lstm, batches)

    transformer = TransformerModel()
    transformer.load_state_dict(numpy_weights(transformer, 2))
    train("transformer", transformer, batches)
    print(type(lstm.head).__name__, tuple(lstm.head.weight.shape))


if __name__ == "__main__":
    main()
