package schema

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// validateRegex checks the regex format: ECMA-262 pattern syntax, as with the u flag (no Annex B
// leniency: an escape must mean something, braces and brackets must pair). Only the syntax is
// checked; such patterns are never run.
func validateRegex(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	p := &ecmaParser{src: s, names: map[string]bool{}}
	return p.parse()
}

var errECMASyntax = errors.New("not an ECMA-262 regular expression")

// ecmaParser is a recursive-descent parser of the ECMA-262 Pattern grammar (section 22.2.1).
type ecmaParser struct {
	src     string
	pos     int
	groups  int
	names   map[string]bool
	backref int      // highest numbered backreference
	named   []string // named backreferences
}

func (p *ecmaParser) parse() error {
	if err := p.disjunction(); err != nil {
		return err
	}
	if p.pos != len(p.src) {
		return p.fail("unmatched )")
	}
	if p.backref > p.groups {
		return p.fail("backreference to a missing group")
	}
	for _, n := range p.named {
		if !p.names[n] {
			return p.fail("backreference to a missing group name")
		}
	}
	return nil
}

func (p *ecmaParser) fail(why string) error {
	return errors.New(errECMASyntax.Error() + ": " + why + " at offset " + strconv.Itoa(p.pos))
}

func (p *ecmaParser) more() bool { return p.pos < len(p.src) }
func (p *ecmaParser) peek() byte { return p.src[p.pos] }
func (p *ecmaParser) eat(s string) bool {
	if strings.HasPrefix(p.src[p.pos:], s) {
		p.pos += len(s)
		return true
	}
	return false
}

func (p *ecmaParser) disjunction() error {
	for {
		if err := p.alternative(); err != nil {
			return err
		}
		if !p.eat("|") {
			return nil
		}
	}
}

func (p *ecmaParser) alternative() error {
	for p.more() && p.peek() != '|' && p.peek() != ')' {
		quantifiable, err := p.term()
		if err != nil {
			return err
		}
		if err := p.quantifier(quantifiable); err != nil {
			return err
		}
	}
	return nil
}

// term parses an assertion or an atom and reports whether a quantifier may follow it.
func (p *ecmaParser) term() (bool, error) {
	switch c := p.peek(); c {
	case '^', '$':
		p.pos++
		return false, nil
	case '.':
		p.pos++
		return true, nil
	case '(':
		return p.group()
	case '[':
		return true, p.class()
	case '\\':
		if p.eat(`\b`) || p.eat(`\B`) {
			return false, nil
		}
		p.pos++
		return true, p.atomEscape()
	case '*', '+', '?', '{', '}', ']':
		return false, p.fail("nothing to repeat or unpaired " + string(c))
	}
	_, size := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += size
	return true, nil
}

func (p *ecmaParser) group() (bool, error) {
	p.pos++ // (
	quantifiable := true
	switch {
	case p.eat("?:"):
	case p.eat("?="), p.eat("?!"), p.eat("?<="), p.eat("?<!"):
		quantifiable = false
	case p.eat("?<"):
		name, err := p.groupName()
		if err != nil {
			return false, err
		}
		if p.names[name] {
			return false, p.fail("duplicate group name")
		}
		p.names[name] = true
		p.groups++
	case p.more() && p.peek() == '?':
		return false, p.fail("unknown group kind")
	default:
		p.groups++
	}
	if err := p.disjunction(); err != nil {
		return false, err
	}
	if !p.eat(")") {
		return false, p.fail("missing )")
	}
	return quantifiable, nil
}

// groupName parses "name>" after "<".
func (p *ecmaParser) groupName() (string, error) {
	end := strings.IndexByte(p.src[p.pos:], '>')
	if end <= 0 {
		return "", p.fail("bad group name")
	}
	name := p.src[p.pos : p.pos+end]
	for i, r := range name {
		if !(r == '$' || r == '_' || unicode.IsLetter(r) || i > 0 && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r))) {
			return "", p.fail("bad group name")
		}
	}
	p.pos += end + 1
	return name, nil
}

func (p *ecmaParser) quantifier(quantifiable bool) error {
	if !p.more() {
		return nil
	}
	switch p.peek() {
	case '*', '+', '?':
		p.pos++
	case '{':
		p.pos++
		lo, ok := p.digits()
		if !ok {
			return p.fail("bad {} quantifier")
		}
		hi := lo
		if p.eat(",") {
			hi = -1
			if n, ok := p.digits(); ok {
				hi = n
			}
		}
		if !p.eat("}") || hi >= 0 && hi < lo {
			return p.fail("bad {} quantifier")
		}
	default:
		return nil
	}
	if !quantifiable {
		return p.fail("nothing to repeat")
	}
	p.eat("?")
	return nil
}

func (p *ecmaParser) digits() (int, bool) {
	start := p.pos
	for p.more() && isDigit(p.peek()) {
		p.pos++
	}
	n, _ := strconv.Atoi(p.src[start:p.pos])
	return n, p.pos > start
}

func (p *ecmaParser) atomEscape() error {
	if !p.more() {
		return p.fail("\\ at end of pattern")
	}
	c := p.peek()
	switch {
	case c >= '1' && c <= '9':
		n, _ := p.digits()
		p.backref = max(p.backref, n)
		return nil
	case c == 'k':
		p.pos++
		if !p.eat("<") {
			return p.fail(`\k without a group name`)
		}
		name, err := p.groupName()
		if err != nil {
			return err
		}
		p.named = append(p.named, name)
		return nil
	}
	_, err := p.characterEscape(false)
	return err
}

// characterEscape parses the escape after "\" and reports whether it stands for a set of
// characters (\d, \p{...}) rather than one.
func (p *ecmaParser) characterEscape(inClass bool) (bool, error) {
	c := p.peek()
	p.pos++
	switch {
	case strings.IndexByte("dDsSwW", c) >= 0:
		return true, nil
	case c == 'p' || c == 'P':
		if !p.eat("{") {
			return false, p.fail(`\p without {`)
		}
		end := strings.IndexByte(p.src[p.pos:], '}')
		if end <= 0 || strings.Trim(p.src[p.pos:p.pos+end], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_=") != "" {
			return false, p.fail(`bad \p{...}`)
		}
		p.pos += end + 1
		return true, nil
	case strings.IndexByte("fnrtv", c) >= 0:
	case c == 'c':
		if !p.more() || !isAlpha(p.peek()) {
			return false, p.fail(`\c without a letter`)
		}
		p.pos++
	case c == '0':
		if p.more() && isDigit(p.peek()) {
			return false, p.fail("octal escape")
		}
	case c == 'x':
		if !p.hex(2) {
			return false, p.fail(`bad \x escape`)
		}
	case c == 'u':
		if p.eat("{") {
			end := strings.IndexByte(p.src[p.pos:], '}')
			if end <= 0 {
				return false, p.fail(`bad \u{...} escape`)
			}
			n, err := strconv.ParseUint(p.src[p.pos:p.pos+end], 16, 32)
			if err != nil || n > unicode.MaxRune {
				return false, p.fail(`bad \u{...} escape`)
			}
			p.pos += end + 1
		} else if !p.hex(4) {
			return false, p.fail(`bad \u escape`)
		}
	case strings.IndexByte(`^$\.*+?()[]{}|/`, c) >= 0:
	case inClass && (c == '-' || c == 'b'):
	default:
		return false, p.fail(`unknown escape \` + string(c))
	}
	return false, nil
}

func (p *ecmaParser) hex(n int) bool {
	if p.pos+n > len(p.src) {
		return false
	}
	for i := 0; i < n; i++ {
		if !isHex(p.src[p.pos+i]) {
			return false
		}
	}
	p.pos += n
	return true
}

// class parses a character class; "[]" matches nothing and "[^]" anything, both valid.
func (p *ecmaParser) class() error {
	p.pos++ // [
	p.eat("^")
	for {
		if !p.more() {
			return p.fail("missing ]")
		}
		if p.eat("]") {
			return nil
		}
		lo, loSet, err := p.classAtom()
		if err != nil {
			return err
		}
		if p.more() && p.peek() == '-' && p.pos+1 < len(p.src) && p.src[p.pos+1] != ']' {
			p.pos++
			hi, hiSet, err := p.classAtom()
			if err != nil {
				return err
			}
			if loSet || hiSet {
				return p.fail("class escape in a range")
			}
			if lo > hi {
				return p.fail("range out of order")
			}
		}
	}
}

// classAtom parses one class member: its code point, or that it is a set such as \d.
func (p *ecmaParser) classAtom() (rune, bool, error) {
	if p.peek() != '\\' {
		r, size := utf8.DecodeRuneInString(p.src[p.pos:])
		p.pos += size
		return r, false, nil
	}
	p.pos++
	if !p.more() {
		return 0, false, p.fail("\\ at end of pattern")
	}
	start := p.pos
	isSet, err := p.characterEscape(true)
	if err != nil || isSet {
		return 0, isSet, err
	}
	return escapedRune(p.src[start:p.pos]), false, nil
}

// escapedRune is the code point a valid character escape (without its "\") stands for.
func escapedRune(esc string) rune {
	switch esc[0] {
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'v':
		return '\v'
	case 'b':
		return '\b'
	case '0':
		return 0
	case 'c':
		return rune(esc[1] % 32)
	case 'x', 'u':
		n, _ := strconv.ParseUint(strings.Trim(esc[1:], "{}"), 16, 32)
		return rune(n)
	}
	return rune(esc[0])
}
