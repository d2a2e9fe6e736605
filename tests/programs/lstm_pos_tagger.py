"""PyTorch's tutorial "Sequence Models and Long Short-Term Memory Networks" (an LSTM
part-of-speech tagger), written from memory as the tutorial has it, run on a library given as
``torch``: ``python tests/programs/lstm_pos_tagger.py`` runs it with minigrad and with PyTorch
and prints both.

The only change besides the import: the two libraries draw different random numbers, so
``run`` takes ``start``, a hook that can give the models PyTorch's starting weights (and the
inputs PyTorch's random draws), to show that the same program then prints the same numbers.
"""

import sys

import minigrad


def run(torch, epochs=300, start=lambda name, obj: obj, out=print):
    nn, optim, F = torch.nn, torch.optim, torch.nn.functional
    torch.manual_seed(1)

    # -- LSTMs in PyTorch: step by step, and the whole sequence at once
    lstm = start("lstm", nn.LSTM(3, 3))  # Input dim is 3, output dim is 3
    inputs = start("inputs", [torch.randn(1, 3) for _ in range(5)])  # a sequence of length 5

    # initialize the hidden state.
    hidden = start("hidden", (torch.randn(1, 1, 3), torch.randn(1, 1, 3)))
    for i in inputs:
        # Step through the sequence one element at a time.
        # after each step, hidden contains the hidden state.
        out_, hidden = lstm(i.view(1, 1, -1), hidden)

    # alternatively, we can do the entire sequence all at once.
    inputs = torch.cat(inputs).view(len(inputs), 1, -1)
    hidden = start("hidden2", (torch.randn(1, 1, 3), torch.randn(1, 1, 3)))  # clean out hidden state
    out_, hidden = lstm(inputs, hidden)
    out(out_)
    out(hidden)

    # -- An LSTM for part-of-speech tagging
    def prepare_sequence(seq, to_ix):
        idxs = [to_ix[w] for w in seq]
        return torch.tensor(idxs, dtype=torch.long)

    training_data = [
        # Tags are: DET - determiner; NN - noun; V - verb
        # For example, the word "The" is a determiner
        ("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
        ("Everybody read that book".split(), ["NN", "V", "DET", "NN"])
    ]
    word_to_ix = {}
    # For each words-list (sentence) and tags-list in each tuple of training_data
    for sent, tags in training_data:
        for word in sent:
            if word not in word_to_ix:  # word has not been assigned an index yet
                word_to_ix[word] = len(word_to_ix)  # Assign each word with a unique index
    out(word_to_ix)
    tag_to_ix = {"DET": 0, "NN": 1, "V": 2}  # Assign each tag with a unique index

    # These will usually be more like 32 or 64 dimensional.
    # We will keep them small, so we can see how the weights change as we train.
    EMBEDDING_DIM = 6  # noqa: N806  (the tutorial's names)
    HIDDEN_DIM = 6  # noqa: N806

    class LSTMTagger(nn.Module):

        def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
            super(LSTMTagger, self).__init__()  # noqa: UP008
            self.hidden_dim = hidden_dim

            self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)

            # The LSTM takes word embeddings as inputs, and outputs hidden states
            # with dimensionality hidden_dim.
            self.lstm = nn.LSTM(embedding_dim, hidden_dim)

            # The linear layer that maps from hidden state space to tag space
            self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

        def forward(self, sentence):
            embeds = self.word_embeddings(sentence)
            lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
            tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
            tag_scores = F.log_softmax(tag_space, dim=1)
            return tag_scores

    model = start("model", LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix),
                                      len(tag_to_ix)))
    loss_function = nn.NLLLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)

    # See what the scores are before training
    # Note that element i,j of the output is the score for tag j for word i.
    # Here we don't need to train, so the code is wrapped in torch.no_grad()
    with torch.no_grad():
        inputs = prepare_sequence(training_data[0][0], word_to_ix)
        tag_scores = model(inputs)
        out(tag_scores)

    for epoch in range(epochs):  # again, normally you would NOT do 300 epochs, it is toy data
        for sentence, tags in training_data:
            # Step 1. Remember that Pytorch accumulates gradients.
            # We need to clear them out before each instance
            model.zero_grad()

            # Step 2. Get our inputs ready for the network, that is, turn them into
            # Tensors of word indices.
            sentence_in = prepare_sequence(sentence, word_to_ix)
            targets = prepare_sequence(tags, tag_to_ix)

            # Step 3. Run our forward pass.
            tag_scores = model(sentence_in)

            # Step 4. Compute the loss, gradients, and update the parameters by
            #  calling optimizer.step()
            loss = loss_function(tag_scores, targets)
            loss.backward()
            optimizer.step()

    # See what the scores are after training
    with torch.no_grad():
        inputs = prepare_sequence(training_data[0][0], word_to_ix)
        tag_scores = model(inputs)

        # The sentence is "the dog ate the apple".  i,j corresponds to score for tag j
        # for word i. The predicted tag is the maximum scoring tag.
        # Here, we can see the predicted sequence below is 0 1 2 0 1
        # since 0 is index of the maximum value of row 0,
        # 1 is the index of maximum value of row 1, etc.
        # Which is DET NOUN VERB DET NOUN, the correct sequence!
        out(tag_scores)
    return tag_scores


def torch_start():
    """A ``start`` hook pair: PyTorch's run records what it draws and builds, and minigrad's
    run takes the same numbers (weights by ``load_state_dict``, tensors by value)."""
    seen = {}

    def record(name, obj):  # a copy, as it is now: the run goes on to train it
        if isinstance(obj, (list, tuple)):
            seen[name] = type(obj)(t.detach().clone() for t in obj)
        elif hasattr(obj, "state_dict"):
            seen[name] = {k: v.detach().clone() for k, v in obj.state_dict().items()}
        else:
            seen[name] = obj.detach().clone()
        return obj

    def convert(value):
        if isinstance(value, (list, tuple)):
            return type(value)(convert(v) for v in value)
        return minigrad.tensor(value.detach().numpy())

    def replay(name, obj):
        theirs = seen[name]
        if isinstance(obj, minigrad.nn.Module):
            obj.load_state_dict({k: convert(v) for k, v in theirs.items()})
            return obj
        return convert(theirs)
    return record, replay


if __name__ == "__main__":
    import torch
    record, replay = torch_start()
    epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    print("---- PyTorch")
    run(torch, epochs, record)
    print("---- minigrad")
    run(minigrad, epochs, replay)
