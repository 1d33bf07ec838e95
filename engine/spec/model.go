package spec

import (
	"time"

	"github.com/j17-go/j17/engine/schema"
	"github.com/j17-go/j17/tick"
)

// AggregateType is one entry of aggregate_types.
type AggregateType struct {
	Name string
	// Events by event type. Read-only, like everything reachable from a Spec.
	Events map[string]*Event
	// EventTypes lists the event types in the order the document declares them.
	EventTypes []string
	// OnTombstone is the transitive erasure rule; Configured is false when the spec has none.
	OnTombstone OnTombstone
}

// Event is one event type of an aggregate type.
type Event struct {
	Aggregate string
	Type      string
	// Reserved is true for event types starting with '_': they have no schema and cannot be
	// written through the API.
	Reserved bool
	// Schema validates event data; nil for reserved event types.
	Schema *schema.Schema
	// Handler is the compiled tick handler; nil when the event has none (a reserved event type
	// that omits it, or a WASM handler).
	Handler *tick.Handler
	// WASM is the WASM handler configuration when the handler is {"wasm": ...}.
	WASM *WASMConfig
	// AllowSkipOCC lets writers of this event type send metadata.skip_occ.
	AllowSkipOCC bool
	// Implications run, in order, when an event of this type is written.
	Implications []*Implication
	// ImplicationsReadState says that one of Implications may read the state of the aggregate
	// written to ("@", "$.state"). ChainReadsState says the same of them, of the implications of
	// any event type they imply in the same request, or of a saga such an implied event starts
	// (it keeps a snapshot of its aggregate's state). A write needs the state before the request
	// (and the internal OCC that keeps it current) only when ChainReadsState.
	ImplicationsReadState, ChainReadsState bool
	// Geo attaches a location to aggregates of this type; nil when absent.
	Geo *Geo
}

// ImplicationKind names the seven implication types of the Implications reference.
type ImplicationKind string

// The implication kinds, named by their key in the spec.
const (
	KindEmit             ImplicationKind = "emit"
	KindMap              ImplicationKind = "map"
	KindSchedule         ImplicationKind = "schedule"
	KindPipeline         ImplicationKind = "pipeline"
	KindWASM             ImplicationKind = "wasm"
	KindBinaryContainer  ImplicationKind = "binary_container"
	KindRuntimeContainer ImplicationKind = "runtime_container"
)

// Implication is one entry of an event's implications (or one pipeline step). Exactly the field
// matching Kind is set.
type Implication struct {
	Kind ImplicationKind
	// Pointer locates the implication in the spec document, for error messages.
	Pointer string
	// Condition gates the implication; nil means always.
	Condition *tick.Predicate

	Emit             *Emit
	Map              *MapImplication
	Schedule         *Schedule
	Pipeline         []*Implication
	WASM             *WASMConfig
	BinaryContainer  *BinaryContainer
	RuntimeContainer *RuntimeContainer
}

// Emit is an emit template: the event an implication or a saga step writes.
type Emit struct {
	AggregateType string
	EventType     string
	// ID resolves to the target aggregate id: a literal or a path.
	ID *tick.Template
	// Data resolves to the event data; nil means {}.
	Data *tick.Template
}

// MapImplication emits one event per element of an array.
type MapImplication struct {
	In        tick.Path
	As        string
	Condition *tick.Predicate
	Emit      *Emit
}

// Schedule emits an event after Delay unless a CancelOn event is written first.
type Schedule struct {
	Delay    time.Duration
	Emit     *Emit
	CancelOn []CancelOn
}

// CancelOn is an event pattern that cancels a pending scheduled event.
type CancelOn struct {
	AggregateType string
	EventType     string
	ID            *tick.Template
}

// Mode of a WASM or container implication.
type Mode string

// Implication modes.
const (
	ModeEmit      Mode = "emit"
	ModeTransform Mode = "transform"
)

// WASMConfig is a WASM handler or implication: a blob and the function to call.
type WASMConfig struct {
	BlobName   string
	Entrypoint string
	// Timeout is set for handlers only (default 100ms).
	Timeout time.Duration
	// Mode is set for implications only (default emit).
	Mode Mode
}

// Default WASM entry points and handler timeout of the WASM Handlers page.
const (
	DefaultHandlerEntrypoint     = "apply_handler"
	DefaultImplicationEntrypoint = "compute_implications"
	DefaultWASMTimeout           = 100 * time.Millisecond
)

// BinaryContainer is a pre-built executable image implication.
type BinaryContainer struct {
	Image string
	Mode  Mode
}

// RuntimeContainer is a code-plus-lockfile implication.
type RuntimeContainer struct {
	Runtime    string
	Entrypoint string
	Mode       Mode
}

// Geo attaches a geographic value of an event to its aggregate.
type Geo struct {
	Type string
	Path tick.Path
}

// GeoType is one entry of geo_types.
type GeoType struct {
	Name       string
	Type       string
	Properties []string
}

// TombstoneRule is what a transitive tombstone does to a stream in which the erased entity
// appears in one role.
type TombstoneRule string

// Tombstone rules of the Tombstones page.
const (
	Cascade  TombstoneRule = "cascade"
	Preserve TombstoneRule = "preserve"
)

// OnTombstone is an aggregate type's onTombstone block. A role left out preserves.
type OnTombstone struct {
	Configured bool
	Actor      TombstoneRule
	Target     TombstoneRule
}

// Modules is the modules block.
type Modules struct {
	// NeverCache lists aggregate types excluded from caching.
	NeverCache []string
	// Cache is the deprecated opt-in list; it applies only when NeverCache is absent.
	Cache []string
	// HasNeverCache and HasCache tell an absent list from an empty one.
	HasNeverCache bool
	HasCache      bool
	// Sagas in document order.
	Sagas []*Saga
}

// Saga is one entry of modules.sagas.
type Saga struct {
	Name       string
	Trigger    SagaTrigger
	Steps      []*SagaStep
	OnComplete *Emit
	OnFailed   *Emit
}

// SagaTrigger is the event that starts a saga.
type SagaTrigger struct {
	AggregateType string
	EventType     string
}

// SagaStep is one step of a saga.
type SagaStep struct {
	Name       string
	Condition  *tick.Predicate
	Emit       *Emit
	Await      *SagaAwait
	Compensate *Emit
	// Timeout is required with Await, zero otherwise.
	Timeout time.Duration
}

// SagaAwait names the events that complete a waiting step.
type SagaAwait struct {
	AggregateType string
	EventTypes    []string
}

// Projection is one entry of the top-level projections, in the shape of the Projections guide.
type Projection struct {
	Name    string
	ForEach string
	Sources []ProjectionSource
	Include []ProjectionInclude
	// Select is the select object as written; its paths have been checked.
	Select []byte
}

// ProjectionSource is one named source of a projection.
type ProjectionSource struct {
	Name string
	Type string
	// ID is "$key", a literal id, or a path (which may use [*] in array mode).
	ID    string
	IsKey bool
	Path  tick.Path
	Array bool
}

// ProjectionInclude binds a global singleton aggregate.
type ProjectionInclude struct {
	Name string
	Type string
	ID   string
}
