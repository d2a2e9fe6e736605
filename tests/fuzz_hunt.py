"""The hunt: many fresh random programs against PyTorch, outside ``make test``.

Runs every hypothesis test of ``test_fuzz_parity.py`` with fresh seeds, never stopping at a difference: each one is recorded by its signature (op,
kind of difference) with the first program that showed it, and the run goes on. Prints,
at the end, how many programs ran and each signature with its count and first program.

    cd tests && nice -n 19 python fuzz_hunt.py --programs 100000 --seeds 0:1000 [--only NAME]

Seeds are a range: each (test, seed) pair runs ``--programs / (tests * seeds)`` programs with
``hypothesis.seed(seed)`` (no shrinking: the first failing program is kept as drawn). After
each seed a ``counts:`` line gives the count of every signature so far, so a run that is
stopped, or dies (PyTorch's native crashes kill the process), loses nothing.
"""

import argparse
import collections
import importlib
import inspect
import sys
import time

import torch
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import fuzz_interpreter

MODULES = ("test_fuzz_parity",)


def hypothesis_tests(only=None, special=True):
    """(name, inner function, its strategies) of every hypothesis test of MODULES."""
    found = []
    for module_name in MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name, fn in vars(module).items():
            inner = getattr(getattr(fn, "hypothesis", None), "inner_test", None)
            if not name.startswith("test_") or inner is None or (only and only not in name):
                continue
            params = inspect.signature(inner).parameters
            flag = st.booleans() if special else st.just(False)
            strategies = {p: st.data() if p == "data" else flag for p in params}
            found.append((f"{module_name}.{name}", inner, strategies))
    return found


def run(name, inner, strategies, seed_value, examples, found, counts):
    def once(**kwargs):
        counts["programs"] += 1
        try:
            inner(**kwargs)
        except fuzz_interpreter.Discrepancy as error:
            key = (name,) + tuple(map(str, error.signature))
            if key not in found:
                found[key] = str(error)
                print(f"\n== new: {key}\n{error}", flush=True)
            counts[key] += 1
        except Exception as error:  # noqa: BLE001  (a crash of the interpreter: record it)
            key = (name, "crash", type(error).__name__, str(error)[:80])
            found.setdefault(key, repr(error))
            counts[key] += 1

    test = settings(max_examples=examples, deadline=None, database=None,
                    phases=[Phase.generate], derandomize=False,
                    suppress_health_check=list(HealthCheck))(given(**strategies)(once))
    seed(seed_value)(test)()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--programs", type=int, default=100_000)
    parser.add_argument("--seeds", default="0:100")
    parser.add_argument("--only", default=None)
    parser.add_argument("--no-special", action="store_true", help="no inf, nan or -0 values")
    args = parser.parse_args()
    torch.set_num_threads(1)
    first, last = map(int, args.seeds.split(":"))
    tests = hypothesis_tests(args.only, not args.no_special)
    per_run = max(1, args.programs // (len(tests) * (last - first)))
    found, counts = {}, collections.Counter()
    start = time.time()
    for seed_value in range(first, last):
        for name, inner, strategies in tests:
            run(name, inner, strategies, seed_value, per_run, found, counts)
        print(f"seed {seed_value}: {counts['programs']} programs, {len(found)} signatures, "
              f"{time.time() - start:.0f} s", flush=True)
        # the counts so far, so that a run stopped (or killed by a crash) loses nothing
        print(f"counts: {[(counts[key], key) for key in found]}", flush=True)
    print(f"\n{counts['programs']} programs, {len(found)} kinds of difference")
    for key, text in found.items():
        print(f"\n== {counts[key]} x {key}\n{text}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
