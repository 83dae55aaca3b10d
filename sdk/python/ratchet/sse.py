"""The event-stream parser of :meth:`ratchet.Client.stream`."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["MAX_EVENT_BYTES", "EventStreamParser", "ServerEvent"]

#: Bounds one line and one event's data of a stream.
MAX_EVENT_BYTES = 16 << 20


class ServerEvent(NamedTuple):
    """One server-sent event: its name (``"message"`` when none was given)
    and its data text."""

    event: str
    data: str


class EventStreamParser:
    """Reads ``text/event-stream`` as the HTML standard's parser does, one
    chunk of bytes at a time: lines end with ``\\n``, ``\\r\\n`` or ``\\r``
    (a chunk may end between ``\\r`` and ``\\n``); a line starting with
    ``:`` is a comment; ``name:value`` loses one space after the colon; a
    line without a colon is a field with an empty value; ``data`` lines of
    one event join with ``\\n``; a blank line dispatches the event if it has
    data (an ``event`` line alone dispatches nothing); other fields (id,
    retry) are ignored. Lines are UTF-8, an invalid sequence read as U+FFFD.
    What :meth:`push` returns does not depend on how the bytes are split. A
    line or data over :data:`MAX_EVENT_BYTES` raises ValueError."""

    def __init__(self) -> None:
        self._line = bytearray()
        self._skip_lf = False
        self._event = ""
        self._data: list[str] = []
        self._data_len = 0

    def push(self, chunk: bytes) -> list[ServerEvent]:
        """Feeds the next bytes; returns the events they completed."""
        out: list[ServerEvent] = []
        i, n = 0, len(chunk)
        while i < n:
            if self._skip_lf:
                self._skip_lf = False
                if chunk[i] == 0x0A:
                    i += 1
                    continue
            cr, lf = chunk.find(b"\r", i), chunk.find(b"\n", i)
            j = min(cr if cr >= 0 else n, lf if lf >= 0 else n)
            if len(self._line) + (j - i) > MAX_EVENT_BYTES:
                raise ValueError(f"event stream: a line longer than {MAX_EVENT_BYTES} bytes")
            self._line += chunk[i:j]
            if j == n:
                break
            self._skip_lf = chunk[j] == 0x0D
            i = j + 1
            line = self._line.decode("utf-8", errors="replace")
            self._line.clear()
            self._end_line(line, out)
        return out

    def _end_line(self, line: str, out: list[ServerEvent]) -> None:
        if line == "":
            if self._data:
                out.append(ServerEvent(self._event or "message", "\n".join(self._data)))
            self._event, self._data, self._data_len = "", [], 0
            return
        if line[0] == ":":
            return
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data_len += len(value) + 1
            if self._data_len > MAX_EVENT_BYTES:
                raise ValueError(f"event stream: an event's data longer than {MAX_EVENT_BYTES} bytes")
            self._data.append(value)
