"""The paper protocol reads Python string literals as the authors' ``ast.literal_eval`` does, escapes included:
``[['\\x31','\\x32'],['\\x30','\\x31']]`` is ((1, 2), (0, 1)), not the digit runs 31, 32, 30, 31.

The shipped reader (``scoring.literal``) never evaluates or compiles anything; here it is held to
``ast.literal_eval`` itself on generated literals: every prefix, every quote, every escape kind, well-formed and
malformed, source newlines, and adjacent literals joined."""

from __future__ import annotations

import ast
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.literal import LiteralError, read_literal
from scoring.paper import parse_paper
from tests.support import reference_paper
from tests.support.helpers import examples, linear_time_failure

#: Python warns about unknown escapes (and octal escapes above \377) but reads them; so did the authors' runs.
pytestmark = pytest.mark.filterwarnings("ignore:invalid (octal )?escape sequence")

PREFIXES = ["", "u", "U", "r", "R", "b", "B", "br", "bR", "Br", "rb", "RB", "f", "ur"]  # f and ur: not literals
QUOTES = ["'", '"', "'''", '"""']
ESCAPES = [
    r"\x31", r"\x3", r"\xg1", r"\X31", r"\u0031", r"\u003", r"\U00000031", r"\U0010FFFF", r"\U00110000", r"\U0000003",
    r"\N{DIGIT ONE}", r"\N{digit one}", r"\N{LF}", r"\N{BYTE ORDER MARK}", r"\N{}", r"\N{NOT A NAME}", r"\N",
    r"\N{DIGIT ONE", r"\N{LATIN CAPITAL LETTER A WITH MACRON AND GRAVE}", r"\N{CJK UNIFIED IDEOGRAPH-4E00}",
    r"\N{cjk unified ideograph-4e00}", r"\N{HANGUL SYLLABLE GA}",
    r"\0", r"\1", r"\61", r"\061", r"\0618", r"\377", r"\400", r"\777", r"\8", r"\9",
    r"\n", r"\t", r"\r", r"\a", r"\b", r"\f", r"\v", "\\\\", r"\'", r'\"', r"\q", r"\ ", "\\\u0663",
    "\\\n", "\\\r\n", "\\\r",
]
PLAIN = ["1", "0", "2", " ", "a", "_", "\u0663", "\uff11", "\u00e9", "'", '"', "\n", "\r\n", "\r", "\t", "#", "]", "[",
         ",", "\x0c", "\x00", "\ud800"]
PIECES = st.one_of(st.sampled_from(ESCAPES), st.sampled_from(PLAIN), st.characters(max_codepoint=0x2FFFF))
LITERAL = st.builds(lambda p, q, body: p + q + "".join(body) + q, st.sampled_from(PREFIXES), st.sampled_from(QUOTES),
                    st.lists(PIECES, max_size=6))


def _python(text: str) -> str | None:
    """What the authors' ``ast.literal_eval`` gives (as repr), or None where it raises (warnings as Python shows them
    by default: not errors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return repr(ast.literal_eval(text))
        except Exception:  # noqa: BLE001 - SyntaxError, ValueError, UnicodeEncodeError...: their code moves on
            return None


def _ours(text: str) -> str | None:
    try:
        return repr(read_literal(text))
    except LiteralError:
        return None


@pytest.mark.slow  # thousands of generated literals, each also compiled by Python
@settings(max_examples=examples(3000), deadline=None)
@given(st.lists(LITERAL, min_size=1, max_size=3), st.sampled_from(["", " ", "\n", "  \\\n "]))
def test_string_literals_read_as_literal_eval_reads_them(literals, gap):
    text = "[" + gap.join(literals) + "]"  # side by side: implicit concatenation
    assert _ours(text) == _python(text), text


@pytest.mark.slow
@settings(max_examples=examples(1000), deadline=None)
@given(st.lists(st.lists(LITERAL, min_size=2, max_size=2), min_size=2, max_size=2), st.sampled_from([",", ", "]))
def test_a_matrix_of_string_literals_scores_as_the_authors_code_does(rows, sep):
    text = "[" + sep.join("[" + sep.join(row) + "]" for row in rows) + "]"
    matrix, strategy, _ = parse_paper(text, 2)
    assert (matrix, strategy) == reference_paper.parse(text, 2), text


@pytest.mark.parametrize(("text", "matrix"), [
    (r"[['\x31','\x32'],['\x30','\x31']]", ((1, 2), (0, 1))),  # the case in the issue
    (r"[['\u0031', '\U00000032'], ['\N{DIGIT ZERO}', '\061']]", ((1, 2), (0, 1))),
    (r"[[b'\x31', rb'2'], ['''0''', r'1']]", ((1, 2), (0, 1))),
    ("[['1' '0', \"2\"], ['0', '1']]", ((10, 2), (0, 1))),  # adjacent strings are one
    ("[['\\\n1', '2'], ['0', '''\n1\n''']]", ((1, 2), (0, 1))),  # a continued line; int() takes the newlines as space
])
def test_escaped_digits_are_the_digits_they_spell(text, matrix):
    assert reference_paper.parse(text, 2) == (matrix, "literal")  # what the authors' reading gives
    assert parse_paper(text, 2)[:2] == (matrix, "literal")


@pytest.mark.parametrize("text", [
    r"[['\x3', '1'], ['2', '3']]",  # a truncated escape: a SyntaxError for literal_eval
    r"[['\N{NOT A NAME}', '1'], ['2', '3']]",
    r"[['\U00110000', '1'], ['2', '3']]",
    "[['1\x00', '1'], ['2', '3']]",
])
def test_a_malformed_string_moves_on_to_the_later_steps(text):
    assert reference_paper.parse(text, 2)[1] != "literal"
    assert parse_paper(text, 2)[:2] == reference_paper.parse(text, 2)


#: Hostile string bodies (opening, a unit repeated to about n characters, closing): time must be linear in n.
STRING_FAMILIES = {
    "unterminated escapes": ("[[", "'\\", "]]"),
    "quotes in a triple-quoted string": ("[['\'\'", "' ", "\'\'']]"),
    "escaped quotes, never closed": ("[['\'\'", "\\'", "]]"),
    "\\N{ in bytes": ("[[b'", "\\N{", "']]"),
    "\\x escapes": ("[['", "\\x31", "']]"),
    "CRLF newlines": ("[['\'\'", "\r\n", "\'\'']]"),
    "adjacent strings": ("[[", "'1' ", "]]"),
}


@pytest.mark.slow  # a timing ratio of large texts
@pytest.mark.parametrize("family", list(STRING_FAMILIES))
def test_string_bodies_are_read_in_linear_time(family):
    opening, unit, closing = STRING_FAMILIES[family]

    def make(n):
        return opening + unit * (n // len(unit)) + closing

    assert linear_time_failure(lambda text: parse_paper(text, 2), make) is None, family
