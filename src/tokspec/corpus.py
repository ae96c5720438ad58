"""The conformance corpus: texts tokspec builds itself, deterministically from a seed.

Three sources, none pasted from elsewhere:

1. *Written*: short texts written for tokspec in a dozen scripts, plus code, math and
   whitespace-shaped snippets (the ``_WRITTEN`` table below).
2. *Generated*: random strings drawn per Unicode general category (every category except Cs, the
   surrogates, which are outside the text domain), mixtures of categories, emoji ZWJ sequences,
   combining-mark stacks, RTL with bidi controls, control characters and NUL, CRLF and whitespace runs,
   long repetitions, digit runs, and contractions.
3. *Assembled at run time* from files on this machine: chunks of the Python standard library's source
   files and of text files under /usr/share (read as UTF-8, undecodable files skipped).

``build_corpus(seed=0, size="small")`` gives a few hundred texts (for tests); ``size="large"`` a few
thousand (for `tokspec diff` runs). The same seed, size and machine give the same list.
Out of scope: natural-language realism; this corpus aims at coverage of character classes and
tokenizer edge cases, not at frequency statistics.
"""

from __future__ import annotations

import functools
import os
import random
import stat
import sys
import sysconfig
import unicodedata
from pathlib import Path
from typing import Literal

from tokspec._escape import dumps, escape
from tokspec.errors import TokspecError

__all__ = ["build_corpus", "category_table", "write_inputs", "check_output_path", "OutputPathError",
           "generated_text", "machine_texts"]

_WRITTEN: tuple[str, ...] = (
    "The quick test of a tokenizer is whether it survives its own documentation.",
    "It's, we'll, they're, I'd, you've, she'S, WE'LL and O'Neill's dogs' bones.",
    "Die Straße ist naß, aber Äpfel und Öl sind günstig.",
    "Le cœur a ses raisons que la raison ne connaît point — dit-on.",
    "Привет, мир! Как дела у токенизатора сегодня?",
    "Γειά σου κόσμε· η δοκιμή συνεχίζεται.",
    "مرحبا بالعالم، هذا اختبار للنص من اليمين إلى اليسار.",
    "שלום עולם, זה מבחן של טקסט מימין לשמאל.",
    "你好，世界。分词器测试：中文没有空格，标点也不同。",
    "東京都の天気は晴れ、気温は二十五度です。カタカナもテスト。",
    "안녕하세요 세계! 한국어 토크나이저 시험입니다.",
    "नमस्ते दुनिया, यह एक परीक्षण है।",
    "สวัสดีชาวโลก นี่คือการทดสอบ",
    "Xin chào thế giới, đây là bài kiểm tra tiếng Việt.",
    "def f(x):\n    return x**2 + 3*x - 1  # comment\n\n\tif x >= 10: pass\n",
    "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }\r\n",
    "SELECT id, name FROM users WHERE age > 21 ORDER BY name;",
    "∀x ∈ ℝ: x² ≥ 0, ∑ᵢ aᵢ = 1, ∫₀^∞ e^{-x} dx = 1, π ≈ 3.14159",
    "Prices: $1,234.56 €99,99 ¥1000 12:30pm 2026-11-21 +44 20 7946 0000",
    "   leading spaces, trailing spaces   \n\n\n   \t\t  mixed\u00a0nbsp\u2003em space ",
    "line one\r\nline two\rline three\n\n\r\n  \r\n",
    "👨‍👩‍👧‍👦 family, 🏳️‍🌈 flag, 👍🏽 thumbs, 🇫🇷🇯🇵 flags, ❤️‍🔥 heart on fire",
    "e\u0301 a\u0308 o\u0302\u0323 Z\u0335\u0334\u0336a\u0337l\u0338g\u0321o\u0322",
    "\u202eRTL override\u202c and \u200fmark\u200e, \u2066isolate\u2069",
    "NUL\x00inside, bell\x07, escape\x1b[31m, del\x7f, C1\x85next",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "1234567890123456789012345678901234567890 0.000001 1e-9 ٣٤٥ ૧૨૩ 四五六",
)


@functools.lru_cache(maxsize=1)
def category_table() -> dict[str, tuple[int, ...]]:
    """General category -> all assigned code points of it in this Python's Unicode database.

    Excludes Cs (surrogates). Cn (unassigned) is sampled from the BMP and planes 1-2 only.
    """
    table: dict[str, list[int]] = {}
    for cp in range(sys.maxunicode + 1):
        cat = unicodedata.category(chr(cp))
        if cat == "Cs" or (cat == "Cn" and cp > 0x2FFFF):
            continue
        table.setdefault(cat, []).append(cp)
    return {cat: tuple(cps) for cat, cps in sorted(table.items())}


def _category_string(rng: random.Random, cats: list[str], length: int) -> str:
    table = category_table()
    return "".join(chr(rng.choice(table[rng.choice(cats)])) for _ in range(length))


def generated_text(rng: random.Random) -> str:
    """One generated text; the kind is chosen by ``rng`` (see module docstring, source 2)."""
    table = category_table()
    kind = rng.randrange(10)
    if kind == 0:  # one general category
        return _category_string(rng, [rng.choice(list(table))], rng.randint(1, 40))
    if kind == 1:  # a mixture of categories, biased to letters, spaces and numbers
        cats = ["Lu", "Ll", "Lo", "Nd", "Zs", "Po", "Mn", "So", "Cc", "Lm", "Nl", "Pd", "Sm"]
        return _category_string(rng, cats, rng.randint(1, 80))
    if kind == 2:  # emoji with ZWJ, skin tones and variation selectors
        parts = [chr(rng.choice((0x1F468, 0x1F469, 0x1F9D1, 0x1F466, 0x2764, 0x1F525, 0x1F3F3)))
                 + rng.choice(("", "\u200d", "\ufe0f", chr(0x1F3FB + rng.randrange(5))))
                 for _ in range(rng.randint(1, 8))]
        return rng.choice(("", "a ", " ")) + "".join(parts)
    if kind == 3:  # combining-mark stacks on letters
        return "".join(rng.choice("aeiouzAEZ αω") + _category_string(rng, ["Mn", "Me"], rng.randint(0, 4))
                       for _ in range(rng.randint(1, 12)))
    if kind == 4:  # whitespace-, CRLF- and control-heavy
        pieces = [" ", "  ", "\t", "\n", "\r\n", "\r", "\x00", "\x0b", "\x0c", "\u3000", "\u00a0", "x", "1"]
        return "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
    if kind == 5:  # long repetition of a short unit
        unit = rng.choice(("a", " ", "ab", "la ", "\n", "0", "的", "🙂", "=-", "'s", "..."))
        return unit * rng.randint(10, 400)
    if kind == 6:  # digit runs of every length, other scripts' digits
        digits = table["Nd"]
        return " ".join("".join(chr(rng.choice(digits)) if rng.random() < 0.2 else rng.choice("0123456789")
                                for _ in range(rng.randint(1, 9))) for _ in range(rng.randint(1, 6)))
    if kind == 7:  # contractions in mixed case, ASCII and typographic apostrophes
        words = ["it", "WE", "they", "I", "You", "she", "O", "rock", "n"]
        ends = ["'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'d", "’s", "'", "''"]
        return " ".join(rng.choice(words) + rng.choice(ends) for _ in range(rng.randint(1, 8)))
    if kind == 8:  # scrambled written text: words of the written table in random order
        words = " ".join(_WRITTEN).split(" ")
        return " ".join(rng.choice(words) for _ in range(rng.randint(1, 25)))
    cats = list(table)  # anything at all, short
    return _category_string(rng, cats, rng.randint(1, 12))


def _machine_files() -> list[Path]:
    roots = [Path(sysconfig.get_paths()["stdlib"]), Path("/usr/share/doc"), Path("/usr/share/common-licenses")]
    files: list[Path] = []
    for root in roots:
        if not root.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            # Only the interpreter's own files: installed packages would make the corpus depend on
            # whatever else is on the machine.
            dirnames[:] = sorted(d for d in dirnames
                                 if d not in ("site-packages", "dist-packages", "__pycache__"))
            for name in sorted(filenames):
                if name.endswith((".py", ".txt", ".md", ".rst")) or root.name == "common-licenses":
                    files.append(Path(dirpath) / name)
            if len(files) > 5000:
                break
    return files


def machine_texts(rng: random.Random, count: int, *, max_chars: int = 2000) -> list[str]:
    """``count`` chunks of UTF-8 text files found on this machine (source 3)."""
    files = _machine_files()
    out: list[str] = []
    tries = 0
    while files and len(out) < count and tries < count * 10:
        tries += 1
        path = rng.choice(files)
        try:
            text = path.read_bytes()[:200_000].decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if not text:
            continue
        start = rng.randrange(len(text))
        out.append(text[start:start + rng.randint(1, max_chars)])
    return out


def build_corpus(*, seed: int = 0, size: Literal["small", "large"] = "small", machine: bool = True) -> list[str]:
    """The conformance corpus: written, generated and machine texts (see module docstring).

    ``machine=False`` leaves out source 3 (files of this machine): the corpus is then fixed per
    tokspec version and seed, whatever is installed (what the plugin replays and searches from)."""
    if size not in ("small", "large"):
        raise ValueError(f"size must be 'small' or 'large', got size={size!r}")
    rng = random.Random(seed)
    n_generated, n_machine = (300, 40) if size == "small" else (4000, 600)
    texts = list(_WRITTEN)
    texts += [generated_text(rng) for _ in range(n_generated)]
    texts += machine_texts(rng, n_machine) if machine else []
    # Joined texts: tokenizers must handle transitions between scripts and kinds.
    texts += ["".join(rng.sample(texts, 3)) for _ in range(n_generated // 10)]
    return texts


class OutputPathError(TokspecError):
    """An output file path names something tokspec must not write (a folder, a FIFO, a device...)."""


def _describe(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def check_output_path(path: str | Path) -> None:
    """Raise OutputPathError unless ``path`` is a regular file (or a symlink to one) or a new name
    in an existing folder. Nothing is created. O(1)."""
    p = Path(path)
    shown = escape(str(path))
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        if p.is_symlink():
            raise OutputPathError(f"--out {shown!r} is a symlink to a missing file; name the file itself") from None
        parent = p.absolute().parent
        if not parent.is_dir():
            raise OutputPathError(f"--out {shown!r}: folder {escape(str(parent))!r} does not exist") from None
        return
    except OSError as exc:
        raise OutputPathError(f"--out {shown!r}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
        raise OutputPathError(f"--out {shown!r} is {_describe(mode)}; give a regular file or a new path")


def write_inputs(path: str | Path, texts: list[str]) -> None:
    """Write texts as JSON Lines (``{"text": ...}`` per line) *through* ``path``.

    ``path`` must be a regular file (or a symlink to one: the file it points to is written, the link
    stays) or a new name in an existing folder, else OutputPathError, with nothing created or
    changed. The file is opened for writing -- never replaced by a rename -- so its inode, links
    and permissions stay; the content is built first and written in one go (a kill mid-write can
    leave a partial file, never a stray temporary one). Strings are written with
    :func:`tokspec._escape.dumps`. O(total length).
    """
    check_output_path(path)
    content = "".join(dumps({"text": text}) + "\n" for text in texts).encode("utf-8")
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)  # O_NONBLOCK: a FIFO without reader fails instead of blocking
    except OSError as exc:
        raise OutputPathError(f"--out {escape(str(path))!r}: cannot open for writing: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # it changed since the check: still nothing written
            raise OutputPathError(f"--out {escape(str(path))!r} is {_describe(mode)}; give a regular file")
        os.set_blocking(fd, True)
        os.ftruncate(fd, 0)
        view = memoryview(content)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
