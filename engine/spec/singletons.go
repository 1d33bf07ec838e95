package spec

import "github.com/j17-go/j17/engine/ident"

// otherKind is the identifier kind s has without being declared a singleton, if any.
func otherKind(s string) ident.Kind {
	_, k, err := ident.NewRules(nil).Normalize(ident.Key, s)
	if err != nil || k == ident.KindGlobal {
		return ident.KindNone
	}
	return k
}

// singletons checks the declared singletons. The parser accepts any list of strings; the naming
// guidance of the Identifiers page is reported as warnings.
func (l *loader) singletons(n *node, ptr string) {
	if !l.want(n, ptr, kindArray, "singletons") {
		return
	}
	for i, e := range n.elems {
		p := index(ptr, i)
		s, ok := l.str(e, p, "each singleton")
		if !ok {
			continue
		}
		if contains(l.s.singletons, s) {
			l.warnf(p, e.start, "singleton %q is declared twice; remove the repeated entry", s)
			continue
		}
		l.s.singletons = append(l.s.singletons, s)
		switch {
		case s == "":
			l.warnf(p, e.start, "singleton name is empty; use a name of 1 character or longer")
		case s == "global":
			l.warnf(p, e.start, "singleton \"global\" is implicit; remove it")
		case otherKind(s) != ident.KindNone:
			l.warnf(p, e.start, "singleton %q is also a valid %s, which makes the id ambiguous; pick another name", s, otherKind(s))
		case !isSlug(s):
			l.warnf(p, e.start, "singleton %q should be a URL-safe slug of letters, digits and '_'", s)
		}
	}
}

func isSlug(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
