"""Randomised comparison: seeded random configs and valid SRv6 packets through the kernel
and sr6 (krandom.py).  Seed: $SR6K_SEED (default below), printed in the pytest header and
in every failure.  Sizes: $SR6K_RANDOM_BATCHES x $SR6K_RANDOM_PACKETS.  Replay one packet:
SR6K_SEED=S SR6K_ONLY=B:I python3 -m pytest tests/kernel -k random -q."""
import os

import pytest

import krandom
from kharness import IDENTICAL, scenario

DEFAULT_SEED = 20240601
SEED = int(os.environ.get("SR6K_SEED", DEFAULT_SEED))
BATCHES = int(os.environ.get("SR6K_RANDOM_BATCHES", "6"))
PACKETS = int(os.environ.get("SR6K_RANDOM_PACKETS", "60"))
ONLY = os.environ.get("SR6K_ONLY")  # "B:I"


def _selected():
    if ONLY:
        b, _ = ONLY.split(":")
        return [int(b)]
    return list(range(BATCHES))


@scenario(IDENTICAL)
@pytest.mark.parametrize("b", _selected())
def test_random(kernel, b):
    """Randomised: configs with random SIDs/policies, valid SRv6 packets (SIDs, TLVs, hop limits, payloads)"""
    bt = krandom.batch(SEED, b, PACKETS)
    cases = list(enumerate(bt.cases))
    if ONLY:
        cases = [cases[int(ONLY.split(":")[1])]]
    frames = [c.frame for _, c in cases]
    labels = [f"SR6K_SEED={SEED} SR6K_ONLY={b}:{i} {c.label}" for i, c in cases]
    print(f"sr6k random: seed {SEED}, batch {b}, {len(frames)} packets")
    r = kernel.run(bt.config, frames, labels=labels)
    errors = []
    for j, (i, c) in enumerate(cases):
        try:
            if c.difference is None:
                msg = r.compare(j)
                if msg:
                    raise AssertionError(msg)
            else:
                kexp, sexp = c.difference
                r._expect("kernel", r.kernel[j], j, kexp)
                r._expect("sr6", r.sr6[j], j, sexp)
        except AssertionError as e:
            errors.append(str(e).split("\n--- config")[0])
    r.asserted.append("identical")
    outcomes = {}
    for j in range(len(cases)):
        key = ",".join(sorted(d for d in r.devs if r.sr6[j].get(d))) or ("local" if r.sr6_local(j) else "dropped")
        outcomes[key] = outcomes.get(key, 0) + 1
    ndiff = sum(1 for _, c in cases if c.difference)
    print(f"sr6k random: batch {b}: outputs {outcomes}; {ndiff} documented-difference cases")
    if errors:
        heads = "\n".join(e.splitlines()[0] for e in errors)
        raise AssertionError(f"seed {SEED} batch {b}: {len(errors)}/{len(cases)} packets differ:\n{heads}\n\n"
                             f"first:\n{errors[0]}\n--- config\n{bt.config}")
