package soak

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// The streams every order placement implies an event into, and every checkout saga reports to.
var (
	ledgerStream       = Stream{Type: "ledger", ID: "global"}
	notificationStream = Stream{Type: "notification", ID: "global"}
)

// sagaReports are the event types each checkout saga emits once into notificationStream: its
// second step's and its on_complete.
var sagaReports = []string{"confirmation_sent", "checkout_completed"}

// check reads back every stream acknowledged so far, the implied ledger, the scheduled reminders
// and the sagas' reports, and verifies every chain through the audit route. With settled (the
// final check, once every due schedule has fired and every acknowledged saga has completed),
// every acknowledged schedule and saga must have done its part; before, none may have done it
// twice. It returns the number of streams checked.
func check(c *client, key string, l *Ledger, settled bool) (int, error) {
	acks := l.Snapshot()
	names := slices.SortedFunc(maps.Keys(acks.Streams), func(a, b Stream) int { return strings.Compare(a.String(), b.String()) })
	for _, s := range names {
		got, err := readStream(c, key, s)
		if err != nil {
			return 0, err
		}
		if err := CheckStream(s, acks.Streams[s], got); err != nil {
			return 0, err
		}
		if err := verifyChain(c, key, s); err != nil {
			return 0, err
		}
	}
	n := len(names)
	if len(acks.Implied) > 0 {
		got, err := readStream(c, key, ledgerStream)
		if err != nil {
			return 0, err
		}
		if err := CheckImplied(acks.Implied, got, "order_id"); err != nil {
			return 0, err
		}
		if err := verifyChain(c, key, ledgerStream); err != nil {
			return 0, err
		}
		n++
	}
	for s, nonces := range acks.Scheduled {
		got, err := readStream(c, key, s)
		if err != nil {
			return 0, err
		}
		if err := CheckScheduled(s, nonces, got, "placement", settled); err != nil {
			return 0, err
		}
		if len(got) > 0 {
			if err := verifyChain(c, key, s); err != nil {
				return 0, err
			}
			n++
		}
	}
	if len(acks.Sagas) > 0 {
		got, err := readStream(c, key, notificationStream)
		if err != nil {
			return 0, err
		}
		if err := CheckSagas(acks.Sagas, got, "checkout", sagaReports, settled); err != nil {
			return 0, err
		}
		if len(got) > 0 {
			if err := verifyChain(c, key, notificationStream); err != nil {
				return 0, err
			}
			n++
		}
	}
	if !settled {
		return n, nil
	}
	// Each saga asked for its charge on a payment stream of its own: read once, at the end.
	for _, id := range acks.Sagas {
		s := Stream{"payment", id}
		got, err := readStream(c, key, s)
		if err != nil {
			return 0, err
		}
		if err := CheckSagas([]string{id}, got, "checkout", []string{"charge_requested"}, true); err != nil {
			return 0, err
		}
		if err := verifyChain(c, key, s); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

// readStream pages through every event of s; a stream without events (404) reads as empty, which
// the checks of what it should hold then report.
func readStream(c *client, key string, s Stream) ([]Event, error) {
	var all []Event
	start := ""
	for {
		path := "/" + s.Type + "/" + s.ID + "/events?count=1000"
		if start != "" {
			path += "&start=" + url.QueryEscape(start)
		}
		status, b, err := c.do("GET", path, key, nil)
		if status == 404 && start == "" {
			return nil, nil
		}
		var page struct{ Events []Event }
		if err == nil && status == 200 {
			err = json.Unmarshal(b, &page)
		} else if err == nil {
			err = fmt.Errorf("%w: got %d: %s", ErrStatus, status, b)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: reading %s back: GET %s: %v", ErrLost, s, path, err)
		}
		all = append(all, page.Events...)
		if len(page.Events) < 1000 {
			return all, nil
		}
		start = page.Events[len(page.Events)-1].StreamID
	}
}

func verifyChain(c *client, key string, s Stream) error {
	var ans struct {
		Valid  bool
		Length int
	}
	var raw json.RawMessage
	if err := c.must("GET", "/"+s.Type+"/"+s.ID+"/audit/verify-chain", key, nil, 200, &raw); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrChain, s, err)
	}
	if err := json.Unmarshal(raw, &ans); err != nil || !ans.Valid {
		return fmt.Errorf("%w: %s: %s", ErrChain, s, raw)
	}
	return nil
}
