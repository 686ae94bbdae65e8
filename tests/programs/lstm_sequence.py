"""An LSTM sequence model predicting the next value of sine waves (batch_first, a Linear head), with
weights set from a fixed NumPy generator; shapes of outputs and states, a few Adam steps."""
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(7)
t = np.linspace(0, 4 * np.pi, 41, dtype=np.float32)
phases = np.array([0.0, 0.5, 1.0, 1.5], dtype=np.float32)
waves = np.sin(t[None, :] + phases[:, None])
inputs = torch.from_numpy(waves[:, :-1, None])
targets = torch.from_numpy(waves[:, 1:, None])
print(inputs.shape, targets.shape)


class SeqModel(nn.Module):
    def __init__(self, hidden=8):
        super().__init__()
        self.lstm = nn.LSTM(input_size=1, hidden_size=hidden, num_layers=1, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x, state=None):
        out, (h, c) = self.lstm(x, state)
        return self.head(out), (h, c)


model = SeqModel()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.3, 0.3, size=tuple(p.shape)).astype(np.float32)))
print(model)
print([(n, tuple(p.shape)) for n, p in model.lstm.named_parameters()])
pred, (h, c) = model(inputs)
print(pred.shape, h.shape, c.shape, pred.grad_fn.name())

optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
loss_fn = nn.MSELoss()
for epoch in range(30):
    optimizer.zero_grad()
    pred, _ = model(inputs)
    loss = loss_fn(pred, targets)
    loss.backward()
    optimizer.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1}: {loss.item():.4f}")

model.eval()
with torch.no_grad():
    h0 = torch.zeros(1, 1, 8)
    c0 = torch.zeros(1, 1, 8)
    seq = inputs[:1, :5]
    out, state = model(seq, (h0, c0))
    preds = []
    x_last = out[:, -1:]
    for _ in range(3):
        x_last, state = model(x_last, state)
        preds.append(x_last)
    print(torch.cat(preds, dim=1).shape, state[0].shape)

cell = nn.LSTMCell(1, 8)
gru = nn.GRU(1, 4, num_layers=2, batch_first=True, dropout=0.0)
out, hn = gru(inputs)
print(cell, gru, out.shape, hn.shape)
packed = nn.utils.rnn.pack_padded_sequence(inputs, lengths=[40, 30, 20, 10], batch_first=True)
out, (hn, cn) = model.lstm(packed)
unpacked, lens = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
print(type(out).__name__, unpacked.shape, lens)
