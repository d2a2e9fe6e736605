"""minigrad vs PyTorch (CPU) vs hand-written numpy, in one process, as ratios (`make bench`).

What is timed, each contender single-threaded and interleaved round by round so that
machine noise hits all three alike:
  * one training step (zero_grad, forward, cross-entropy, backward, SGD step) of three MLPs,
    eager and compiled (minigrad.compile's replay, torch.compile where it compiles within
    60 s), with the trace's own cost and the steps after which compiling pays off;
  * the per-op cost of a 200-op scalar chain, forward and backward;
  * backward time against graph size (10^3 .. 10^5 nodes): it must grow linearly;
  * peak memory of one step (tracemalloc: minigrad and numpy; PyTorch's allocator is not
    visible to it);
  * where a step's time goes: zero_grad, forward and loss, backward, optimizer step.
Before any timing, the three contenders run the same steps from the same weights and
their losses must agree. Results go to stdout, benchmarks/results/latest.json and the chart
figures/benchmark.svg (shown in chapter 11).
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # before numpy is imported: single-threaded BLAS for everyone

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import minigrad as mg  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MLPS = [((2, 16, 2), 32), ((64, 128, 10), 64), ((784, 256, 10), 128)]
LR = 0.01

try:
    import torch
    torch.set_num_threads(1)
except ImportError:  # the benchmark still compares minigrad with numpy
    torch = None


# ------------------------------------------------------------------ the three contenders

def initial_weights(sizes, seed=0):
    rng = np.random.default_rng(seed)
    (n_in, n_hidden, n_out) = sizes
    b1, b2 = 1 / np.sqrt(n_in), 1 / np.sqrt(n_hidden)
    return [rng.uniform(-b1, b1, (n_hidden, n_in)), rng.uniform(-b1, b1, n_hidden),
            rng.uniform(-b2, b2, (n_out, n_hidden)), rng.uniform(-b2, b2, n_out)]


def batch(sizes, n, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, sizes[0])).astype(np.float32),
            rng.integers(0, sizes[2], n))


def library_setup(lib, sizes, weights, x, y):
    """The MLP, its optimizer, its loss and the batch, written once for ``lib`` = minigrad
    or torch."""
    nn = lib.nn
    model = nn.Sequential(nn.Linear(sizes[0], sizes[1]), nn.ReLU(), nn.Linear(sizes[1], sizes[2]))
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w.astype(np.float32)))
    opt = lib.optim.SGD(model.parameters(), lr=LR)
    return model, opt, nn.CrossEntropyLoss(), lib.tensor(x), lib.tensor(y)


def library_step_fn(lib, sizes, weights, x, y):
    """One SGD step of the MLP, for ``lib`` = minigrad or torch."""
    model, opt, loss_fn, xs, ys = library_setup(lib, sizes, weights, x, y)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(xs), ys)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def minigrad_step_fn(sizes, weights, x, y):
    return library_step_fn(mg, sizes, weights, x, y)


def torch_step_fn(sizes, weights, x, y):
    return library_step_fn(torch, sizes, weights, x, y)


def numpy_step_fn(sizes, weights, x, y):
    """The same step written by hand: no graph, no autograd — the floor."""
    W1, b1, W2, b2 = [w.astype(np.float32) for w in weights]
    n = len(y)
    rows = np.arange(n)

    def step():
        h_pre = x @ W1.T + b1
        h = np.maximum(h_pre, 0)
        logits = h @ W2.T + b2
        shifted = logits - logits.max(axis=1, keepdims=True)
        exp = np.exp(shifted)
        probs = exp / exp.sum(axis=1, keepdims=True)
        loss = -np.log(probs[rows, y]).mean()
        g = probs
        g[rows, y] -= 1
        g /= n
        gW2, gb2 = g.T @ h, g.sum(axis=0)
        gh = (g @ W2) * (h_pre > 0)
        gW1, gb1 = gh.T @ x, gh.sum(axis=0)
        for param, grad in zip((W1, b1, W2, b2), (gW1, gb1, gW2, gb2)):
            param -= LR * grad
        return float(loss)
    return step


def compiled_step_fn(lib, sizes, weights, x, y):
    """The same step compiled (``lib.compile``: minigrad's replay, or torch.compile); the
    loss is read outside the compiled function (``.item()`` inside would break the graph)."""
    model, opt, loss_fn, xs, ys = library_setup(lib, sizes, weights, x, y)

    def train_step(xs, ys):
        opt.zero_grad()
        loss = loss_fn(model(xs), ys)
        loss.backward()
        opt.step()
        return loss
    compiled = lib.compile(train_step)
    return lambda: compiled(xs, ys).item()


def minigrad_compiled_step_fn(sizes, weights, x, y):
    return compiled_step_fn(mg, sizes, weights, x, y)


def torch_compiled_step_fn(sizes, weights, x, y):
    return compiled_step_fn(torch, sizes, weights, x, y)


CONTENDERS = {"minigrad": minigrad_step_fn, "numpy": numpy_step_fn,
              "compiled": minigrad_compiled_step_fn}
if torch is not None:
    CONTENDERS["pytorch"] = torch_step_fn
TORCH_COMPILE_BUDGET = 60  # seconds torch.compile may take to compile one model's step


def torch_compiled_or_why(sizes, weights, x, y):
    """torch.compile's step, compiled (its first call) within TORCH_COMPILE_BUDGET seconds:
    ``(step, seconds, first loss)``, or ``(None, seconds, why)`` when it cannot compile."""
    if torch is None:
        return None, 0.0, "PyTorch is not installed"
    import signal

    def out_of_time(*_):
        raise TimeoutError(f"did not compile within {TORCH_COMPILE_BUDGET} s")
    start = time.perf_counter()
    previous = signal.signal(signal.SIGALRM, out_of_time)
    signal.alarm(TORCH_COMPILE_BUDGET)
    try:
        step = torch_compiled_step_fn(sizes, weights, x, y)
        first = step()
        return step, time.perf_counter() - start, first
    except Exception as error:  # no C compiler, a timeout, ...: said in the table
        return None, time.perf_counter() - start, f"{type(error).__name__}: {error}"[:120]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def trace_cost(sizes, weights, x, y, repeat=5):
    """Median seconds of a compiled step's first call (run eagerly while recording, and the
    program built) and of an eager step, each from fresh weights."""
    first, eager = [], []
    for _ in range(repeat):
        step = minigrad_compiled_step_fn(sizes, weights, x, y)
        start = time.perf_counter()
        step()
        first.append(time.perf_counter() - start)
        step = minigrad_step_fn(sizes, weights, x, y)
        start = time.perf_counter()
        step()
        eager.append(time.perf_counter() - start)
    return statistics.median(first), statistics.median(eager)


# ------------------------------------------------------------------ timing helpers

def interleaved_medians(functions, rounds, repeat):
    """Median seconds per call of each function, timed round-robin."""
    samples = {name: [] for name in functions}
    for _ in range(rounds):
        for name, fn in functions.items():
            start = time.perf_counter()
            for _ in range(repeat):
                fn()
            samples[name].append((time.perf_counter() - start) / repeat)
    return {name: statistics.median(s) for name, s in samples.items()}


def check_agreement(steps, done=None):
    """The contenders must compute the same losses before their speed means anything.
    ``done``: the losses of steps some contender already took (torch.compile's first)."""
    done = done or {}
    losses = {name: done.get(name, []) + [fn() for _ in range(3 - len(done.get(name, [])))]
              for name, fn in steps.items()}
    reference = losses["numpy"]
    for name, values in losses.items():
        if not np.allclose(values, reference, rtol=1e-4, atol=1e-6):
            sys.exit(f"{name} disagrees with numpy: losses {values} vs {reference}")
    return reference


def bench_mlps(rounds):
    rows = []
    for sizes, n in MLPS:
        weights = initial_weights(sizes)
        x, y = batch(sizes, n)
        steps = {name: make(sizes, weights, x, y) for name, make in CONTENDERS.items()}
        compiled, compile_s, why = torch_compiled_or_why(sizes, weights, x, y)
        done = {}
        if compiled is not None:
            steps["torch_compiled"], done["torch_compiled"], why = compiled, [why], None
        losses = check_agreement(steps, done)
        first_s, eager_s = trace_cost(sizes, weights, x, y)
        repeat = max(1, int(2000 / (sizes[0] * sizes[1] / 64 + 10)))
        times = interleaved_medians(steps, rounds, repeat)
        rows.append({"model": "-".join(map(str, sizes)), "batch": n, "loss": losses[0],
                     **{f"{k}_us": v * 1e6 for k, v in times.items()},
                     "trace_us": first_s * 1e6, "eager_first_us": eager_s * 1e6,
                     "torch_compile_s": compile_s, "torch_compile_failed": why})
    return rows


PHASES = ("zero_grad", "forward+loss", "backward", "step")


def library_phases_fn(lib, sizes, weights, x, y):
    """The same step, returning the seconds each of its four phases took."""
    model, opt, loss_fn, xs, ys = library_setup(lib, sizes, weights, x, y)
    clock = time.perf_counter

    def step():
        t0 = clock()
        opt.zero_grad()
        t1 = clock()
        loss = loss_fn(model(xs), ys)
        t2 = clock()
        loss.backward()
        t3 = clock()
        opt.step()
        t4 = clock()
        loss.item()
        return (t1 - t0, t2 - t1, t3 - t2, t4 - t3)
    return step


def bench_phases(rounds):
    """Where a step's time goes, per library: median per phase over interleaved rounds.
    The hand-written numpy step has no such phases; its whole step is the yardstick."""
    libraries = {"minigrad": mg} if torch is None else {"minigrad": mg, "pytorch": torch}
    rows = []
    for sizes, n in MLPS:
        weights = initial_weights(sizes)
        x, y = batch(sizes, n)
        steps = {name: library_phases_fn(lib, sizes, weights, x, y)
                 for name, lib in libraries.items()}
        repeat = max(1, int(2000 / (sizes[0] * sizes[1] / 64 + 10)))
        samples = {name: [] for name in steps}
        for _ in range(rounds):
            for name, step in steps.items():
                totals = np.sum([step() for _ in range(repeat)], axis=0)
                samples[name].append(totals / repeat)
        for name, values in samples.items():
            medians = np.median(values, axis=0) * 1e6
            rows.append({"model": "-".join(map(str, sizes)), "library": name,
                         **{f"{phase}_us": float(t) for phase, t in zip(PHASES, medians)}})
    return rows


def bench_chain(rounds, length=200):
    """Per-op time of a scalar chain: length ops forward, then backward."""
    def chain(lib):
        x = lib.tensor(1.0, requires_grad=True)
        y = x
        for _ in range(length // 2):
            y = y * 1.0001
            y = y + 0.0001
        y.backward()
        return x.grad.item()

    libraries = {"minigrad": mg} if torch is None else {"minigrad": mg, "pytorch": torch}
    functions = {name: (lambda lib=lib: chain(lib)) for name, lib in libraries.items()}
    if torch is not None:
        assert abs(chain(mg) - chain(torch)) < 1e-5, "minigrad and PyTorch disagree"
    times = interleaved_medians(functions, rounds, 20)
    return {f"{k}_us_per_op": v / length * 1e6 for k, v in times.items()}


def bench_backward_scaling():
    """Backward time of a chain of n nodes: linear in n (time per node stays flat)."""
    rows = []
    for n in (1_000, 10_000, 100_000):
        x = mg.tensor(1.0, requires_grad=True)
        y = x
        for _ in range(n):
            y = y * 1.0
        start = time.perf_counter()
        y.backward()
        seconds = time.perf_counter() - start
        rows.append({"nodes": n, "backward_ms": seconds * 1e3, "us_per_node": seconds / n * 1e6})
    return rows


def bench_memory():
    sizes, n = MLPS[2]
    weights = initial_weights(sizes)
    x, y = batch(sizes, n)
    result = {}
    for name in ("minigrad", "numpy"):
        step = CONTENDERS[name](sizes, weights, x, y)
        step()
        tracemalloc.start()
        step()
        result[f"{name}_peak_kib"] = tracemalloc.get_traced_memory()[1] / 1024
        tracemalloc.stop()
    return result


# ------------------------------------------------------------------ report

def ratio(a, b):
    return f"{a / b:5.2f}" if b else "  n/a"


def report_phases(phases, mlps):
    numpy_us = {row["model"]: row["numpy_us"] for row in mlps}
    print("\nWhere one step's time goes (median per phase; numpy = the whole hand-written step):")
    print(f"{'model':>12} {'library':>9} " + " ".join(f"{p:>13}" for p in PHASES)
          + f" {'numpy':>9}")
    for row in phases:
        print(f"{row['model']:>12} {row['library']:>9} "
              + " ".join(f"{row[p + '_us']:>11.1f}us" for p in PHASES)
              + f" {numpy_us[row['model']]:>7.1f}us")


COMPILED_BOUNDS = {"2-16-2": 1.5, "64-128-10": 1.2, "784-256-10": 1.05}  # issue 29


def pays_off_after(row):
    """Steps after which compiling pays off: the trace's extra cost over an eager step,
    over what each replayed step saves (None: a replay saves nothing)."""
    saved = row["minigrad_us"] - row["compiled_us"]
    extra = max(row["trace_us"] - row["eager_first_us"], 0.0)
    return None if saved <= 0 else int(np.ceil(extra / saved)) + 1


def report_compiled(mlps):
    print("\nCompiled steps: minigrad.compile (trace once, replay) and torch.compile, "
          "against the same eager and hand-written steps:")
    print(f"{'model':>12} {'eager mg':>10} {'compiled':>10} {'torch.c':>10} {'numpy':>10}"
          f" {'cmp/numpy':>9} {'bound':>6} {'cmp/torch':>9} {'cmp/t.c':>8} {'trace':>9}"
          f" {'pays off':>9}")
    for row in mlps:
        tc = row.get("torch_compiled_us")
        after = pays_off_after(row)
        cmp_np = row["compiled_us"] / row["numpy_us"]
        bound = COMPILED_BOUNDS.get(row["model"])
        verdict = "" if bound is None else ("ok" if cmp_np <= bound else "OVER")
        print(f"{row['model']:>12} {row['minigrad_us']:>8.1f}us {row['compiled_us']:>8.1f}us "
              + (f"{tc:>8.1f}us " if tc else f"{'n/a':>10} ")
              + f"{row['numpy_us']:>8.1f}us {cmp_np:>9.2f} {bound or 0:>4.2f}{verdict:>2} "
              f"{ratio(row['compiled_us'], row.get('pytorch_us', 0)):>9} "
              f"{ratio(row['compiled_us'], tc or 0):>8} {row['trace_us'] / 1e3:>7.2f}ms "
              f"{str(after) + ' steps' if after else 'never':>9}")
    for row in mlps:
        if row.get("torch_compile_failed"):
            print(f"  torch.compile on {row['model']}: {row['torch_compile_failed']}")
        elif row.get("torch_compile_s"):
            print(f"  torch.compile on {row['model']}: compiled in "
                  f"{row['torch_compile_s']:.1f} s (its first call)")


def report(mlps, chain, scaling, memory):
    print("One training step (median of interleaved rounds, single-threaded):")
    print(f"{'model':>12} {'batch':>5} {'minigrad':>10} {'pytorch':>10} {'numpy':>10}"
          f" {'mg/torch':>9} {'mg/numpy':>9}")
    for row in mlps:
        torch_us = row.get("pytorch_us", 0)
        print(f"{row['model']:>12} {row['batch']:>5} {row['minigrad_us']:>8.1f}us "
              f"{torch_us:>8.1f}us {row['numpy_us']:>8.1f}us "
              f"{ratio(row['minigrad_us'], torch_us):>9} {ratio(row['minigrad_us'], row['numpy_us']):>9}")
    report_compiled(mlps)
    mg_op, torch_op = chain["minigrad_us_per_op"], chain.get("pytorch_us_per_op", 0)
    print(f"\nScalar chain, forward+backward per op: minigrad {mg_op:.2f}us, "
          f"pytorch {torch_op:.2f}us, ratio {ratio(mg_op, torch_op).strip()}")
    print("\nBackward time vs graph size:")
    for row in scaling:
        print(f"{row['nodes']:>8} nodes {row['backward_ms']:>9.2f}ms {row['us_per_node']:>6.2f}us/node")
    print(f"\nPeak memory of one 784-256-10 step: minigrad {memory['minigrad_peak_kib']:.0f} KiB, "
          f"numpy {memory['numpy_peak_kib']:.0f} KiB")


def chart(mlps, chain, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [f"{r['model']}\n(batch {r['batch']})" for r in mlps] + ["scalar op\n(fwd+bwd)"]
    series = {"numpy by hand": [r["numpy_us"] for r in mlps] + [np.nan],
              "minigrad": [r["minigrad_us"] for r in mlps] + [chain["minigrad_us_per_op"]],
              "PyTorch CPU": [r.get("pytorch_us", np.nan) for r in mlps]
              + [chain.get("pytorch_us_per_op", np.nan)]}
    colours = {"numpy by hand": "#999999", "minigrad": "#0072B2", "PyTorch CPU": "#E69F00"}
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    width = 0.27
    for i, (name, values) in enumerate(series.items()):
        xs = np.arange(len(labels)) + (i - 1) * width
        ax.bar(xs, values, width, label=name, color=colours[name])
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(labels)), labels)
    ax.set_ylabel("microseconds (log scale)")
    ax.set_title("One training step, and one op: lower is faster")
    ax.legend(frameon=False)
    fig.tight_layout()
    path.parent.mkdir(exist_ok=True)
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--no-chart", action="store_true")
    args = parser.parse_args()
    mlps = bench_mlps(args.rounds)
    chain = bench_chain(args.rounds)
    scaling = bench_backward_scaling()
    memory = bench_memory()
    phases = bench_phases(args.rounds)
    report(mlps, chain, scaling, memory)
    report_phases(phases, mlps)
    out = ROOT / "benchmarks" / "results"
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps(
        {"mlps": mlps, "chain": chain, "scaling": scaling, "memory": memory,
         "phases": phases}, indent=2))
    if not args.no_chart:
        chart(mlps, chain, ROOT / "figures" / "benchmark.svg")


if __name__ == "__main__":
    main()
