package main

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/j17-go/j17/engine/control"
)

const (
	defaultAdminEmail = "admin@localhost"
	bootstrapFile     = "bootstrap.txt"
	passwordLen       = 24
	passwordAlphabet  = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// bootstrapResult says how the operator of a newcomer logs in.
type bootstrapResult struct {
	// credentialsFile is the shell-sourceable file holding the generated email and password,
	// or "" when the operator's password came from the environment (or was set earlier).
	credentialsFile string
}

// bootstrap creates the first operator on an empty control store: from adminEmail and
// adminPassword when both are given, otherwise admin@localhost (or adminEmail) with a random
// password written to DATA/bootstrap.txt (mode 0600). The file's path is logged; the password
// never is.
func bootstrap(store *control.Store, c serveConfig, log *slog.Logger) (bootstrapResult, error) {
	path := filepath.Join(c.data, bootstrapFile)
	has, err := store.HasOperators()
	if err != nil {
		return bootstrapResult{}, err
	}
	if has {
		if _, err := os.Stat(path); err == nil {
			return bootstrapResult{credentialsFile: path}, nil
		}
		return bootstrapResult{}, nil
	}
	email, password := c.adminEmail, c.adminPassword
	if email == "" {
		email = defaultAdminEmail
	}
	var res bootstrapResult
	if password == "" {
		password = randomPassword()
		// The file is written before the account exists, so a crash in between leaves no account
		// whose password is lost; the next start simply makes both again.
		content := fmt.Sprintf("# j17 operator created at first start. Load it with: . %s\nJ17_ADMIN_EMAIL=%s\nJ17_ADMIN_PASSWORD=%s\n", path, email, password)
		if err := writeFileAtomic(path, []byte(content), 0o600); err != nil {
			return bootstrapResult{}, fmt.Errorf("write %s: %w", path, err)
		}
		res.credentialsFile = path
	}
	op, err := store.CreateOperator(email, password)
	if err != nil {
		return bootstrapResult{}, fmt.Errorf("create the first operator: %w", err)
	}
	if res.credentialsFile != "" {
		log.Info("created the first operator; its password is in the credentials file", "email", op.Email, "file", path)
	} else {
		log.Info("created the first operator from J17_ADMIN_EMAIL and J17_ADMIN_PASSWORD", "email", op.Email)
	}
	return res, nil
}

func randomPassword() string {
	out := make([]byte, 0, passwordLen)
	var buf [64]byte
	for len(out) < passwordLen {
		_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails on supported platforms.
		for _, b := range buf {
			// 248 = 4*62: rejection sampling keeps every character equally likely.
			if b < 248 && len(out) < passwordLen {
				out = append(out, passwordAlphabet[b%62])
			}
		}
	}
	return string(out)
}
