"""Chapter 0's exercise checks accept the right answers and reject wrong ones."""

import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.teach.checks import MISSING
from minigrad.teach.exercises import ch00
from minigrad.teach.predictions import reset_all


def text(result):
    return repr(result)


# Exercise 1: 3 * 4 with a tensor

def test_product_accepts_tensors_holding_12():
    assert ch00.check_product(mg.tensor(3.0) * mg.tensor(4.0))
    assert ch00.check_product(mg.tensor(3) * 4)           # an integer tensor is fine too
    assert ch00.check_product(mg.tensor([3.0]) * mg.tensor([4.0]))  # one element, shape (1,)


def test_product_rejects_wrong_answers():
    assert not ch00.check_product(mg.tensor(3.0) + mg.tensor(4.0))
    plain = ch00.check_product(12)
    assert not plain and "not a tensor" in text(plain)
    many = ch00.check_product(mg.tensor([3.0, 4.0]))
    assert not many and "2 numbers" in text(many)


def test_product_without_an_answer_says_so():
    for answer in (None, MISSING):
        result = ch00.check_product(answer)
        assert not result and "no answer yet" in text(result)


# Exercise 2: the trained model's prediction for x = 3

def trained_model():
    mg.manual_seed(0)
    x = mg.linspace(-2, 2, 20).reshape(20, 1)
    y = 2 * x + 1
    model = nn.Linear(1, 1)
    criterion = nn.MSELoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    for _ in range(50):
        optimizer.zero_grad()
        criterion(model(x), y).backward()
        optimizer.step()
    return model


def test_prediction_accepts_the_models_output():
    model = trained_model()
    assert ch00.check_prediction(model(mg.tensor([[3.0]])), model)
    with mg.no_grad():
        assert ch00.check_prediction(model(mg.tensor([[3.0]])), model)


def test_prediction_of_one_sample_without_a_batch_is_accepted():
    model = trained_model()  # nn.Linear takes (1,) as PyTorch does, and answers with (1,)
    assert ch00.check_prediction(model(mg.tensor([3.0])), model)


def test_prediction_rejects_wrong_answers():
    model = trained_model()
    assert not ch00.check_prediction(model(mg.tensor([[4.0]])), model)
    flat = ch00.check_prediction(model(mg.tensor([4.0])), model)  # one sample, no batch
    assert not flat
    number = ch00.check_prediction(7.0, model)
    assert not number and "float" in text(number)
    assert "no answer yet" in text(ch00.check_prediction(None, model))


def test_prediction_follows_the_learners_model():
    untrained = nn.Linear(1, 1)
    assert ch00.check_prediction(untrained(mg.tensor([[3.0]])), untrained)
    assert not ch00.check_prediction(trained_model()(mg.tensor([[3.0]])), untrained)


# Exercise 3: one step of the training loop

def right_step(model, criterion, optimizer, inputs, targets):
    optimizer.zero_grad()
    loss = criterion(model(inputs), targets)
    loss.backward()
    optimizer.step()
    return loss.item()


def test_training_step_accepts_the_loop_body():
    assert ch00.check_training_step(right_step)


def test_training_step_accepts_zero_grad_anywhere_before_backward_and_a_tensor_loss():
    def step(model, criterion, optimizer, inputs, targets):
        loss = criterion(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss
    assert ch00.check_training_step(step)


def test_training_step_without_zero_grad_is_caught_at_step_2():
    def step(model, criterion, optimizer, inputs, targets):
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.step()
        return loss.item()
    result = ch00.check_training_step(step)
    assert not result and "step 1 is right but step 2 is not" in text(result)


def test_training_step_without_step_or_with_cleared_gradients_is_caught():
    def no_step(model, criterion, optimizer, inputs, targets):
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        return loss.item()

    def cleared(model, criterion, optimizer, inputs, targets):
        loss = criterion(model(inputs), targets)
        loss.backward()
        optimizer.zero_grad()
        optimizer.step()
        return loss.item()
    result = ch00.check_training_step(no_step)
    assert not result and "have not changed" in text(result)
    result = ch00.check_training_step(cleared)
    assert not result and "hold no gradient" in text(result)


def test_training_step_wrong_loss_or_no_return_or_errors_are_reported():
    def late_loss(model, criterion, optimizer, inputs, targets):
        right_step(model, criterion, optimizer, inputs, targets)
        return criterion(model(inputs), targets).item()  # the loss after the update

    def no_return(model, criterion, optimizer, inputs, targets):
        right_step(model, criterion, optimizer, inputs, targets)

    def broken(model, criterion, optimizer, inputs, targets):
        return model(inputs, targets)

    assert not ch00.check_training_step(late_loss)
    assert "returned None" in text(ch00.check_training_step(no_return))
    assert "raised TypeError" in text(ch00.check_training_step(broken))
    assert "no answer yet" in text(ch00.check_training_step(None))
    assert "expected a function" in text(ch00.check_training_step(3))


def test_training_step_with_a_different_learning_rate_is_caught():
    def too_fast(model, criterion, optimizer, inputs, targets):
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        with mg.no_grad():
            for p in model.parameters():
                p -= 0.5 * p.grad
        return loss.item()
    result = ch00.check_training_step(too_fast)
    assert not result and "after step 1" in text(result)


def test_checking_does_not_move_the_random_stream():
    mg.manual_seed(0)
    expected = mg.randn(3)
    mg.manual_seed(0)
    ch00.check_training_step(right_step)
    assert mg.randn(3).tolist() == expected.tolist()


# The widget: predict, then run

def torch_grad_after_presses():
    torch = pytest.importorskip("torch")
    x = torch.tensor([2.0], requires_grad=True)
    for _ in range(ch00.PRESSES):
        (3 * x * x).backward()
    return x.grad.item()


@pytest.fixture
def prediction():
    reset_all()
    yield ch00.grad_prediction
    reset_all()


def test_the_widgets_answer_is_pytorchs_and_the_widgets_own():
    from minigrad.teach.stepping import accumulation_states
    answer, shown = ch00.grad_prediction.measure()
    assert answer == torch_grad_after_presses()
    assert answer == accumulation_states(("backward",) * ch00.PRESSES)[-1]
    assert "12" in shown


def test_the_right_number_locked_before_the_presses_passes(prediction):
    assert prediction.lock(torch_grad_after_presses())
    assert prediction.reveal()


@pytest.mark.parametrize("wrong", [12, 12.0, 6, 0])
def test_a_prediction_that_forgets_accumulation_is_told_where_to_look(prediction, wrong):
    assert prediction.lock(wrong)
    result = prediction.reveal()
    assert not result and "keep what it held" in result.message


@pytest.mark.parametrize("computed", [mg.tensor(36.0), mg.tensor([36.0]), None, "36"])
def test_a_computed_or_missing_number_is_not_locked(prediction, computed):
    assert not prediction.lock(computed)
    assert prediction.locked is None
