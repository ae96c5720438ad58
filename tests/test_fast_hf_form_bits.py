"""The per-form info bits of ``tokspec.fast._hf_norm_forms.mark_form_bits`` (what lets ``_form``
cut segments before characters such as ``é``, ``ё`` or a Hangul syllable and copy a stable
character alone): with the bits, every normalization form gives the very state (code points, HF
spans, contract origins) it gives without them, on a text holding every character that has a
decomposition of the form's kind, each after a character that composes and before marks and a
Hangul trailing jamo; the bits of a few characters are Unicode facts; the interpreted
``mark_form_bits`` sets the same bits as the compiled one. ids-only ``metaspace_arrays`` gives the
same bytes and bounds as the full call, and the one-call ``chain_metaspace`` the same arrays as
``run_chain`` then ``metaspace_arrays``. Fast in interpreted mode (a mutation killer)."""

from __future__ import annotations

import copy
import functools

import numpy as np
import pytest

from tokspec._jit import interpreted
from tokspec.fast import _hf_norm_forms as forms
from tokspec.fast import _hf_pretok_kernels as pretok
from tokspec.fast._hf_compiled import _form_info
from tokspec.fast._hf_norm_tables import unicode_tables

NFD, NFC, NFKD, NFKC = 0, 1, 2, 3
#: after each decomposable character: marks of several classes (one blocked by an equal class), a
#: Hangul trailing jamo (it composes with an LV syllable), nothing
FOLLOWERS = ["\u0301", "\u0323\u0302", "", "\u11a8", "\u0327\u0301\u0301", "\u0344"]


@functools.lru_cache(maxsize=4)
def _marked(form: int) -> np.ndarray:
    return _form_info((form,))


def _state(text: str) -> tuple[np.ndarray, ...]:
    cp = np.array([ord(c) for c in text], dtype=np.int32)
    ss = np.arange(len(cp), dtype=np.int64)
    return cp, ss, ss + 1, ss.copy(), ss + 1


def _form(text: str, form: int, info: np.ndarray) -> list[list[int]]:
    t = unicode_tables()
    out = forms._form(*_state(text), form, info, t.dec_start, t.dec_flat, t.pair_keys, t.pair_vals)
    return [a.tolist() for a in out]


@pytest.mark.parametrize("form", [NFD, NFC, NFKD, NFKC])
def test_bits_leave_the_state_of_every_decomposable_character_unchanged(form: int) -> None:
    t = unicode_tables()
    decomposable = np.flatnonzero(t.dec_start[form >> 1] >= 0)
    firsts = sorted({int(k) >> 21 for k in t.pair_keys})  # every starter something composes with
    text = "".join(chr(firsts[i % len(firsts)]) + chr(c) + FOLLOWERS[i % len(FOLLOWERS)]
                   for i, c in enumerate(decomposable.tolist()))
    assert _form(text, form, _marked(form)) == _form(text, form, t.info)


def test_bits_of_known_characters() -> None:
    nfc, nfkc = _marked(NFC), _marked(NFKC)
    alone, boundary = forms._ALONE, forms._BOUNDARY
    for c in ("\u00e9", "\u0451", "\uac00", "\ud7a3", "a", "\u1100"):  # NFC leaves them alone; nothing composes into them
        assert nfc[ord(c)] & (alone << NFC) and nfc[ord(c)] & (boundary << NFC), c
    for c in ("\u0301", "\u1161", "\u11a8", "\u0344"):  # marks and jamo that compose or reorder
        assert not nfc[ord(c)] & (boundary << NFC), c
    assert not nfc[0x0344] & (alone << NFC) and not nfc[0x212B] & (alone << NFC)  # they change
    assert nfc[0x212B] & (boundary << NFC)  # Angstrom sign: becomes Å, a starter composing with nothing before
    assert nfc[0xFB01] & (alone << NFC) and not nfkc[0xFB01] & (alone << NFKC) and nfkc[0xFB01] & (boundary << NFKC)
    assert not nfc[ord("e")] & (alone << NFKC)  # only the forms asked for are marked


def test_interpreted_marks_the_same_bits() -> None:
    t = unicode_tables()
    info = t.info.copy()
    interpreted(forms.mark_form_bits)(info, NFC, t.dec_start, t.dec_flat, t.pair_keys, t.pair_vals)
    assert np.array_equal(info, _marked(NFC))


def test_metaspace_without_alignment_gives_the_same_bytes_and_bounds() -> None:
    for text in ("", " ", "a b  c", "\u2581x y", "\U0001f642 \u0800\u07ff\x7f"):
        state = _state(text)
        for prepend in (False, True):
            for split in (False, True):
                full = pretok.metaspace_arrays(*state, 0x2581, prepend, split)
                ids_only = pretok.metaspace_arrays(*state, 0x2581, prepend, split, False)
                assert full[0].tobytes() == ids_only[0].tobytes() and full[1].tolist() == ids_only[1].tolist()
                assert [len(a) for a in ids_only[2:]] == [0, 0, 0, 0] and len(full[2]) == len(full[0].tobytes().decode())


def test_fused_chain_metaspace_equals_the_two_calls() -> None:
    """mon-unigram's plan (no Precompiled, Metaspace) takes the one-call ``chain_metaspace``; the
    two-call path gives the same arrays, with and without alignment."""
    from tokspec.app.bench.normalizing import normalizing_texts
    from tokspec.fast.unigram_datrie import datrie_encoder
    plan = datrie_encoder("mon-unigram")._compiled
    assert plan is not None and plan.fused
    two = copy.copy(plan)
    two.fused = False
    for text in [*normalizing_texts(3, 4, 60), "", " ", "e\u0301"]:
        for alignment in (True, False):
            got, want = plan.arrays(text, alignment), two.arrays(text, alignment)
            assert [a.tolist() for a in (got[0], got[1], *got[2])] == [a.tolist() for a in (want[0], want[1], *want[2])]
