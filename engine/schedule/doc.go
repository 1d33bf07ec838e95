// Package schedule keeps the scheduled events of the Scheduled Events page for one
// (instance, environment): their records in the store's record space, and an in-memory index
// that answers "what is due" in O(due) and "which schedules does this event cancel" in O(1).
//
// # Records
//
// Everything lives in the record space Space, written in the same commit as the event that
// causes it (DESIGN invariant 10), so that the index is derived and rebuilt by Load at open:
//
//	s/<id>  Record: the resolved emit, fire time, cancel patterns, attempts, last_error, dead
//	f/<id>  Marker: written in the same record as the fired event
//	c/<id>  Marker: written in the same record as the canceling event (or by an operator)
//
// The status of a schedule is fired when f/ exists, else canceled when c/ exists, else
// dead_letter or pending from s/. Markers are never removed, so a schedule that was fired is
// never fired again, whatever the order in which a racing cancel and fire commit.
//
// # Invariants
//
//   - Index mirrors the committed records: callers change it only after the commit returned.
//   - Pending entries, and only they, are in the due heap.
//   - Pending schedules plus the room held by Reservations never exceed MaxPerAggregate per
//     source nor MaxPerPair in all: a write reserves before its commit and turns the room into
//     entries (Reservation.Commit) or gives it back (Release) after, so the limits are exact
//     under concurrent writes.
//
// # Concurrency
//
// Index is safe for concurrent use; its mutex guards every field.
package schedule
