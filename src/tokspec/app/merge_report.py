"""Counterexample reports for merge strategies: one JSON record and one HTML page per failure.

A report holds everything needed to understand and replay a merge that differs from serial
encoding: the (minimized) input as text, repr and UTF-8 hex; the engine's EngineInfo and vocabulary
hash; the strategy and its parameters; every chunk's span, overlap with the next chunk and tokens
(id, global offsets, piece); the anchors the strategy chose; serial and merged tokens side by side
from the first divergence; a classification; and a one-line command that reproduces it.

Classification (first rule that applies): ``"same ids, different offsets"``; ``"tokens missing"``
(some character covered by a serial token is covered by no merged token); ``"tokens duplicated"``
(some character is covered by more merged tokens than serial ones); ``"tokens different"``.

An engine that raises while the merge or the serial encoding runs gives a *fault report*
(:func:`build_fault_report`, ``"kind": "merge-engine-fault"``, classification ``"engine fault"``):
the input, the engine, the parameters, the escaped fault message and the reproduce command.

Files are written atomically (:func:`tokspec._atomic.write_atomic`), JSON first, under a
content-hash name, so the same finding is stored once. JSON goes through
:func:`tokspec._escape.dumps` and the HTML escapes everything it shows (HTML-escaped, and unsafe
characters such as lone surrogates from engine pieces made visible with :func:`tokspec._escape.escape`).
Out of scope: diffing beyond the first divergence (full outputs are in the JSON).
"""

from __future__ import annotations

import hashlib
import html
import json
import shlex
from pathlib import Path
from typing import Any

from tokspec import Encoder, Encoding
from tokspec._atomic import write_atomic
from tokspec._escape import dumps, escape
from tokspec.fast._chunking import MergeResult

__all__ = ["REPORT_VERSION", "classify", "first_divergence", "build_report", "build_fault_report",
           "report_name", "write_report", "render_html", "reproduce_command"]

REPORT_VERSION = 1


def first_divergence(a: Encoding, b: Encoding) -> int | None:
    """Index of the first token where ids or offsets differ (None when equal). O(tokens)."""
    ta = list(zip(a.ids or [None] * len(a), a.offsets))
    tb = list(zip(b.ids or [None] * len(b), b.offsets))
    for k, (x, y) in enumerate(zip(ta, tb)):
        if x != y:
            return k
    return None if len(ta) == len(tb) else min(len(ta), len(tb))


def _coverage(enc: Encoding, n: int) -> list[int]:
    cov = [0] * n
    for s, e in enc.offsets:
        for i in range(s, e):
            cov[i] += 1
    return cov


def classify(serial: Encoding, merged: Encoding, n_chars: int) -> str:
    """One of the classes in the module docstring. O(n_chars + tokens)."""
    if serial.ids == merged.ids:
        return "same ids, different offsets"
    cs, cm = _coverage(serial, n_chars), _coverage(merged, n_chars)
    if any(s > 0 and m == 0 for s, m in zip(cs, cm)):
        return "tokens missing"
    if any(m > s for s, m in zip(cs, cm)):
        return "tokens duplicated"
    return "tokens different"


def _tokens(engine: Encoder, enc: Encoding, lo: int = 0, hi: int | None = None,
            delta: int = 0) -> list[list[Any]]:
    ids = enc.ids or [None] * len(enc)
    out = []
    for k in range(lo, len(enc) if hi is None else min(hi, len(enc))):
        s, e = enc.offsets[k]
        tid = ids[k]
        out.append([k, tid, s + delta, e + delta, "" if tid is None else engine.token_piece(tid)])
    return out


def reproduce_command(engine: Encoder, strategy: str, params: dict[str, Any], path: str) -> str:
    """``tokspec merge-check`` with this report as its inputs file and the same parameters."""
    args = ["tokspec", "merge-check", engine.info.name, "--strategy", strategy, "--inputs", path]
    if params.get("chunk_len") is not None:
        args += ["--chunk-len", str(params["chunk_len"])]
    if params.get("overlap") is not None:
        args += ["--overlap", str(params["overlap"])]
    return " ".join(shlex.quote(a) for a in args)


def report_name(engine: Encoder, strategy: str, params: dict[str, Any], text: str) -> str:
    """``<strategy>-<engine>-<hash16>``: stable per (engine, strategy, parameters, text)."""
    key = json.dumps([engine.info.name, strategy, params, text], ensure_ascii=False, sort_keys=True)
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]  # names may be hostile
    # cut by UTF-8 bytes, not characters: 60 four-byte letters would pass NAME_MAX (255 bytes)
    slug = "".join(c if c.isalnum() else "-" for c in engine.info.name).strip("-")
    slug = slug.encode("utf-8", "surrogatepass")[:60].decode("utf-8", "ignore")
    return f"{strategy}-{slug}-{digest}"


def _chunks(engine: Encoder, result: MergeResult) -> list[dict[str, Any]]:
    chunks = result.trace.chunks
    out = []
    for i, c in enumerate(chunks):
        nxt = chunks[i + 1].start if i + 1 < len(chunks) else None
        overlap = [nxt, c.end] if nxt is not None and nxt < c.end else None
        out.append({"index": i, "start": c.start, "end": c.end, "overlap_with_next": overlap,
                    "tokens": _tokens(engine, c.encoding, delta=c.start)})
    return out


def build_report(engine: Encoder, text: str, result: MergeResult, serial: Encoding, *,
                 params: dict[str, Any], reproduce_path: str, original_chars: int | None = None,
                 strategy: str | None = None) -> dict[str, Any]:
    """The JSON-able report (module docstring) of a merge that differs from ``serial``.

    ``strategy``: the name the user gave (``delimiter-comma``), which the id and the reproduce
    command must carry; default: the trace's (``delimiter`` for all the delimiter variants)."""
    merged = result.encoding
    k = first_divergence(serial, merged)
    assert k is not None, "build_report needs a merge that differs from serial"
    info = engine.info
    strategy = strategy or result.trace.strategy
    return {
        "version": REPORT_VERSION, "kind": "merge-counterexample",
        "id": report_name(engine, strategy, params, text),
        "engine": {"name": info.name, "library": info.library, "library_version": info.library_version,
                   "vocab_sha256": info.vocab_sha256, "description": info.description},
        "strategy": strategy, "params": params, "trace_params": result.trace.params,
        "text": text, "text_repr": repr(text), "text_hex": text.encode("utf-8").hex(),
        "chars": len(text), "original_chars": original_chars,
        "classification": classify(serial, merged, len(text)),
        "first_divergence": k,
        "side_by_side": {"serial": _tokens(engine, serial, k, k + 12),
                         "merged": _tokens(engine, merged, k, k + 12)},
        "chunks": _chunks(engine, result),
        "anchors": [vars(a) for a in result.trace.anchors],
        "notes": list(result.trace.notes),
        "serial": {"ids": list(serial.ids or []), "offsets": [list(o) for o in serial.offsets]},
        "merged": {"ids": list(merged.ids or []), "offsets": [list(o) for o in merged.offsets]},
        "reproduce": reproduce_command(engine, strategy, params, reproduce_path),
    }


def _engine_info(engine: Encoder) -> dict[str, Any]:
    info = engine.info
    return {"name": info.name, "library": info.library, "library_version": info.library_version,
            "vocab_sha256": info.vocab_sha256, "description": info.description}


def build_fault_report(engine: Encoder, text: str, *, strategy: str, params: dict[str, Any],
                       fault: str, reproduce_path: str, original_chars: int | None = None
                       ) -> dict[str, Any]:
    """The JSON-able report of an engine that raised on ``text`` (module docstring)."""
    return {
        "version": REPORT_VERSION, "kind": "merge-engine-fault",
        "id": report_name(engine, strategy, params, text),
        "engine": _engine_info(engine), "strategy": strategy, "params": params,
        "text": text, "text_repr": repr(text), "text_hex": text.encode("utf-8").hex(),
        "chars": len(text), "original_chars": original_chars,
        "classification": "engine fault", "fault": escape(fault),
        "reproduce": reproduce_command(engine, strategy, params, reproduce_path),
    }


def write_report(report: dict[str, Any], directory: str | Path) -> tuple[Path, Path]:
    """Write ``<id>.json`` then ``<id>.html`` into ``directory``, each atomically."""
    d = Path(directory)
    j = write_atomic(d / f"{report['id']}.json", dumps(report, indent=1) + "\n")
    h = write_atomic(d / f"{report['id']}.html", render_html(report))
    return j, h


_CSS = """body{font-family:sans-serif;margin:1em}.t{display:inline-block;border:1px solid #888;
margin:1px;padding:0 2px;font-family:monospace;white-space:pre}.bad{background:#fbb}.ov{background:#ffd}
.edge{display:inline-block;width:3px;background:#00f;height:1.2em;vertical-align:middle}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;font-family:monospace}"""


def _visible(s: str) -> str:
    return html.escape(escape(s.replace(" ", "\u00b7").replace("\n", "\u21b5").replace("\t", "\u2192")))


def _e(value: object) -> str:
    """HTML-escaped, unsafe characters made visible (module docstring)."""
    return html.escape(escape(value))


def _row(text: str, tokens: list[list[Any]], bad_from: int | None, overlap: list[int] | None) -> str:
    cells = []
    for k, tid, s, e, piece in tokens:
        cls = "t"
        if bad_from is not None and k >= bad_from:
            cls += " bad"
        elif overlap is not None and overlap[0] <= s < overlap[1]:
            cls += " ov"
        title = _e(f"#{k} id={tid} [{s},{e}) {piece}")
        cells.append(f'<span class="{cls}" title="{title}">{_visible(text[s:e]) or "&empty;"}</span>')
    return "".join(cells)


def render_html(report: dict[str, Any]) -> str:
    """A self-contained page: chunks with overlaps, serial and merged tokens, the divergence."""
    if report.get("kind") == "merge-engine-fault":
        return _render_fault_html(report)
    text = report["text"]
    k = report["first_divergence"]
    e = _e
    parts = [f"<!doctype html><meta charset=utf-8><title>{e(report['id'])}</title><style>{_CSS}</style>",
             f"<h1>{e(report['strategy'])} differs from serial: {e(report['classification'])}</h1>",
             f"<p>engine <b>{e(report['engine']['name'])}</b> (vocab sha256 "
             f"{e(str(report['engine']['vocab_sha256']))}); params {e(json.dumps(report['params']))}</p>",
             f"<p>input ({report['chars']} chars): <code>{e(report['text_repr'])}</code><br>"
             f"hex <code>{e(report['text_hex'])}</code></p>",
             f"<p>reproduce: <code>{e(report['reproduce'])}</code></p>", "<h2>Chunks</h2>"]
    for c in report["chunks"]:
        parts.append(f"<p>chunk {c['index']} [{c['start']}, {c['end']}) overlap with next "
                     f"{e(str(c['overlap_with_next']))}<br>{_row(text, c['tokens'], None, c['overlap_with_next'])}</p>")
    parts.append("<h2>Anchors</h2><table><tr><th>left</th><th>keep_left</th><th>keep_right</th>"
                 "<th>position</th><th>detail</th></tr>")
    for a in report["anchors"]:
        parts.append("<tr>" + "".join(f"<td>{e(str(a[f]))}</td>" for f in
                                      ("left", "keep_left", "keep_right", "position", "detail")) + "</tr>")
    parts.append("</table>")
    for label in ("serial", "merged"):
        enc = report[label]
        toks = [[i, tid, s, en, ""] for i, (tid, (s, en)) in enumerate(zip(enc["ids"], enc["offsets"]))]
        parts.append(f"<h2>{label} ({len(toks)} tokens; first divergence at token {k})</h2>"
                     f"<p>{_row(text, toks, k, None)}</p>")
    parts.append("<h2>Side by side from the first divergence</h2><table><tr><th>#</th>"
                 "<th>serial id [s,e)</th><th>merged id [s,e)</th></tr>")
    ser, mer = report["side_by_side"]["serial"], report["side_by_side"]["merged"]
    for i in range(max(len(ser), len(mer))):
        cell = [f"{t[1]} [{t[2]},{t[3]}) {_visible(text[t[2]:t[3]])}" if t else "" for t in
                (ser[i] if i < len(ser) else None, mer[i] if i < len(mer) else None)]
        parts.append(f"<tr><td>{k + i}</td><td>{cell[0]}</td><td>{cell[1]}</td></tr>")
    parts.append("</table>")
    return "\n".join(parts) + "\n"


def _render_fault_html(report: dict[str, Any]) -> str:
    """A short page for a fault report: what raised, on which input, and how to reproduce it."""
    e = _e
    return "\n".join([
        f"<!doctype html><meta charset=utf-8><title>{e(report['id'])}</title><style>{_CSS}</style>",
        f"<h1>{e(report['strategy'])}: engine fault</h1>",
        f"<p>engine <b>{e(report['engine']['name'])}</b>; params {e(json.dumps(report['params']))}</p>",
        f"<p>fault: <code>{e(report['fault'])}</code></p>",
        f"<p>input ({report['chars']} chars): <code>{e(report['text_repr'])}</code><br>"
        f"hex <code>{e(report['text_hex'])}</code></p>",
        f"<p>reproduce: <code>{e(report['reproduce'])}</code></p>"]) + "\n"
