"""A scripted fake backend for unit tests of judges and scoring.

It answers from a script, in order, and raises when the script runs out, so a test
states exactly which verdicts it expects to be asked for.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence

from localjudge.engine.base import BackendStats, Verdict, VerdictRequest, choose_label

Answer = str | tuple[str, float] | Verdict
Rule = Callable[[VerdictRequest], Answer]


class ScriptExhaustedError(AssertionError):
    """The code under test asked for more verdicts than the script holds."""


class FakeBackend:
    """Answers requests from `script` (in order) or from `rule` (a function of the request).

    A script item is a label (probability 1.0), a (label, probability) pair, or a full
    Verdict (for errors). Every request is recorded in `asked`.
    """

    def __init__(self, script: Iterable[Answer] = (), rule: Rule | None = None) -> None:
        self._script: deque[Answer] = deque(script)
        self._rule = rule
        self.asked: list[VerdictRequest] = []
        self.stats = BackendStats()

    def judge(self, requests: Sequence[VerdictRequest]) -> list[Verdict]:
        out = []
        for request in requests:
            self.asked.append(request)
            if self._script:
                answer = self._script.popleft()
            elif self._rule is not None:
                answer = self._rule(request)
            else:
                raise ScriptExhaustedError(
                    f"fake backend: no scripted answer left for request {len(self.asked)}"
                )
            out.append(self._verdict(request, answer))
        self.stats.verdicts += len(requests)
        return out

    @property
    def remaining(self) -> int:
        return len(self._script)

    def describe(self) -> dict[str, object]:
        return {"backend": "fake"}

    @staticmethod
    def _verdict(request: VerdictRequest, answer: Answer) -> Verdict:
        if isinstance(answer, Verdict):
            return answer
        label, prob = (answer, 1.0) if isinstance(answer, str) else answer
        if label not in request.labels:
            raise AssertionError(f"scripted label {label!r} not in {request.labels}")
        others = [lab for lab in request.labels if lab != label]
        rest = (1.0 - prob) / len(others) if others else 0.0
        probs = {lab: (prob if lab == label else rest) for lab in request.labels}
        chosen = choose_label(probs, request.labels, request.threshold)
        return Verdict(
            label=chosen,
            probability=probs[chosen],
            probabilities=probs,
            rationale=f"scripted {chosen}" if request.rationale else None,
        )
