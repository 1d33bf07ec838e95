package soak

import (
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
)

// ledgerStream is the singleton every order placement implies an event into.
var ledgerStream = Stream{Type: "ledger", ID: "global"}

// check reads back every stream acknowledged so far and the implied ledger, and verifies every
// chain through the audit route. It returns the number of streams checked.
func check(c *client, key string, l *Ledger) (int, error) {
	streams, implied := l.Snapshot()
	names := make([]Stream, 0, len(streams))
	for s := range streams {
		names = append(names, s)
	}
	sort.Slice(names, func(i, j int) bool { return names[i].String() < names[j].String() })
	for _, s := range names {
		got, err := readStream(c, key, s)
		if err != nil {
			return 0, err
		}
		if err := CheckStream(s, streams[s], got); err != nil {
			return 0, err
		}
		if err := verifyChain(c, key, s); err != nil {
			return 0, err
		}
	}
	if len(implied) == 0 {
		return len(names), nil
	}
	got, err := readStream(c, key, ledgerStream)
	if err != nil {
		return 0, err
	}
	if err := CheckImplied(implied, got, "order_id"); err != nil {
		return 0, err
	}
	if err := verifyChain(c, key, ledgerStream); err != nil {
		return 0, err
	}
	return len(names) + 1, nil
}

// readStream pages through every event of s.
func readStream(c *client, key string, s Stream) ([]Event, error) {
	var all []Event
	start := ""
	for {
		path := "/" + s.Type + "/" + s.ID + "/events?count=1000"
		if start != "" {
			path += "&start=" + url.QueryEscape(start)
		}
		var page struct{ Events []Event }
		if err := c.must("GET", path, key, nil, 200, &page); err != nil {
			return nil, fmt.Errorf("%w: reading %s back: %v", ErrLost, s, err)
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
