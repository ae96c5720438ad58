"""``cmd:COMMAND`` engines: any program speaking tokspec's JSON Lines protocol on stdin/stdout.

The protocol is specified in ``docs/protocol.md``; in short, the program first writes a handshake
line ``{"tokspec": 1, "name": ..., "version": ..., "kind": "tokenizer"}``, then answers each request
line ``{"id": n, "text": "..."}`` with ``{"id": n, "ids": [...], "offsets": [[s, e], ...]}`` or
``{"id": n, "error": "..."}``, and exits when its stdin is closed.

COMMAND is split with :func:`shlex.split` and run directly (never through a shell); the text only
ever travels inside JSON on stdin. The program is started once, at load time, and reused.
Options go in brackets before the command: ``cmd:[timeout=5,startup=60] python3 engine.py``.

- ``timeout``: seconds per request (default: env ``TOKSPEC_CMD_TIMEOUT``, else 10);
- ``startup``: seconds to wait for the handshake (default: env ``TOKSPEC_CMD_STARTUP``, else 60).

Each must be a finite number > 0 (else :class:`~tokspec.errors.UnknownEngineError`, one line).

A crash (EOF or exit), a hang (no complete reply within ``timeout``), or a malformed reply raises
:class:`CmdEngineFault` (an :class:`~tokspec.errors.EngineFault`) naming the input that caused it and
the tail of the program's stderr; the process is killed (its whole process group) and restarted on
the next call, so a caller such as ``tokspec diff`` records the fault and continues. An ``"error"``
reply is also an EngineFault, but the program stays up. A reply line longer than
:func:`tokspec.engines._cmd_process._line_limit` bytes (a stdout flood) is a fault of its own ("flooded its stdout"); reading a
reply is linear in its length (the buffer is never rescanned).

The program runs under :func:`tokspec._procs.spawn`: in its own process group, which dies with
tokspec on any exit (a SIGKILL of tokspec included) and when the engine is closed or restarted.
Everything the program sends that ends up in a message (stderr tail, error replies) is escaped
with :func:`tokspec._escape.escape` (no raw control characters, bidi overrides, lone surrogates).

Out of scope: concurrency (one request in flight; an engine object is not thread-safe) and
Windows (process groups and ``select`` on pipes are POSIX).
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import shutil
import subprocess
import time
from typing import Any, NoReturn

from tokspec._escape import escape
from tokspec._types import Encoder, Encoding, EngineInfo
from tokspec.engines._cmd_process import _Flood, _line_limit, _Process
from tokspec.errors import EngineFault, UnknownEngineError

__all__ = ["CmdEngine", "CmdEngineFault", "load", "engines", "PROTOCOL_VERSION", "PROTOCOL_VERSIONS"]

PROTOCOL_VERSION = 1
#: Versions a handshake may name: 2 adds decode requests and the special-token table (docs/protocol.md).
PROTOCOL_VERSIONS = (1, 2)
_OPTIONS = re.compile(r"^\[([^\]]*)\]\s*")


class CmdEngineFault(EngineFault):
    """A ``cmd:`` engine crashed, hung, sent a malformed reply or an error for ``text``."""

    def __init__(self, message: str, *, text: str | None = None):
        super().__init__(message)
        self.text = text


def _seconds(value: str, what: str) -> float:
    """``value`` as a finite number of seconds > 0, else UnknownEngineError naming ``what``."""
    try:
        seconds = float(value)
    except ValueError:
        raise UnknownEngineError(f"{what}={value!r} is not a number (seconds)") from None
    if not (math.isfinite(seconds) and seconds > 0):
        raise UnknownEngineError(f"{what}={value!r} must be a finite number of seconds > 0")
    return seconds


def _parse_options(arg: str) -> tuple[dict[str, float], str]:
    """Split ``[k=v,...] command`` into (options, command); defaults come from the environment."""
    options = {key: _seconds(os.environ.get(env, default), env) for key, env, default in
               (("timeout", "TOKSPEC_CMD_TIMEOUT", "10"), ("startup", "TOKSPEC_CMD_STARTUP", "60"))}
    m = _OPTIONS.match(arg)
    if m is None:
        return options, arg
    for item in filter(None, (s.strip() for s in m.group(1).split(","))):
        key, _, value = item.partition("=")
        if key not in options:
            raise UnknownEngineError(f"cmd engine option {key!r} unknown in name {escape('cmd:' + arg)!r}; "
                                     "options: timeout, startup (seconds)")
        options[key] = _seconds(value, f"cmd engine option {key}")
    return options, arg[m.end():]


class CmdEngine(Encoder):
    """An engine run as a subprocess speaking the protocol of ``docs/protocol.md``.

    Each ``encode`` costs one request/response round trip: O(len(text)) plus the program's time.
    One program serves one request at a time (``thread_safe`` is False: ``lopt`` encodes its
    pieces one after another). A handshake ``structure`` becomes ``merge_structure``.
    """

    thread_safe = False
    merge_structure: dict[str, Any] | None = None

    def __init__(self, arg: str):
        self.options, command = _parse_options(arg)
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise UnknownEngineError(f"cmd engine name 'cmd:{arg}': cannot split command ({exc})") from None
        if not self.argv:
            raise UnknownEngineError(f"cmd engine name 'cmd:{arg}' has no command; try 'cmd:python3 x.py'")
        self.name = f"cmd:{arg}"
        # in fault messages (cut to a few hundred characters downstream): the engine's own words
        # must survive a long command line
        self.shown_name = self.name if len(self.name) <= 90 else f"{self.name[:55]}...{self.name[-30:]}"
        self._proc: _Process | None = None
        self._next_id = 0
        self.restarts = 0
        handshake = self._start()
        self.info = self._info_from(handshake)
        structure = handshake.get("structure")
        self.merge_structure = structure if isinstance(structure, dict) else None
        from tokspec.engines._cmd_v2 import declare_v2
        declare_v2(self, handshake)

    # -- process management -------------------------------------------------------------

    def _start(self) -> dict[str, Any]:
        """Start the program and read its handshake line (raises UnknownEngineError/EngineFault)."""
        if shutil.which(self.argv[0]) is None:
            raise UnknownEngineError(f"cmd engine {self.name!r}: cannot start {self.argv[0]!r}: "
                                     "no such executable file (on PATH or at that path)")
        try:
            self._proc = _Process(self.argv)
        except OSError as exc:
            raise UnknownEngineError(f"cmd engine {self.name!r}: cannot start {self.argv[0]!r}: "
                                     f"{exc.strerror or exc}") from None
        try:
            line = self._proc.exchange(b"", time.monotonic() + self.options["startup"], 1 << 20)
        except TimeoutError:
            line = None
            problem = f"sent no handshake line within {self.options['startup']:g}s"
        except _Flood:
            line = None
            problem = "flooded its stdout (over 1 MiB before a handshake line ended)"
        else:
            problem = "exited before its handshake line"
        if line is None:
            self._fail(problem, None)
        handshake = self._parse(line, None)
        if handshake.get("tokspec") not in PROTOCOL_VERSIONS or isinstance(handshake.get("tokspec"), bool):
            self._fail(f"handshake {line[:200]!r} lacks \"tokspec\": 1 or 2 "
                       "(see docs/protocol.md)", None)
        return handshake

    def _info_from(self, handshake: dict[str, Any]) -> EngineInfo:
        kind = handshake.get("kind", "tokenizer")
        if kind not in ("tokenizer", "pretokenizer"):
            self._fail(f"handshake kind={kind!r}; expected 'tokenizer' or 'pretokenizer'", None)
        sha = handshake.get("vocab_sha256")
        return EngineInfo(name=self.name, kind=kind, library=str(handshake.get("name", self.argv[0])),
                          library_version=str(handshake.get("version", "unknown")),
                          vocab_sha256=None if sha is None else str(sha),
                          description=f"subprocess {shlex.join(self.argv)}", thread_safe=False)

    def _fail(self, problem: str, text: str | None) -> NoReturn:
        """Kill the program (restarted on the next call) and raise CmdEngineFault."""
        tail = self._proc.stderr_tail() if self._proc is not None else ""
        if self._proc is not None:
            self._proc.kill(grace=0.0)  # a faulty program gets no second chance
            self._proc = None
        where = "" if text is None else f" on text={text!r:.120}"
        detail = f"; stderr: {tail}" if tail else ""
        raise CmdEngineFault(f"cmd engine {self.shown_name!r} {problem}{where}{detail}", text=text)

    def close(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    # -- requests -----------------------------------------------------------------------

    def _parse(self, line: bytes, text: str | None) -> dict[str, Any]:
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            obj = None
        if not isinstance(obj, dict):
            self._fail(f"sent a line that is not a JSON object: {line[:200]!r}", text)
        return obj

    def _request(self, text: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        """One round trip: ``{"id": n, "text": text}`` (or ``payload`` instead of the text field)."""
        if self._proc is None:
            self.restarts += 1
            try:
                self._start()
            except (CmdEngineFault, UnknownEngineError) as exc:
                raise CmdEngineFault(f"{exc} (while restarting it for text={text!r:.120})", text=text) from None
        assert self._proc is not None
        self._next_id += 1
        body = {"text": text} if payload is None else payload
        request = (json.dumps({"id": self._next_id, **body}, ensure_ascii=True) + "\n").encode("ascii")
        limit = _line_limit(request)
        try:
            line = self._proc.exchange(request, time.monotonic() + self.options["timeout"], limit)
        except TimeoutError:
            self._fail(f"hung (no reply within {self.options['timeout']:g}s)", text)
        except _Flood:
            self._fail(f"flooded its stdout (over {limit} bytes without a complete reply line)", text)
        except OSError as exc:
            self._fail(f"crashed (pipe error: {exc.strerror or exc})", text)
        if line is None:
            try:
                code = self._proc.proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                code = None
            self._fail(f"crashed (closed its stdout; exit status {code})", text)
        reply = self._parse(line, text)
        if reply.get("id") != self._next_id:
            self._fail(f"replied with id={reply.get('id')!r} to request id={self._next_id}", text)
        return reply

    def _encode(self, text: str) -> Encoding:
        return self._reply_encoding(self._request(text), text)

    def _reply_encoding(self, reply: dict[str, Any], text: str, mode: str = "") -> Encoding:
        """The Encoding of an encode reply (``mode``: a request kind named in messages, e.g.
        " in special mode"); an error reply or a malformed one is a CmdEngineFault."""
        if "error" in reply:
            raise CmdEngineFault(f"cmd engine {self.shown_name!r} reported error {reply['error']!r:.300}{mode} "
                                 f"on text={text!r:.120}", text=text)
        encoding = _encoding_of(reply)
        if encoding is None:
            self._fail(f"sent a malformed{mode} reply {_short(reply)} (see docs/protocol.md)", text)
        return encoding


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _encoding_of(reply: dict[str, Any]) -> Encoding | None:
    """The Encoding in a well-formed reply, or None if ids/offsets/pieces are malformed."""
    ids, offsets, pieces = reply.get("ids"), reply.get("offsets"), reply.get("pieces")
    if ids is not None and not (isinstance(ids, list) and all(_is_int(i) for i in ids)):
        return None
    if not isinstance(offsets, list) or not all(
            isinstance(o, list) and len(o) == 2 and all(_is_int(x) for x in o) for o in offsets):
        return None
    if pieces is not None and not (isinstance(pieces, list) and len(pieces) == len(offsets)
                                   and all(isinstance(p, str) for p in pieces)):
        return None
    return Encoding.of(ids, [(s, e) for s, e in offsets], pieces)


def _short(obj: object, limit: int = 200) -> str:
    """A short JSON rendering of a decoded reply, for messages."""
    text = json.dumps(obj, ensure_ascii=True)
    return text if len(text) <= limit else text[:limit] + "..."


def load(prefix: str, arg: str) -> Encoder:
    """Provider hook: ``cmd:COMMAND`` (see module docstring)."""
    if prefix != "cmd":
        raise UnknownEngineError(f"tokspec.engines.cmd provides prefix 'cmd', not prefix={prefix!r}")
    return CmdEngine(arg)


def engines() -> list[tuple[str, str]]:
    """Provider hook: the name pattern (cmd engines are whatever programs the user has)."""
    return [("cmd:COMMAND", "a program speaking tokspec's JSON Lines protocol (docs/protocol.md)")]
