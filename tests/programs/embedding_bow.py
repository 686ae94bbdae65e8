"""A bag-of-words text classifier: a vocabulary from a tiny corpus, nn.EmbeddingBag with offsets (the
text classification tutorial's model), then nn.Embedding + mean pooling with padding_idx."""
import numpy as np
import torch
from torch import nn

corpus = [("the movie was great fun", 1), ("a truly awful boring film", 0), ("great acting and fun plot", 1),
          ("boring plot awful acting", 0), ("fun fun fun", 1), ("the worst film", 0)]
vocab = {"<pad>": 0, "<unk>": 1}
for text, _ in corpus:
    for tok in text.split():
        vocab.setdefault(tok, len(vocab))
print(len(vocab), vocab["great"], vocab.get("nothing", vocab["<unk>"]))


def text_pipeline(text):
    return [vocab.get(tok, 1) for tok in text.split()]


def collate_batch(batch):
    label_list, text_list, offsets = [], [], [0]
    for _text, _label in batch:
        label_list.append(_label)
        processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
        text_list.append(processed_text)
        offsets.append(processed_text.size(0))
    label_list = torch.tensor(label_list, dtype=torch.int64)
    offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
    text_list = torch.cat(text_list)
    return label_list, text_list, offsets


labels, text, offsets = collate_batch(corpus[:3])
print(labels, text, offsets)


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super().__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)
        self.init_weights()

    def init_weights(self):
        rng = np.random.default_rng(0)
        with torch.no_grad():
            self.embedding.weight.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, self.embedding.weight.shape).astype(np.float32)))
            self.fc.weight.copy_(torch.from_numpy(rng.uniform(-0.5, 0.5, self.fc.weight.shape).astype(np.float32)))
            self.fc.bias.data.zero_()

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


model = TextClassificationModel(len(vocab), 8, 2)
print(model)
criterion = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
for epoch in range(10):
    labels, text, offsets = collate_batch(corpus)
    optimizer.zero_grad()
    predicted_label = model(text, offsets)
    loss = criterion(predicted_label, labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
    optimizer.step()
    acc = (predicted_label.argmax(1) == labels).sum().item() / labels.size(0)
    if epoch % 3 == 2:
        print(f"epoch {epoch + 1}: loss {loss.item():.4f} acc {acc:.3f}")
print(predicted_label.shape, predicted_label.grad_fn.name())

bag = nn.EmbeddingBag(10, 3, mode="sum")
with torch.no_grad():
    bag.weight.copy_(torch.arange(30.0).reshape(10, 3))
print(bag(torch.tensor([[1, 2], [3, 4]])))
print(bag(torch.tensor([1, 2, 4, 5, 4, 3]), torch.tensor([0, 4])))
print(nn.EmbeddingBag(10, 3, mode="max").mode)


class MeanPool(nn.Module):
    def __init__(self, vocab_size, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.out = nn.Linear(dim, 1)

    def forward(self, ids):
        mask = (ids != 0).unsqueeze(-1).float()
        summed = (self.emb(ids) * mask).sum(1)
        return self.out(summed / mask.sum(1).clamp(min=1))


ids = torch.nn.utils.rnn.pad_sequence([torch.tensor(text_pipeline(t)) for t, _ in corpus], batch_first=True)
print(ids)
mp = MeanPool(len(vocab), 4)
print(mp.emb.weight[0], mp(ids).shape)
