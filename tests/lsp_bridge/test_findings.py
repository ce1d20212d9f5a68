"""The finding book: how journal rows and commands fold into findings (no server, no LSP)."""

from __future__ import annotations

from pathlib import Path

from watcher.lsp_bridge.findings import FindingBook
from watcher.runtime.journal import Command, JournalRow


def _row(id: int, kind: str, payload: dict, *, session: str = "s", watcher: str = "w") -> JournalRow:
    return JournalRow(id, 0.0, session, watcher, kind, payload)


def _interjection(id: int, iid: str, status: str = "pending", locations: list | None = None) -> JournalRow:
    body = {
        "id": iid,
        "content": "c",
        "locations": [{"path": "a.py", "start_line": 1}] if locations is None else locations,
    }
    return _row(id, "interjection", {"interjection": body, "status": status, "index": 0})


def _command(id: int, kind: str, iid: str, status: str = "new", detail: str = "") -> Command:
    return Command(id, 0.0, "s", "w", kind, iid, {}, status, detail)


def test_statuses_follow_deliveries_and_commands() -> None:
    book = FindingBook(Path("/j"), Path("/r"))
    update = book.apply_rows(
        [_row(1, "watcher", {"mode": "manual"}), _interjection(2, "a"), _interjection(3, "b", "queued")], live_after=1
    )
    assert [f.id for f in update.changed] == ["a", "b"]
    assert [f.id for f in update.live] == ["a", "b"]
    assert book.findings["a"].injectable and not book.findings["b"].injectable
    book.apply_rows([_row(4, "delivery", {"interjection_id": "b", "outcome": "delivered"})], live_after=1)
    assert book.findings["b"].status == "delivered"
    assert book.apply_commands([_command(1, "dismiss", "a")])[0].status == "dismissed"
    assert not book.findings["a"].shown
    # a later delivery does not bring a dismissed finding back
    assert (
        book.apply_rows([_row(5, "delivery", {"interjection_id": "a", "outcome": "delivered"})], live_after=1).changed
        == []
    )


def test_history_is_not_announced_and_fates_may_come_first() -> None:
    book = FindingBook(Path("/j"), Path("/r"))
    update = book.apply_rows(
        [_row(1, "delivery", {"interjection_id": "x", "outcome": "delivered"}), _interjection(2, "x", locations=[])],
        live_after=5,
    )
    assert update.live == [] and update.changed == []  # no location: no diagnostic; old: no message
    book.apply_rows(
        [_interjection(6, "y"), _row(7, "delivery", {"interjection_id": "y", "outcome": "undeliverable"})], live_after=5
    )
    assert book.findings["y"].status == "undeliverable"


def test_awaited_injections_report_failure() -> None:
    book = FindingBook(Path("/j"), Path("/r"))
    book.apply_rows([_interjection(1, "a")], live_after=0)
    [requested] = book.apply_commands([_command(7, "inject", "a")])  # as this server wrote it
    assert requested.status == "requested"
    assert book.awaited == {7}  # re-read the awaited command until it is answered
    book.apply_commands([_command(7, "inject", "a", "claimed")])
    assert book.findings["a"].status == "requested" and book.awaited == {7}
    [changed] = book.apply_commands([_command(7, "inject", "a", "failed", "no watcher")])
    assert (changed.status, changed.detail) == ("failed", "no watcher")
    assert book.awaited == set(), "answered: no longer read again"


def test_a_request_read_after_its_delivery_does_not_set_it_back() -> None:
    """The owner journals the delivery before it marks the command: a row still open changes nothing then."""
    book = FindingBook(Path("/j"), Path("/r"))
    book.apply_rows(
        [_interjection(1, "a"), _row(2, "delivery", {"interjection_id": "a", "outcome": "queued"})], live_after=0
    )
    assert book.apply_commands([_command(1, "accept", "a", "claimed")]) == []
    assert book.findings["a"].status == "queued" and book.awaited == set()
    # a failed dismissal hides nothing; another client's request shows here too
    book.apply_rows([_interjection(3, "b")], live_after=0)
    assert book.apply_commands([_command(2, "dismiss", "b", "failed", "gone")]) == []
    [b] = book.apply_commands([_command(3, "inject", "b")])
    assert b.status == "requested"


def test_cell_sources_by_id_and_by_index() -> None:
    book = FindingBook(Path("/j"), Path("/r"))
    cell = {"kind": "cell_executed", "source": "x = 1", "cell_id": "abc"}
    book.apply_rows([_row(1, "observation", {"index": 4, "observation": cell})], live_after=0)
    book.apply_rows([_interjection(2, "i", locations=[{"cell_id": "zzz", "start_line": 1}])], live_after=0)
    finding = book.findings["i"]
    assert book.source_of(finding, "abc") == "x = 1"
    assert book.source_of(finding, "zzz") is None  # index 0 was never observed
    finding.index = 4
    assert book.source_of(finding, "zzz") == "x = 1"
