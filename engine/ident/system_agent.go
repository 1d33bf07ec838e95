package ident

import "strings"

// SystemAgentType is the reserved actor type of platform-internal writers.
const SystemAgentType = "system_agent"

// The system agent ids identifiers.md allows when actor.type is system_*.
const (
	EventScheduler   = "event_scheduler"    // fires scheduled events
	TestDataImporter = "test_data_importer" // injects test data outside production
	SagaCoordinator  = "saga_coordinator"   // reserved for saga coordination
	SagaCompensator  = "saga_compensator"   // reserved for saga compensation
)

// IsSystemActorType reports whether actorType is in the reserved system_ prefix, whose actors
// use the allowlist instead of the general identifier rule.
func IsSystemActorType(actorType string) bool {
	return strings.HasPrefix(actorType, "system_")
}

// NormalizeSystemAgent checks the id of a system_ actor against the allowlist. The match is
// exact: the general rule, and so its case folding, does not apply. Its error is an *Error
// for metadata.actor.id.
func NormalizeSystemAgent(id string) (string, error) {
	switch id {
	case EventScheduler, TestDataImporter, SagaCoordinator, SagaCompensator:
		return id, nil
	}
	return "", &Error{Field: ActorID, ID: id, Expected: KindSystemAgent, Err: ErrSystemAgent}
}
