package control

// The environments of every instance. Each (instance, environment) pair has its own spec, data and
// keys.
const (
	EnvProd    = "prod"
	EnvStaging = "staging"
	EnvTest    = "test"
)

// Environments lists the valid environments in a fixed order.
var Environments = []string{EnvProd, EnvStaging, EnvTest}

// ValidEnvironment reports whether env is one of Environments.
func ValidEnvironment(env string) bool {
	return env == EnvProd || env == EnvStaging || env == EnvTest
}
