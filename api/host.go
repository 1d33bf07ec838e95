package api

import (
	"net"
	"strings"

	"github.com/j17-go/j17/engine/control"
)

// hostTarget is the (instance name, environment) that a host name designates under
// --base-domain host routing.
type hostTarget struct {
	name string
	env  string
}

// targetOfHost maps "<name>.<base>" to prod, "<name>-staging.<base>" to staging and
// "<name>-test.<base>" to test. Other hosts (an IP address, the bare base domain, a deeper
// subdomain) designate nothing, and the credentials alone decide. The host is copied only when
// host routing is on.
func (s *Server) targetOfHost(hostBytes []byte) (hostTarget, bool) {
	if s.baseDomain == "" {
		return hostTarget{}, false
	}
	host := string(hostBytes)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	label, ok := strings.CutSuffix(host, "."+s.baseDomain)
	if !ok || label == "" || strings.Contains(label, ".") {
		return hostTarget{}, false
	}
	for _, env := range []string{control.EnvStaging, control.EnvTest} {
		if name, ok := strings.CutSuffix(label, "-"+env); ok && name != "" {
			return hostTarget{name: name, env: env}, true
		}
	}
	return hostTarget{name: label, env: control.EnvProd}, true
}

// envTitle names an environment in messages, as the Authentication page does ("Staging key
// cannot access production").
func envTitle(env string, capital bool) string {
	word := env
	if env == control.EnvProd {
		word = "production"
	}
	if capital {
		return strings.ToUpper(word[:1]) + word[1:]
	}
	return word
}
