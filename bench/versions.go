package bench

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// versions reports the Go toolchain and each server's own account of its version.
func versions(cfg Config) map[string]string {
	v := map[string]string{"go": runtime.Version(), "j17 commit": cfg.Commit}
	ask := func(name string, args ...string) {
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil {
			return
		}
		v[name] = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	ask("redis-server", cfg.RedisBin, "--version")
	ask("postgres", filepath.Join(cfg.PostgresBin, "postgres"), "--version")
	return v
}
