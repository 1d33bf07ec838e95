package schema

import (
	"errors"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// The IDNA2008 rules a U-label must satisfy (RFC 5891 section 5.4, RFC 5892). The Bidi rule of
// RFC 5893 is not checked.

type idnaProperty int

const (
	idnaPValid idnaProperty = iota
	idnaContextJ
	idnaContextO
	idnaDisallowed
	idnaUnassigned
)

// idnaExceptions is RFC 5892 section 2.6: code points whose property is fixed by hand.
var idnaExceptions = map[rune]idnaProperty{
	0x00DF: idnaPValid, 0x03C2: idnaPValid, 0x06FD: idnaPValid, 0x06FE: idnaPValid, 0x0F0B: idnaPValid, 0x3007: idnaPValid,
	0x00B7: idnaContextO, 0x0375: idnaContextO, 0x05F3: idnaContextO, 0x05F4: idnaContextO, 0x30FB: idnaContextO,
	0x0640: idnaDisallowed, 0x07FA: idnaDisallowed, 0x302E: idnaDisallowed, 0x302F: idnaDisallowed,
	0x3031: idnaDisallowed, 0x3032: idnaDisallowed, 0x3033: idnaDisallowed, 0x3034: idnaDisallowed,
	0x3035: idnaDisallowed, 0x303B: idnaDisallowed,
}

var (
	// assigned holds every general category; a code point in none is unassigned.
	assigned = []*unicode.RangeTable{unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs}
	// letterDigits is RFC 5892 category A.
	letterDigits = []*unicode.RangeTable{unicode.Ll, unicode.Lu, unicode.Lo, unicode.Nd, unicode.Lm, unicode.Mn, unicode.Mc}
	// ignorable is RFC 5892 category C, less the general categories that category A excludes anyway.
	ignorable = []*unicode.RangeTable{unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector, unicode.White_Space, unicode.Noncharacter_Code_Point}
)

// idnaPropertyOf derives a code point's property by the algorithm of RFC 5892 section 3.
func idnaPropertyOf(r rune) idnaProperty {
	if p, ok := idnaExceptions[r]; ok {
		return p
	}
	switch {
	case r >= 0x0660 && r <= 0x0669, r >= 0x06F0 && r <= 0x06F9:
		return idnaContextO
	case !unicode.In(r, assigned...):
		return idnaUnassigned
	case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
		return idnaPValid
	case r == 0x200C, r == 0x200D:
		return idnaContextJ
	case r >= 0x1100 && r <= 0x11FF, r >= 0xA960 && r <= 0xA97F, r >= 0xD7B0 && r <= 0xD7FF:
		return idnaDisallowed // old Hangul jamo
	case unstable(r), unicode.In(r, ignorable...):
		return idnaDisallowed
	case r >= 0x20D0 && r <= 0x20FF, r >= 0x1D100 && r <= 0x1D24F:
		return idnaDisallowed // ignorable blocks
	case unicode.In(r, letterDigits...):
		return idnaPValid
	}
	return idnaDisallowed
}

// unstable is RFC 5892 category B: NFKC(casefold(NFKC(r))) differs from r.
func unstable(r rune) bool {
	s := string(r)
	return norm.NFKC.String(cases.Fold().String(norm.NFKC.String(s))) != s
}

// checkULabel checks a decoded A-label.
func checkULabel(label []rune) error {
	if len(label) == 0 {
		return errors.New("empty label")
	}
	s := string(label)
	if !norm.NFC.IsNormalString(s) {
		return errors.New("label is not in NFC")
	}
	if len(label) >= 4 && label[2] == '-' && label[3] == '-' {
		return errors.New(`label has "--" in the third and fourth positions`)
	}
	if label[0] == '-' || label[len(label)-1] == '-' {
		return errors.New("label starts or ends with a hyphen")
	}
	if unicode.Is(unicode.M, label[0]) {
		return errors.New("label starts with a combining mark")
	}
	for i, r := range label {
		switch idnaPropertyOf(r) {
		case idnaPValid:
		case idnaContextJ:
			if !contextJ(label, i) {
				return errors.New("joiner not allowed in this context")
			}
		case idnaContextO:
			if !contextO(label, i) {
				return errors.New("code point not allowed in this context")
			}
		default:
			return errors.New("code point not allowed in a hostname")
		}
	}
	return nil
}

// contextJ applies the rules of RFC 5892 appendix A.1 and A.2.
func contextJ(label []rune, i int) bool {
	if i > 0 && norm.NFC.PropertiesString(string(label[i-1])).CCC() == 9 { // virama
		return true
	}
	if label[i] == 0x200D {
		return false
	}
	// ZERO WIDTH NON-JOINER between joining letters: (L|D) T* ZWNJ T* (R|D).
	before, after := false, false
	for j := i - 1; j >= 0; j-- {
		if t := joiningType(label[j]); t != 'T' {
			before = t == 'L' || t == 'D'
			break
		}
	}
	for j := i + 1; j < len(label); j++ {
		if t := joiningType(label[j]); t != 'T' {
			after = t == 'R' || t == 'D'
			break
		}
	}
	return before && after
}

// contextO applies the rules of RFC 5892 appendix A.3 to A.9.
func contextO(label []rune, i int) bool {
	r := label[i]
	switch {
	case r == 0x00B7: // MIDDLE DOT between two l
		return i > 0 && i+1 < len(label) && label[i-1] == 'l' && label[i+1] == 'l'
	case r == 0x0375: // GREEK LOWER NUMERAL SIGN before Greek
		return i+1 < len(label) && unicode.Is(unicode.Greek, label[i+1])
	case r == 0x05F3 || r == 0x05F4: // HEBREW GERESH and GERSHAYIM after Hebrew
		return i > 0 && unicode.Is(unicode.Hebrew, label[i-1])
	case r == 0x30FB: // KATAKANA MIDDLE DOT with Hiragana, Katakana or Han in the label
		for _, c := range label {
			if c != 0x30FB && unicode.In(c, unicode.Hiragana, unicode.Katakana, unicode.Han) {
				return true
			}
		}
		return false
	case r >= 0x0660 && r <= 0x0669: // ARABIC-INDIC DIGITS not mixed with extended ones
		return !containsRange(label, 0x06F0, 0x06F9)
	case r >= 0x06F0 && r <= 0x06F9:
		return !containsRange(label, 0x0660, 0x0669)
	}
	return false
}

func containsRange(label []rune, lo, hi rune) bool {
	for _, c := range label {
		if c >= lo && c <= hi {
			return true
		}
	}
	return false
}

// rightJoining are the right-joining (R) letters of the Arabic and Syriac blocks in
// ArabicShaping.txt; their other letters are dual-joining (D).
var rightJoining = &unicode.RangeTable{R16: []unicode.Range16{
	{0x0622, 0x0625, 1}, {0x0627, 0x0629, 2}, {0x062F, 0x0632, 1}, {0x0648, 0x0648, 1},
	{0x0671, 0x0673, 1}, {0x0675, 0x0677, 1}, {0x0688, 0x0699, 1}, {0x06C0, 0x06C0, 1},
	{0x06C3, 0x06CB, 1}, {0x06CD, 0x06CF, 2}, {0x06D2, 0x06D3, 1}, {0x06D5, 0x06D5, 1},
	{0x06EE, 0x06EF, 1}, {0x0710, 0x0710, 1}, {0x0715, 0x0719, 1}, {0x071E, 0x071E, 1},
	{0x0728, 0x072C, 2}, {0x072F, 0x072F, 1}, {0x074D, 0x074D, 1}, {0x0759, 0x075B, 1},
	{0x076B, 0x076C, 1}, {0x0771, 0x0771, 1}, {0x0773, 0x0774, 1}, {0x0778, 0x0779, 1},
}}

// joiningType approximates the Unicode Joining_Type the ZWNJ rule needs: T for marks and
// format characters, R or D for the letters of the joining scripts, U for everything else.
func joiningType(r rune) byte {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf):
		return 'T'
	case r == 0x0621 || r == 0x0674: // Arabic letters that never join
		return 'U'
	case unicode.Is(rightJoining, r):
		return 'R'
	case unicode.Is(unicode.L, r) && unicode.In(r, unicode.Arabic, unicode.Syriac, unicode.Nko, unicode.Mongolian, unicode.Mandaic):
		return 'D'
	}
	return 'U'
}
