package spec

var moduleKeys = []string{"never_cache", "cache", "sagas"}

func (l *loader) modules(n *node, ptr string) {
	if !l.object(n, ptr, "modules", moduleKeys...) {
		return
	}
	m := &l.s.modules
	if v := n.get("never_cache"); v != nil {
		m.HasNeverCache = true
		m.NeverCache = l.cacheList(v, join(ptr, "never_cache"), "never_cache")
	}
	if v := n.get("cache"); v != nil {
		m.HasCache = true
		p := join(ptr, "cache")
		m.Cache = l.cacheList(v, p, "cache")
		if m.HasNeverCache {
			l.warnf(p, n.keyOffset("cache"), "modules.cache is ignored because modules.never_cache is present; remove it")
		} else {
			l.warnf(p, n.keyOffset("cache"), "modules.cache is deprecated and will be removed before 1.0: every type is cached by default, list exclusions in modules.never_cache")
		}
	}
	if v := n.get("sagas"); v != nil {
		l.sagas(v, join(ptr, "sagas"))
	}
}

// cacheList checks a list of aggregate types; a name the spec does not define has no effect,
// which is worth a warning but not a failed deploy.
func (l *loader) cacheList(n *node, ptr, what string) []string {
	list, _ := l.stringList(n, ptr, what)
	for i, s := range list {
		if _, ok := l.names[s]; !ok {
			l.warnf(index(ptr, i), n.elems[i].start, "modules.%s lists %q, which is not an aggregate type; it has no effect", what, s)
		}
	}
	return list
}
