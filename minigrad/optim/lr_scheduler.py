"""Learning-rate schedulers, as ``torch.optim.lr_scheduler``: they change each param group's
``lr`` as training goes on, large at first to move fast and smaller later to settle.

A learner meets them in chapter 10 (data and the training loop), where ``scheduler.step()``
is called once per epoch, after ``optimizer.step()``::

    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        scheduler.step()

Every value is computed as PyTorch computes it (the same formulas in the same order), so
the learning rates agree with PyTorch's to the last bit or nearly.
"""

import math
import types
import warnings
from collections import Counter
from functools import update_wrapper

from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "StepLR", "MultiStepLR", "ExponentialLR",
           "CosineAnnealingLR", "LinearLR", "ReduceLROnPlateau"]


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _no_epoch_argument(epoch):
    if epoch is not None:
        raise TypeError("scheduler.step(epoch) is deprecated in PyTorch and not supported here: "
                        "call scheduler.step() once per epoch, without an argument")


class _RecordsStepCalls:
    """Takes the place of ``optimizer.step`` once a scheduler is attached, and notes each call
    in ``optimizer._opt_called``, so that ``scheduler.step()`` can tell it came first (as
    PyTorch does). An optimizer without a scheduler keeps its own step, at no extra cost."""

    _wrapped_by_lr_sched = True  # PyTorch's mark: a step without it was replaced afterwards

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.step = optimizer.step
        update_wrapper(self, self.step)  # the step's name, docstring and signature for help()

    def __call__(self, *args, **kwargs):
        self.optimizer._opt_called = True
        return self.step(*args, **kwargs)


class LRScheduler:
    """Sets each group's ``lr`` to ``get_lr()`` at every ``step()``; subclasses give the rule."""

    _is_initial = False  # True during the constructor's step
    _get_lr_called_within_step = False  # get_lr() warns when called from outside step()

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        f"scheduler with last_epoch >= 0: load the optimizer's state_dict (it "
                        f"holds initial_lr) before creating the scheduler, or leave last_epoch "
                        f"at -1 for a fresh run")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        if not hasattr(optimizer.step, "_wrapped_by_lr_sched"):
            optimizer.step = _RecordsStepCalls(optimizer)
        self._step_count = 0
        self._is_initial = True  # the first step sets the lr of epoch 0
        try:
            self.step()
        finally:
            self._is_initial = False

    def step(self, epoch=None):
        """Go to the next epoch: set each group's ``lr`` to the schedule's next value."""
        _no_epoch_argument(epoch)
        if self._step_count == 1:  # the first call after the constructor's own
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    "before `lr_scheduler.step()`.", UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. Call them "
                    "in the opposite order, `optimizer.step()` then `lr_scheduler.step()`: "
                    "otherwise the first value of the learning rate schedule is skipped.",
                    UserWarning, stacklevel=2)
        self._step_count += 1
        self.last_epoch += 1
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_lr(self):
        """The lr of each group at ``last_epoch``, computed by the subclass's rule."""
        raise NotImplementedError

    def get_last_lr(self):
        """The learning rates the last ``step()`` set, one per param group."""
        return self._last_lr

    def state_dict(self):
        """Every attribute except the optimizer (save the optimizer's state_dict too)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def _current_lrs(self):
        return [group["lr"] for group in self.optimizer.param_groups]

    def _warn_unless_in_step(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, "
                          "please use `get_last_lr()`.", UserWarning, stacklevel=3)


class _LRScheduler(LRScheduler):
    """PyTorch's old name for ``LRScheduler``, kept so that older code runs."""


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``, with one function for all groups or one per group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        groups = len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != groups:
                raise ValueError(f"Expected {groups} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * groups
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_unless_in_step()
        return [base_lr * fn(self.last_epoch)
                for fn, base_lr in zip(self.lr_lambdas, self.base_lrs, strict=True)]

    def state_dict(self):
        """As ``LRScheduler.state_dict``, but a function's code can't be saved: each lambda is
        stored as None, or as its ``__dict__`` if it is a callable object."""
        state = {key: value for key, value in self.__dict__.items()
                 if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        saved_lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, saved_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


class StepLR(LRScheduler):
    """Multiplies the lr by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        if step_size <= 0:
            raise ValueError(f"step_size should be a positive number of epochs, got {step_size}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_unless_in_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]


class MultiStepLR(LRScheduler):
    """Multiplies the lr by ``gamma`` at each epoch in ``milestones`` (twice if listed twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_unless_in_step()
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in self._current_lrs()]


class ExponentialLR(LRScheduler):
    """Multiplies the lr by ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_unless_in_step()
        if self._is_initial:  # resuming from a checkpoint must not decay once more
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]


class CosineAnnealingLR(LRScheduler):
    """Follows half a cosine from ``initial_lr`` down to ``eta_min`` over ``T_max`` epochs
    (then back up, and so on), computed step to step from the current lr as PyTorch does."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        if T_max <= 0:
            raise ValueError(f"T_max should be a positive number of epochs, got {T_max}")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_unless_in_step()
        epoch, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if (epoch - 1 - t_max) % (2 * t_max) == 0:  # at the bottom: the ratio below would be 0/0
            return [lr + (base_lr - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for lr, base_lr in zip(self._current_lrs(), self.base_lrs, strict=True)]
        return [(1 + math.cos(math.pi * epoch / t_max))
                / (1 + math.cos(math.pi * (epoch - 1) / t_max)) * (lr - eta_min) + eta_min
                for lr in self._current_lrs()]


class LinearLR(LRScheduler):
    """Scales the lr by a factor going in a straight line from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs (a warm-up when it rises), then leaves it."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and "
                             "less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        self._warn_unless_in_step()
        start, end, epoch = self.start_factor, self.end_factor, self.last_epoch
        if epoch == 0:
            return [lr * start for lr in self._current_lrs()]
        if self._is_initial or epoch > self.total_iters:
            return self._current_lrs()
        # the ratio of this epoch's factor to the last one's
        ratio = 1.0 + (end - start) / (self.total_iters * start + (epoch - 1) * (end - start))
        return [lr * ratio for lr in self._current_lrs()]


class ReduceLROnPlateau(LRScheduler):
    """Multiplies the lr by ``factor`` when the metric given to ``step(metric)`` has not
    improved for more than ``patience`` epochs (then waits ``cooldown`` epochs)."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        # As in PyTorch, this scheduler sets no initial_lr and leaves optimizer.step alone.
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        groups = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != groups:
                raise ValueError(f"expected {groups} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * groups
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = self._current_lrs()
        if mode not in {"min", "max"}:
            raise ValueError(f"mode {mode} is unknown! Use 'min' or 'max'")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError(f"threshold mode {threshold_mode} is unknown! Use 'rel' or 'abs'")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def step(self, metrics, epoch=None):
        """Take this epoch's metric (a number or a one-element tensor) and reduce the lr if
        it has not improved for too long."""
        _no_epoch_argument(epoch)
        current = float(metrics)
        self.last_epoch += 1
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in the cooldown don't count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._current_lrs()

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):  # a param group was added since
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    f"usually due to a new param group being added to the optimizer. Please "
                    f"modify the `min_lrs` field to match the length of the `optimizer` param "
                    f"groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:  # smaller changes are not worth making
                group["lr"] = new_lr
