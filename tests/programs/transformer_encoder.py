"""A tiny Transformer encoder classifier: token embeddings plus sinusoidal positional encodings,
nn.TransformerEncoder with a padding mask, mean pooling, weights from a fixed NumPy generator."""
import math

import numpy as np
import torch
import torch.nn as nn


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=50):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)


class TinyTransformer(nn.Module):
    def __init__(self, ntoken, d_model=16, nhead=2, d_hid=32, nlayers=2, dropout=0.0):
        super().__init__()
        self.model_type = "Transformer"
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        encoder_layers = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers, enable_nested_tensor=False)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, 2)

    def forward(self, src, src_key_padding_mask=None):
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        output = self.transformer_encoder(src, src_key_padding_mask=src_key_padding_mask)
        return self.linear(output.mean(0))


rng = np.random.default_rng(11)
model = TinyTransformer(ntoken=12)
with torch.no_grad():
    for name, p in model.named_parameters():
        p.copy_(torch.from_numpy(rng.normal(0, 0.1, size=tuple(p.shape)).astype(np.float32)))
print(model.pos_encoder.pe.shape, f"{model.pos_encoder.pe[3, 0, :4].sum().item():.4f}")
print(sum(p.numel() for p in model.parameters()))
print(model.transformer_encoder.layers[0])
print(len(model.transformer_encoder.layers), [n for n, _ in model.transformer_encoder.layers[0].named_children()])

src = torch.tensor([[1, 5, 8, 10, 3], [2, 6, 9, 11, 1], [3, 7, 0, 0, 2], [4, 0, 0, 0, 5]])
labels = torch.tensor([1, 0, 1, 0, 1])
pad_mask = (src == 0).T
print(src.shape, pad_mask.shape, pad_mask.dtype)

optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss()
model.train()
for step in range(12):
    optimizer.zero_grad()
    logits = model(src, src_key_padding_mask=pad_mask)
    loss = criterion(logits, labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optimizer.step()
    if step % 4 == 3:
        print(f"step {step + 1}: {loss.item():.4f}")
model.eval()
with torch.no_grad():
    out = model(src, src_key_padding_mask=pad_mask)
    print(out.shape, out.argmax(1).tolist() == model(src, src_key_padding_mask=pad_mask).argmax(1).tolist())

mask = nn.Transformer.generate_square_subsequent_mask(4)
print(mask)
attn = nn.MultiheadAttention(embed_dim=16, num_heads=2, batch_first=True)
q = torch.zeros(2, 3, 16)
out, weights = attn(q, q, q)
print(out.shape, weights.shape, weights[0, 0])
