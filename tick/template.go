package tick

// Template is a compiled implication or saga template: a JSON value whose
// strings starting with "$" (or "@.") are paths, with the operators concat,
// coalesce and merge (also $merge and {"$": path}) nested up to
// MaxTemplateDepth. A path ending in "?" that resolves to nothing or to null
// leaves its key (or array element) out.
type Template struct{ e expr }

// CompileTemplate compiles a template. The error is Errors.
func CompileTemplate(raw []byte, opts TemplateOptions) (*Template, error) {
	c := compiler{opts: opts, template: true}
	v, ok := c.parse(raw)
	if !ok {
		return nil, c.err()
	}
	t := c.templateValue(v)
	if err := c.err(); err != nil {
		return nil, err
	}
	return t, nil
}

// CompileTemplateValue compiles a template already parsed.
func CompileTemplateValue(v Value, opts TemplateOptions) (*Template, error) {
	c := compiler{opts: opts, template: true}
	t := c.templateValue(v)
	if err := c.err(); err != nil {
		return nil, err
	}
	return t, nil
}

func (c *compiler) templateValue(v Value) *Template {
	return &Template{e: c.expr(v, "", 0)}
}

// Eval computes the template. A missing result without error means the
// whole template was an optional path that found nothing.
func (t *Template) Eval(s *Scope) (Value, error) { return t.e.eval(s) }

// AppendJSON evaluates the template and appends its result's JSON to dst: the bytes
// Eval's result would write with Value.AppendJSON, and that result's kind (KindMissing, with
// dst as it was, where Eval gives the missing Value). Objects and arrays the template spells
// out are written as their members are evaluated, without building them: an implication's
// data is wanted as JSON, and building it first allocated an object per implied event. On an
// error, dst may hold part of the result.
func (t *Template) AppendJSON(dst []byte, s *Scope) ([]byte, Kind, error) {
	return t.e.appendJSON(dst, s)
}

// ReadsState reports whether evaluating the template may read the state: a path from "@"
// or "$.state". Callers that only need the state for templates can then skip reading it.
func (t *Template) ReadsState() bool { return t.e.readsState() }

// IsLiteral reports whether the template holds no path or operator, and
// Literal returns that value; useful for static checks such as cycle
// detection over literal aggregate types and ids.
func (t *Template) IsLiteral() bool { return t.e.kind == exLit }

// Literal returns the template's value when IsLiteral, else the missing Value.
func (t *Template) Literal() Value {
	if t.e.kind != exLit {
		return Value{}
	}
	return t.e.lit
}
