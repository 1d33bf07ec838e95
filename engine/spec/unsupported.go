package spec

// feature is a part of the spec language that parses but that this server cannot run.
type feature int

const (
	featureWASMHandler feature = iota
	featureWASMImplication
	featureBinaryContainer
	featureRuntimeContainer
)

var featureMessages = map[feature]string{
	featureWASMHandler:      "WASM handlers are not supported by this server yet; use a tick handler",
	featureWASMImplication:  "WASM implications are not supported by this server yet; use emit, map, schedule or pipeline",
	featureBinaryContainer:  "binary_container implications are not supported in a self-hosted single binary; use emit, map, schedule or pipeline",
	featureRuntimeContainer: "runtime_container implications are not supported in a self-hosted single binary; use emit, map, schedule or pipeline",
}

// unsupportedUse is one well-formed use of an unsupported feature.
type unsupportedUse struct {
	ptr     string
	off     int
	feature feature
}

// rejectUnsupported is the one rule that refuses features this binary cannot execute. Their
// configurations are fully validated and compiled into the Spec before this runs, so removing
// this call is all it takes to accept them once a runtime exists.
func rejectUnsupported(c *checker, uses []unsupportedUse) {
	for _, u := range uses {
		c.errorf(u.ptr, u.off, "%s", featureMessages[u.feature])
	}
}
