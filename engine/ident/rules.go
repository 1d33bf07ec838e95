package ident

import "strings"

// Global is the implicit singleton every aggregate type accepts without spec configuration.
const Global = "global"

// Rules applies the identifier rule with the singletons of one spec. The zero value knows only
// global.
type Rules struct {
	singletons map[string]bool // read-only after NewRules
}

// NewRules builds the rules for a spec whose top-level "singletons" list is names. The spec
// parser accepts any strings, so no naming convention is enforced here; only the empty name is
// dropped, because it could never be addressed in a URL and would make an empty actor id valid.
func NewRules(names []string) Rules {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		if n != "" {
			m[n] = true
		}
	}
	return Rules{singletons: m}
}

// Normalize returns the canonical form of id, read from field f, and its kind. The same rule
// serves aggregate keys, actor ids (of non-system actors) and target ids; f only names the field
// in the error. Every error is an *Error.
func (r Rules) Normalize(f Field, id string) (string, Kind, error) {
	if id == Global {
		return id, KindGlobal, nil
	}
	if r.singletons[id] {
		return id, KindSingleton, nil
	}
	switch {
	case id == "":
		return "", KindNone, &Error{Field: f, ID: id, Expected: KindNone, Err: ErrEmpty}
	case uuidShaped(id):
		c, err := canonicalUUID(id)
		if err != nil {
			return "", KindNone, &Error{Field: f, ID: id, Expected: KindUUID, Err: err}
		}
		return c, KindUUID, nil
	case strings.IndexByte(id, ':') >= 0:
		c, err := canonicalTagged(id)
		if err != nil {
			return "", KindNone, &Error{Field: f, ID: id, Expected: KindTagged, Err: err}
		}
		return c, KindTagged, nil
	case len(id) == humaneLen:
		c, err := canonicalHumane(id)
		if err != nil {
			return "", KindNone, &Error{Field: f, ID: id, Expected: KindHumane, Err: err}
		}
		return c, KindHumane, nil
	case uuidMisspelled(id):
		return "", KindNone, &Error{Field: f, ID: id, Expected: KindUUID, Err: ErrUUIDFormat}
	}
	return "", KindNone, &Error{Field: f, ID: id, Expected: KindNone, Err: ErrUnrecognized}
}

// NormalizeActor checks metadata.actor.id for an actor of type actorType: a system_ type takes
// its id from the system agent allowlist, any other type follows the general rule. Whether the
// type itself is allowed is the spec's business (agent_types), not this package's.
func (r Rules) NormalizeActor(actorType, id string) (string, Kind, error) {
	if IsSystemActorType(actorType) {
		a, err := NormalizeSystemAgent(id)
		if err != nil {
			return "", KindNone, err
		}
		return a, KindSystemAgent, nil
	}
	return r.Normalize(ActorID, id)
}
