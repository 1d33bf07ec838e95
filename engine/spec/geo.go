package spec

var (
	geoKeys     = []string{"type", "path"}
	geoTypeKeys = []string{"type", "properties"}
	// geoShapes are the shapes the Spec page names.
	geoShapes = []string{"point", "polygon"}
)

func (l *loader) geoTypes(n *node, ptr string) {
	if !l.want(n, ptr, kindObject, "geo_types") {
		return
	}
	for _, m := range n.members {
		p := join(ptr, m.key)
		what := "geo type " + quote(m.key)
		if !validName(m.key) {
			l.errorf(p, m.keyAt, "geo type name %q may use only letters, digits, '_' and '-'; rename it", m.key)
			continue
		}
		if !l.object(m.val, p, what, geoTypeKeys...) {
			continue
		}
		g := &GeoType{Name: m.key}
		if v := l.required(m.val, p, "type", what); v != nil {
			g.Type = l.shape(v, join(p, "type"))
		}
		if v := m.val.get("properties"); v != nil {
			g.Properties, _ = l.stringList(v, join(p, "properties"), "properties")
		}
		l.s.geoTypes[m.key] = g
	}
}

func (l *loader) shape(n *node, ptr string) string {
	s, ok := l.str(n, ptr, "type")
	if !ok {
		return ""
	}
	if !contains(geoShapes, s) {
		l.errorf(ptr, n.start, "geo type must be one of %s, not %q", quoteList(geoShapes), s)
		return ""
	}
	return s
}

// geo checks an event's geo block; its type is a shape or a declared geo type.
func (l *loader) geo(n *node, ptr string) *Geo {
	if !l.object(n, ptr, "geo", geoKeys...) {
		return nil
	}
	g := &Geo{}
	if v := l.required(n, ptr, "type", "geo"); v != nil {
		p := join(ptr, "type")
		if s, ok := l.str(v, p, "geo.type"); ok {
			if _, declared := l.s.geoTypes[s]; !declared && !contains(geoShapes, s) {
				l.errorf(p, v.start, "geo.type must be %s or a name declared in geo_types, not %q", quoteList(geoShapes), s)
			}
			g.Type = s
		}
	}
	if v := l.required(n, ptr, "path", "geo"); v != nil {
		g.Path, _ = l.path(v, join(ptr, "path"), "geo.path")
	}
	return g
}
