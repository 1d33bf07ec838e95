package spec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Issue is one problem in a spec: where it is (a JSON Pointer into the uploaded document, and the
// 1-based line and column of the same place) and what to do about it.
type Issue struct {
	Pointer string
	Line    int
	Column  int
	Message string
}

// String formats the issue as "line:col: pointer: message".
func (i Issue) String() string {
	return fmt.Sprintf("%d:%d: %s: %s", i.Line, i.Column, displayPointer(i.Pointer), i.Message)
}

// displayPointer shows the root pointer, which is the empty string, as "/".
func displayPointer(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// Report lists every error and warning found in one spec document. Errors make the spec
// unusable; warnings name conventions and deprecations and never block a deploy.
type Report struct {
	Errors   []Issue
	Warnings []Issue
}

// OK reports whether the spec has no errors.
func (r *Report) OK() bool { return len(r.Errors) == 0 }

// Err returns nil for a spec without errors, otherwise an error wrapping ErrInvalid that
// summarises the first problem and how many there are.
func (r *Report) Err() error {
	if r.OK() {
		return nil
	}
	first := r.Errors[0]
	if len(r.Errors) == 1 {
		return fmt.Errorf("%w: %s", ErrInvalid, first)
	}
	return fmt.Errorf("%w: %s (and %d more)", ErrInvalid, first, len(r.Errors)-1)
}

// lines maps byte offsets of a text to 1-based lines and columns (columns count characters).
type lines struct {
	text   string
	starts []int
}

func newLines(text string) *lines {
	l := &lines{text: text, starts: []int{0}}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			l.starts = append(l.starts, i+1)
		}
	}
	return l
}

func (l *lines) position(off int) (line, col int) {
	if off > len(l.text) {
		off = len(l.text)
	}
	i := sort.Search(len(l.starts), func(i int) bool { return l.starts[i] > off }) - 1
	return i + 1, utf8.RuneCountInString(l.text[l.starts[i]:off]) + 1
}

// pending is an issue whose position is still a byte offset.
type pending struct {
	ptr string
	off int
	msg string
}

// reporter collects issues while a spec is checked; positions are resolved once at the end.
type reporter struct {
	errs  []pending
	warns []pending
}

func (r *reporter) errorf(ptr string, off int, format string, args ...any) {
	r.errs = append(r.errs, pending{ptr: ptr, off: off, msg: fmt.Sprintf(format, args...)})
}

func (r *reporter) warnf(ptr string, off int, format string, args ...any) {
	r.warns = append(r.warns, pending{ptr: ptr, off: off, msg: fmt.Sprintf(format, args...)})
}

func (r *reporter) count() int { return len(r.errs) }

// report resolves offsets to lines and columns and orders issues as they appear in the text.
func (r *reporter) report(text string) *Report {
	l := newLines(text)
	return &Report{Errors: resolve(l, r.errs), Warnings: resolve(l, r.warns)}
}

func resolve(l *lines, ps []pending) []Issue {
	if len(ps) == 0 {
		return nil
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].off < ps[j].off })
	out := make([]Issue, 0, len(ps))
	for _, p := range ps {
		line, col := l.position(p.off)
		out = append(out, Issue{Pointer: p.ptr, Line: line, Column: col, Message: p.msg})
	}
	return out
}

// escapePointer escapes one JSON Pointer reference token (RFC 6901).
func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func unescapePointer(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// locate follows a pointer relative to n and returns the absolute pointer (base joined with
// rel) and the best offset for it: the key of the last object member reached, or the start of
// the last value reached when the pointer leads past what the document holds.
func locate(n *node, base, rel string) (string, int) {
	if rel == "" || rel == "/" {
		return base, n.start
	}
	if !strings.HasPrefix(rel, "/") {
		rel = "/" + rel
	}
	off := n.start
	cur := n
	for _, tok := range strings.Split(rel[1:], "/") {
		if cur == nil {
			break
		}
		tok = unescapePointer(tok)
		switch cur.kind {
		case kindObject:
			next := cur.get(tok)
			if next == nil {
				cur = nil
				continue
			}
			off = cur.keyOffset(tok)
			cur = next
		case kindArray:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(cur.elems) {
				cur = nil
				continue
			}
			cur = cur.elems[i]
			off = cur.start
		default:
			cur = nil
		}
	}
	return base + rel, off
}
