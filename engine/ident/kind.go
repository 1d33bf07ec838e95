package ident

// Kind is what an id turned out to be, or, in an *Error, what its shape called for.
type Kind uint8

const (
	KindNone        Kind = iota // no kind: the zero value, and an *Error's Expected when no single kind fits
	KindUUID                    // a v4 or v5 UUID, lowercase
	KindHumane                  // a 9-character Crockford base32 code, uppercase
	KindGlobal                  // the implicit singleton "global"
	KindSingleton               // a singleton the spec declares
	KindTagged                  // <uuid>:<tag>
	KindSystemAgent             // an id from the system_agent allowlist
)

// String names the kind as error messages and logs do.
func (k Kind) String() string {
	switch k {
	case KindUUID:
		return "UUID (v4 or v5)"
	case KindHumane:
		return "humane code"
	case KindGlobal:
		return "global singleton"
	case KindSingleton:
		return "declared singleton"
	case KindTagged:
		return "tagged UUID"
	case KindSystemAgent:
		return "system agent id"
	default:
		return "identifier"
	}
}

// IsSingleton reports whether the id names a singleton: reads of a singleton answer 200 with
// empty data before its first write, where any other id answers 404.
func (k Kind) IsSingleton() bool { return k == KindGlobal || k == KindSingleton }

// Field is where an id came from; it decides the path of a 422 answer.
type Field uint8

const (
	Key      Field = iota // the aggregate key, the {id} of the URL
	ActorID               // metadata.actor.id
	TargetID              // metadata.target.id
)

// Path is the field's path as the error envelope spells it.
func (f Field) Path() string {
	switch f {
	case ActorID:
		return "metadata.actor.id"
	case TargetID:
		return "metadata.target.id"
	default:
		return "key"
	}
}
