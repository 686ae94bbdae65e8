"""A character-level RNN classifier in the style of the names tutorial: one-hot letters, nn.RNN over
the sequence, the last hidden state through a Linear + LogSoftmax, NLLLoss, and category lookup."""
import string

import numpy as np
import torch
import torch.nn as nn

all_letters = string.ascii_lowercase
n_letters = len(all_letters)
categories = ["english", "french", "german"]
data = {"english": ["smith", "brown", "jones"], "french": ["dubois", "moreau", "laurent"],
        "german": ["muller", "schmidt", "weber"]}


def letter_to_index(letter):
    return all_letters.find(letter)


def line_to_tensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letter_to_index(letter)] = 1
    return tensor


print(line_to_tensor("ab").size(), line_to_tensor("jones").sum().item())


class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.rnn = nn.RNN(input_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, line_tensor):
        rnn_out, hidden = self.rnn(line_tensor)
        output = self.h2o(hidden[0])
        return self.softmax(output)


rng = np.random.default_rng(5)
rnn = CharRNN(n_letters, 16, len(categories))
with torch.no_grad():
    for p in rnn.parameters():
        p.copy_(torch.from_numpy(rng.normal(0, 0.2, size=tuple(p.shape)).astype(np.float32)))
print(rnn)


def category_from_output(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return categories[category_i], category_i


output = rnn(line_to_tensor("albert"))
print(output.shape, output.grad_fn.name())
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.05)
for epoch in range(20):
    total = 0.0
    for ci, cat in enumerate(categories):
        for name in data[cat]:
            optimizer.zero_grad()
            out = rnn(line_to_tensor(name))
            loss = criterion(out, torch.tensor([ci], dtype=torch.long))
            loss.backward()
            nn.utils.clip_grad_norm_(rnn.parameters(), 3)
            optimizer.step()
            total += loss.item()
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1}: {total / 9:.4f}")

with torch.no_grad():
    for name in ["smith", "moreau", "weber"]:
        print(name, category_from_output(rnn(line_to_tensor(name))))
    confusion = torch.zeros(3, 3)
    for ci, cat in enumerate(categories):
        for name in data[cat]:
            guess_i = category_from_output(rnn(line_to_tensor(name)))[1]
            confusion[ci][guess_i] += 1
    confusion = confusion / confusion.sum(1, keepdim=True)
    print(confusion)
