"""Names and messages holding a byte that is not UTF-8 (a path, an argument: ``\\udcff`` in Python).

Both stores take UTF-8 only: one such name failed its whole batch and stopped the writer, with
every event after it lost; a command's message ended in a driver's traceback.
"""

from __future__ import annotations

from pathlib import Path

from watcher.core.observations import UserMessage
from watcher.runtime import Journal
from watcher.runtime.events import ObservationEvent


def test_an_event_named_with_a_lone_surrogate_is_journaled_and_the_writer_goes_on(journal_at: Path | str) -> None:
    with Journal(journal_at) as journal:
        journal.append(
            ObservationEvent(session="s\udcff", observation=UserMessage(text="x"), index=0, watcher="w\udcff")
        )
        journal.append(ObservationEvent(session="plain", observation=UserMessage(text="y"), index=1))
        journal.flush()
        rows = journal.read()
        assert [(r.session, r.watcher) for r in rows] == [("s\ufffd", "w\ufffd"), ("plain", "")]
        assert [r.payload["index"] for r in journal.read(session="s\udcff")] == [0], "found by the name it was given"


def test_a_command_whose_message_holds_a_lone_surrogate_is_recorded(journal_at: Path | str) -> None:
    with Journal(journal_at) as journal:
        given = journal.submit_command("fleet:t\udcff", "nudge", "i\udcff", payload={"message": "hello \udcff"})
        [command] = journal.commands(sessions=["fleet:t\udcff"])
        assert command.id == given and command.session == "fleet:t\udcff"
        assert command.payload["message"] == "hello \ufffd" and command.interjection_id == "i\ufffd"


def test_a_name_holding_a_nul_is_journaled(journal_at: Path | str) -> None:
    """PostgreSQL's text refuses NUL: the batch failed and the writer stopped."""
    with Journal(journal_at) as journal:
        journal.append(ObservationEvent(session="s\x00", observation=UserMessage(text="a\x00b"), index=0))
        journal.submit_command("fleet:t\x00", "nudge", payload={"message": "a\x00"})
        journal.flush()
        [row] = journal.read()
        assert row.session == "s\ufffd" and row.payload["observation"]["text"] == "a\x00b", "the payload keeps it"
        assert [c.payload["message"] for c in journal.commands(sessions=["fleet:t\x00"])] == ["a\x00"]


def test_a_run_and_a_lease_named_with_a_lone_surrogate_are_claimed(journal_at: Path | str) -> None:
    """``--run`` and a host's name come from arguments: a byte that is not UTF-8 ended in a driver's traceback."""
    with Journal(journal_at) as journal:
        assert journal.claim_task("f:r\udcff", "t1", "h\udcff", lost_after_s=60)
        journal.start_task("f:r\udcff", "t1", "h\udcff")
        journal.beat_claims("f:r\udcff", "h\udcff")
        assert journal.started_tasks("f:r\udcff") == {"t1"}
        assert journal.hold_lease("fleet-supervisor:f\udcff", "h\udcff", 5)
        journal.drop_lease("fleet-supervisor:f\udcff", "h\udcff")
