"""The output's marks (ndagent.output.Marks): what only the order of a document knows,
written as what it stands for however the bytes come, cut anywhere."""

from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from ndagent.output import (
    END,
    FULL,
    LEAN,
    NEXT_NUMBER,
    ONCE_BEGIN,
    ONCE_END,
    SAME_NUMBER,
    Marks,
)

EXAMPLES = settings(max_examples=examples(50), deadline=None)


def unmarked(text, limit=1 << 30, cuts=()):
    """``text`` written through Marks, in pieces cut at ``cuts`` (byte offsets)."""
    data = text.encode()
    marks = Marks(limit)
    ends = sorted(set(cuts)) + [len(data)]
    begin, found = 0, []
    for end in ends:
        found.append(marks.unmarked(memoryview(data[begin:end])))
        begin = end
    return b"".join(found).decode()


def test_numbers_count_up_in_the_order_written():
    text = f"<{NEXT_NUMBER}>{SAME_NUMBER} <{NEXT_NUMBER}>{SAME_NUMBER}{SAME_NUMBER}"
    assert unmarked(text) == "<1>1 <2>22"


def test_a_text_with_a_lean_form_is_written_whole_until_the_limit_then_lean():
    def piece(index):
        note = f"{ONCE_BEGIN}[limit]{ONCE_END}"
        return f"{FULL}full {index}.{LEAN}{note}lean {index}.{END}"

    text = "head." + "".join(piece(index) for index in range(4))
    assert unmarked(text) == "head.full 0.full 1.full 2.full 3."
    # 5 bytes of head, then 7 for each whole piece: the third begins at 19.
    assert unmarked(text, limit=19) == "head.full 0.full 1.[limit]lean 2.lean 3."
    assert unmarked(text, limit=0) == "head.[limit]lean 0.lean 1.lean 2.lean 3."


def test_of_the_once_texts_only_the_first_written_is():
    text = f"a{ONCE_BEGIN}1{ONCE_END}b{ONCE_BEGIN}2{ONCE_END}c"
    assert unmarked(text) == "a1bc"
    # One in a whole form not written does not count.
    text = f"{FULL}x{LEAN}{ONCE_BEGIN}1{ONCE_END}y{END}{ONCE_BEGIN}2{ONCE_END}"
    assert unmarked(text) == "x2"


# Documents of text, numbers, lean forms and once texts; with their marks cut anywhere.
TEXT = st.text(alphabet="ab\n<>|[]+=", max_size=6)
PIECE = st.one_of(
    TEXT,
    st.just(NEXT_NUMBER), st.just(SAME_NUMBER),
    st.builds(lambda full, lean: f"{FULL}{full}{LEAN}{ONCE_BEGIN}!{ONCE_END}{lean}{END}",
              TEXT, TEXT),
    st.builds(lambda text: f"{ONCE_BEGIN}{text}{ONCE_END}", TEXT),
)


@EXAMPLES
@given(st.lists(PIECE, max_size=12), st.integers(0, 60), st.data())
def test_property_the_bytes_cut_anywhere_give_what_they_give_whole(pieces, limit, data):
    """Every way of cutting the bytes into writes, each offset among the cuts drawn:
    the same output, with no NUL left."""
    text = "".join(pieces)
    size = len(text.encode())
    whole = unmarked(text, limit)
    assert "\0" not in whole
    cuts = data.draw(st.lists(st.integers(0, size), max_size=size))
    assert unmarked(text, limit, cuts) == whole


def test_every_single_cut_of_a_document_gives_what_it_gives_whole():
    """A cut at each byte offset of a document that holds every kind of mark."""
    text = (f"# {NEXT_NUMBER}: {SAME_NUMBER}\n{FULL}long text{LEAN}{ONCE_BEGIN}(cut){ONCE_END}"
            f"short{END}\n{ONCE_BEGIN}again{ONCE_END}{NEXT_NUMBER}{FULL}x{LEAN}y{END}é")
    for limit in (0, 10, 1 << 30):
        whole = unmarked(text, limit)
        for offset in range(len(text.encode()) + 1):
            assert unmarked(text, limit, [offset]) == whole, (limit, offset)
