"""The long soak of the exactly-once checker: `python -m bench.soak_exactly_once
--seconds 600 --seed S`. Workers on a fresh schema of the test PostgreSQL, random
operations and kills for `--seconds`, then the checker (tests/faults). Prints the
numbers and, on a violation, the seed and the shortened history; exits 1 then. The
whole history goes to `--out` (JSON lines) for a closer look."""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

from tests.faults.soak import Outcome, soak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak_exactly_once")
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument(
        "--kill-every", type=float, nargs=2, default=(6.0, 12.0), metavar=("MIN", "MAX")
    )
    parser.add_argument(
        "--weight",
        action="append",
        default=[],
        metavar="OP=N",
        help="how often the driver picks OP (see tests/faults/driver.py WEIGHTS); repeatable",
    )
    parser.add_argument("--out", type=Path, default=None, help="history file (JSON lines)")
    parser.add_argument(
        "--recheck", type=Path, default=None, help="check a saved --out again; run nothing"
    )
    args = parser.parse_args(argv)
    if args.recheck is not None:
        return _verdict(Outcome.load(args.recheck, args.seed))
    with tempfile.TemporaryDirectory(prefix="yuxi-soak-") as folder:
        outcome = asyncio.run(
            soak(
                args.seed,
                args.seconds,
                Path(folder),
                workers=args.workers,
                clients=args.clients,
                kill_every=tuple(args.kill_every),
                weights={k: int(v) for k, v in (w.split("=", 1) for w in args.weight)},
            )
        )
    if args.out is not None:
        outcome.save(args.out)
        print(f"history: {args.out} (model calls and the database snapshot beside it)")
    return _verdict(outcome)


def _verdict(outcome: Outcome) -> int:
    print(outcome.summary())
    if outcome.violations:
        print(outcome.report())
        return 1
    print("no violations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
