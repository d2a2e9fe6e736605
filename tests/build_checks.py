"""What the tests of the build track's checks share (``tests/test_build_chNN.py``): a wrong
answer's message, and the two tests every piece's check must pass (the notebook's answer
passes, naming what it checked; the check is deterministic and leaves the random stream
alone)."""

import minigrad as mg
from minigrad import teach


def refused(piece, answer):
    """The message of ``teach.check_piece(piece, answer)``, which must fail."""
    result = teach.check_piece(piece, answer)
    assert not result, result.message
    return result.message


def passes(piece, answer, *words):
    """The notebook's ``answer`` passes the check of ``piece``, whose message names each of
    ``words`` (what was checked)."""
    result = teach.check_piece(piece, answer)
    assert result, result.message
    for word in words:
        assert word in result.message, (word, result.message)


def deterministic(piece, answer):
    """Two checks of ``answer`` say the same, and leave minigrad's random stream as it was."""
    state = mg.default_generator.get_state()
    first = teach.check_piece(piece, answer).message
    assert mg.default_generator.get_state() == state
    assert teach.check_piece(piece, answer).message == first
