"""Fault injection for the fake GitHub: errors, rate limits and slow answers on demand."""

from __future__ import annotations

import contextlib
import re
import threading
from dataclasses import dataclass, field
from typing import Any

SECONDARY_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
)

DEFAULT_MESSAGES = {
    400: "Bad Request",
    401: "Bad credentials",
    403: SECONDARY_LIMIT_MESSAGE,
    404: "Not Found",
    422: "Validation Failed",
    429: SECONDARY_LIMIT_MESSAGE,
    500: "Server Error",
    502: "Server Error",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


@dataclass
class Fault:
    """One injected misbehaviour, matched on method and a regex searched in the API path.

    `status` None means "answer normally" (only `delay` or `barrier` apply). `times` None
    means forever. `after_apply` True lets the request change the state before the fault
    replaces its answer: a write that landed although the client saw an error. `barrier` holds
    each matching request's answer until as many have arrived as the barrier has parties (or
    its timeout passes), so that concurrent clients all read before any of them can write: the
    worst interleaving of a race, on demand.
    """

    method: str
    pattern: re.Pattern[str]
    status: int | None
    times: int | None = 1
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    delay: float = 0.0
    after_apply: bool = False
    hits: int = 0
    barrier: threading.Barrier | None = None
    barrier_timeout: float = 10.0

    def hold(self) -> None:
        """Wait at the barrier; a missing party only delays, it never fails the request."""
        if self.barrier is None:
            return
        with contextlib.suppress(threading.BrokenBarrierError):
            self.barrier.wait(self.barrier_timeout)

    def payload(self) -> Any:
        if self.body is not None:
            return self.body
        return {"message": DEFAULT_MESSAGES.get(self.status or 500, "Error")}


class Faults:
    """The active faults; the first active match wins, and each match uses up one `times`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def take(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.method not in ("*", method) or not fault.pattern.search(path):
                    continue
                if fault.times is not None and fault.hits >= fault.times:
                    continue
                fault.hits += 1
                return fault
        return None
