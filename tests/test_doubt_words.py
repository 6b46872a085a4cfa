"""Why a roll is asked about reaches the table: the reader's doubts survive the tracker's
vote over the settle window and are said in the question."""

from __future__ import annotations

from vision import tracker as tk
from vision.reader import DieRead
from web.questions import doubt_message, doubt_words


def _die(value: int | None, confidence: float, doubts: tuple[str, ...] = (),
         x: float = 100.0) -> DieRead:
    return DieRead(value, "red", False, (x, 100.0, x + 40.0, 140.0), confidence, 40.0,
                   doubts=doubts)


def test_a_die_doubted_in_most_frames_keeps_its_doubt_through_the_vote() -> None:
    reads = [_die(4, 0.8, ("lean",)), _die(4, 0.85, ("lean", "edge")), _die(4, 0.8, ("lean",))]
    voted = tk._vote(reads).die
    assert voted.confidence < tk.CERTAIN
    assert voted.doubts[0] == "lean"
    assert "edge" in voted.doubts  # one read of three is a third


def test_a_doubt_of_one_frame_in_many_is_dropped() -> None:
    reads = [_die(4, 0.8, ("lean",))] + [_die(4, 0.8, ("small",)) for _ in range(5)]
    assert tk._vote(reads).die.doubts == ("small",)


def test_a_certain_vote_has_no_doubts() -> None:
    reads = [_die(5, 0.97), _die(5, 0.96), _die(5, 0.95, ("faint",))]
    voted = tk._vote(reads).die
    assert voted.confidence >= tk.CERTAIN
    assert voted.doubts == ()


def test_faces_that_change_between_frames_are_said() -> None:
    reads = [_die(3, 0.95), _die(3, 0.95), _die(5, 0.93)]
    voted = tk._vote(reads).die
    assert voted.value == 3 and voted.confidence < tk.CERTAIN
    assert "disagree" in voted.doubts


def test_the_question_names_the_doubts_of_the_unsure_dice_only() -> None:
    dice = (_die(2, 0.97, ("glare",)), _die(6, 0.6, ("lean", "edge"), x=200.0),
            _die(None, 0.5, ("unreadable", "lean"), x=300.0))
    ev = tk.NeedsConfirmation(1, 0.0, "unsure", (1, 2, 3, 4, 5, 6), dice)
    message = doubt_message(ev)
    assert message.startswith("2 dice could not be read for sure")
    assert "leaning" in message and "glare" not in message
    assert message.index("leaning") < message.index("edge")  # the commoner doubt first


def test_a_question_without_doubts_still_reads_well() -> None:
    ev = tk.NeedsConfirmation(1, 0.0, "unsure", (3, 4), (_die(3, 0.7),))
    assert doubt_message(ev) == "A die could not be read for sure."
    assert doubt_words([_die(3, 0.7, ("something-new",))]) == "something-new"
