"""The rules a history, the model's call log and the final database must satisfy.

Each rule is a function of `Facts` and the model calls returning the violations it
found, each naming the sessions, runs and points involved so the report can shorten
the history to them. The rules, in the words of the promise:

- `single_holder`: at most one execution of a run at any moment (no two model calls of
  one invocation overlap, whichever workers made them);
- `closed_stays_closed`: no model call of a run starts after a client saw it ended, after
  the ledger closed it, or after its session was deleted;
- `answer_resumed_once`: of the answers to one waiting point at most one is accepted;
  it is resumed at most once (exactly once when its run went on), no refused answer is
  resumed, and no accepted answer is left hanging with its run `waiting`;
- `deleted_stays_deleted`: after a delete, nothing of the deleted session (runs, waiting
  points, events) is listed again or left in the database;
- `no_half_turn`: a run recorded or reported `completed` has the agent's final answer;
- `final_status`: every request ends with a final status, or with a connection error
  while its worker was killed; no 5xx;
- `one_outcome`: an ended run's status told to a client is the one the ledger keeps;
- `idempotent_create`: concurrent retries of one create (one `Idempotency-Key`) all
  answer with the same session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .client_rules import (
    deleted_stays_deleted,
    final_status,
    idempotent_create,
    no_half_turn,
    one_outcome,
)
from .facts import Facts
from .history import History
from .model import ModelCall
from .run_rules import answer_resumed_once, closed_stays_closed, single_holder
from .snapshot import Snapshot
from .violation import Violation

__all__ = ["RULES", "Violation", "check", "report"]

Rule = Callable[[Facts, Sequence[ModelCall]], list[Violation]]
RULES: dict[str, Rule] = {
    "single_holder": single_holder,
    "closed_stays_closed": closed_stays_closed,
    "answer_resumed_once": answer_resumed_once,
    "deleted_stays_deleted": deleted_stays_deleted,
    "no_half_turn": no_half_turn,
    "final_status": final_status,
    "one_outcome": one_outcome,
    "idempotent_create": idempotent_create,
}


def check(history: History, calls: Sequence[ModelCall], snapshot: Snapshot) -> list[Violation]:
    facts = Facts(history, snapshot)
    return [v for rule in RULES.values() for v in rule(facts, calls)]


def report(seed: int, violations: Sequence[Violation], history: History) -> str:
    """The seed, each broken rule, and for the first violation of each rule the history
    shortened to the sessions, runs and points it involves (and the faults)."""
    rules = sorted({v.rule for v in violations})
    lines = [f"seed {seed}: {len(violations)} violation(s) of {', '.join(rules)}"]
    for rule in rules:
        mine = [v for v in violations if v.rule == rule]
        first = mine[0]
        runs, points = set(first.runs), set(first.points)
        short = history.about(sessions=set(first.sessions), runs=runs, points=points)
        short = short.window(runs=runs, points=points, until=first.until)
        lines.append(f"\n[{rule}] {first.message}")
        lines += [f"  also: {v.message}" for v in mine[1:4]]
        if len(mine) > 4:
            lines.append(f"  ... and {len(mine) - 4} more")
        lines.append(short.render(limit=80))
    return "\n".join(lines)
