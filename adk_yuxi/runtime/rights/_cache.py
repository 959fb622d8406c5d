"""The per-principal cache of assembled runtimes (a `TreeRuntime`: one `Runtime` per
agent of the tree the principal reaches).

A runtime is a pure function of the principal value (and the app's config), so equal
principals share one; a changed principal is a different key, never a stale hit. The
cache is a bounded LRU. A runtime evicted while runs still use it is closed when the
last of them lets go (`release`), so its MCP sessions never close under a run.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable

from ...access import Principal
from ._tree_runtime import TreeRuntime

__all__ = ["RuntimeCache"]


class _Entry:
    __slots__ = ("cached", "runtime", "users")

    def __init__(self, runtime: TreeRuntime) -> None:
        self.runtime = runtime
        self.users = 0
        self.cached = True


class RuntimeCache:
    def __init__(self, assemble: Callable[[Principal], TreeRuntime], *, size: int = 256) -> None:
        if size < 1:
            raise ValueError("cache_size must be at least 1")
        self._assemble = assemble
        self._size = size
        self._entries: OrderedDict[Principal, _Entry] = OrderedDict()
        self._last: tuple[Principal, _Entry] | None = None
        self._by_runtime: dict[int, _Entry] = {}
        self.assembled = 0
        """How many runtimes were assembled so far (cache misses), for tests and stats."""

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, principal: Principal) -> TreeRuntime:
        """The runtime of `principal`, assembled on a miss. Raises what assembly raises
        (`DuplicateToolError` for a config whose tools clash)."""
        return self._entry(principal).runtime

    def acquire(self, principal: Principal) -> TreeRuntime:
        """Like `get`, and counts a run as using it until `release`."""
        entry = self._entry(principal)
        entry.users += 1
        return entry.runtime

    async def release(self, runtime: TreeRuntime) -> None:
        entry = self._by_runtime.get(id(runtime))
        if entry is None or entry.runtime is not runtime:
            return
        entry.users -= 1
        if not entry.cached and not entry.users:
            del self._by_runtime[id(runtime)]
            await runtime.close()

    def release_later(self, runtime: TreeRuntime) -> asyncio.Task[None] | None:
        """`release` from synchronous code (a finalizer); needs a running loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        return loop.create_task(self.release(runtime))

    async def evict(self) -> None:
        """Drops least recently used runtimes beyond the bound, closing idle ones."""
        if len(self._entries) <= self._size:
            return
        idle: list[TreeRuntime] = []
        while len(self._entries) > self._size:
            _, entry = self._entries.popitem(last=False)
            entry.cached = False
            if self._last is not None and self._last[1] is entry:
                self._last = None
            if not entry.users:
                self._by_runtime.pop(id(entry.runtime), None)
                idle.append(entry.runtime)
        await asyncio.gather(*(r.close() for r in idle))

    async def close(self) -> None:
        """Closes the connections of every runtime no run is using; the cache is kept
        (MCP toolsets reconnect on use), so a runner closing does not cost the next run
        its assembly."""
        await asyncio.gather(*(e.runtime.close() for e in self._entries.values() if not e.users))

    def _entry(self, principal: Principal) -> _Entry:
        last = self._last
        if last is not None and last[0] is principal:
            return last[1]
        entry = self._entries.get(principal)
        if entry is None:
            entry = _Entry(self._assemble(principal))
            self.assembled += 1
            self._entries[principal] = entry
            self._by_runtime[id(entry.runtime)] = entry
        else:
            self._entries.move_to_end(principal)
        self._last = (principal, entry)
        return entry
