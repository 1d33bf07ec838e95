package control

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// openStore opens a store in a temporary directory; it is closed when the test ends.
func openStore(t *testing.T, dir string) (*Store, *testClock) {
	t.Helper()
	clock := &testClock{now: time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)}
	s, err := Open(filepath.Join(dir, "control.db"), Options{Clock: clock, BcryptCost: bcrypt.MinCost, MaxErrorsPerPair: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, clock
}

func TestInstanceNames(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"myapp", true},
		{"my-app-2", true},
		{"a", true},
		{"9lives", true},
		{strings.Repeat("a", 63), true},
		{strings.Repeat("a", 64), false},
		{"", false},
		{"MyApp", false},
		{"my_app", false},
		{"-myapp", false},
		{"myapp-", false},
		{"my.app", false},
		{"myapp-staging", false},
		{"myapp-test", false},
		{"a50e8400-e29b-41d4-a716-446655440000", false},
	}
	for _, c := range cases {
		err := ValidateName(c.name)
		if (err == nil) != c.ok {
			t.Errorf("ValidateName(%q): got %v, want ok=%v", c.name, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateName(%q): got %v, want ErrInvalidName", c.name, err)
		}
	}
}

func TestInstances(t *testing.T) {
	s, _ := openStore(t, t.TempDir())
	a, err := s.CreateInstance("myapp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateInstance("myapp"); !errors.Is(err, ErrNameTaken) {
		t.Errorf("second myapp: got %v, want ErrNameTaken", err)
	}
	if _, err := s.CreateInstance("zeta"); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{a.ID, strings.ToUpper(a.ID), "myapp"} {
		got, err := s.Instance(ref)
		if err != nil || got != a {
			t.Errorf("Instance(%q): got %+v, %v; want %+v", ref, got, err, a)
		}
	}
	if _, err := s.Instance("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Instance(nope): got %v, want ErrNotFound", err)
	}
	all, err := s.Instances()
	if err != nil || len(all) != 2 || all[0].Name != "myapp" || all[1].Name != "zeta" {
		t.Errorf("Instances: got %+v, %v", all, err)
	}
}

func TestOperators(t *testing.T) {
	s, _ := openStore(t, t.TempDir())
	if has, _ := s.HasOperators(); has {
		t.Fatal("fresh store has operators")
	}
	op, err := s.CreateOperator("Admin@Example.com", "pw")
	if err != nil {
		t.Fatal(err)
	}
	if has, _ := s.HasOperators(); !has {
		t.Fatal("HasOperators: got false after CreateOperator")
	}
	if _, err := s.CreateOperator("admin@example.com", "other"); !errors.Is(err, ErrEmailTaken) {
		t.Errorf("duplicate email: got %v, want ErrEmailTaken", err)
	}
	if got, err := s.Authenticate("admin@example.com", "pw"); err != nil || got.ID != op.ID {
		t.Errorf("Authenticate: got %+v, %v", got, err)
	}
	for _, c := range []struct{ email, pw string }{{"admin@example.com", "wrong"}, {"nobody@example.com", "pw"}, {"admin@example.com", ""}} {
		if _, err := s.Authenticate(c.email, c.pw); !errors.Is(err, ErrBadCredentials) {
			t.Errorf("Authenticate(%q, %q): got %v, want ErrBadCredentials", c.email, c.pw, err)
		}
	}
}

func TestSpecVersions(t *testing.T) {
	s, _ := openStore(t, t.TempDir())
	inst, _ := s.CreateInstance("myapp")
	if _, err := s.Spec("myapp", EnvProd, 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Spec before deploy: got %v, want ErrNotFound", err)
	}
	var seen []int
	for i := 1; i <= 3; i++ {
		doc := fmt.Sprintf(`{"v":%d}`, i)
		v, err := s.DeploySpec("myapp", EnvProd, "op", func(prev *SpecVersion) ([]byte, error) {
			if prev == nil {
				seen = append(seen, 0)
			} else {
				seen = append(seen, prev.Version)
			}
			return []byte(doc), nil
		})
		if err != nil || v.Version != i || v.InstanceID != inst.ID {
			t.Fatalf("deploy %d: got %+v, %v", i, v, err)
		}
	}
	if fmt.Sprint(seen) != "[0 1 2]" {
		t.Errorf("build saw predecessors %v, want [0 1 2]", seen)
	}
	reject := errors.New("no")
	if _, err := s.DeploySpec("myapp", EnvProd, "op", func(*SpecVersion) ([]byte, error) { return nil, reject }); !errors.Is(err, reject) {
		t.Errorf("rejected deploy: got %v", err)
	}
	cur, err := s.Spec(inst.ID, EnvProd, 0)
	if err != nil || cur.Version != 3 || string(cur.Document) != `{"v":3}` {
		t.Errorf("current spec: got %+v, %v; want version 3", cur, err)
	}
	old, err := s.Spec("myapp", EnvProd, 1)
	if err != nil || string(old.Document) != `{"v":1}` {
		t.Errorf("version 1: got %+v, %v", old, err)
	}
	// Environments do not share versions.
	if _, err := s.Spec("myapp", EnvStaging, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("staging: got %v, want ErrNotFound", err)
	}
	v, err := s.DeploySpec("myapp", EnvStaging, "op", func(prev *SpecVersion) ([]byte, error) {
		if prev != nil {
			t.Errorf("staging's first deploy saw predecessor %d", prev.Version)
		}
		return []byte(`{}`), nil
	})
	if err != nil || v.Version != 1 {
		t.Errorf("staging deploy: got %+v, %v", v, err)
	}
	if _, err := s.DeploySpec("myapp", "dev", "op", nil); !errors.Is(err, ErrInvalidEnvironment) {
		t.Errorf("deploy to dev: got %v, want ErrInvalidEnvironment", err)
	}
}

func TestKeys(t *testing.T) {
	s, clock := openStore(t, t.TempDir())
	inst, _ := s.CreateInstance("myapp")
	k, secret, err := s.CreateKey("myapp", "backend", ScopeWrite, EnvStaging)
	if err != nil {
		t.Fatal(err)
	}
	if env, err := ParseKey(secret); err != nil || env != EnvStaging || !strings.HasPrefix(secret, "j17_0_staging_") {
		t.Fatalf("secret %q: env %q, %v", secret, env, err)
	}
	if !strings.HasPrefix(secret, k.Prefix) || len(k.Prefix) != len("j17_0_staging_")+keyShownLen {
		t.Errorf("prefix %q of %q", k.Prefix, secret)
	}
	got, gotInst, err := s.ResolveKey(secret)
	if err != nil || got.ID != k.ID || got.InstanceID != inst.ID || got.Scope != ScopeWrite || got.Environment != EnvStaging || gotInst != inst {
		t.Errorf("ResolveKey: got %+v, %+v, %v", got, gotInst, err)
	}
	malformed := []string{"", "j17_0_staging_", "j17_0_dev_" + strings.Repeat("a", keySecretLen), "j17_1_prod_" + strings.Repeat("a", keySecretLen), secret + "x"}
	// Each byte just outside the digits and the two alphabets, and one that is not ASCII.
	for _, c := range []byte("/:@[`{!\xe9") {
		malformed = append(malformed, secret[:len(secret)-1]+string([]byte{c}))
	}
	for _, bad := range malformed {
		if _, _, err := s.ResolveKey(bad); !errors.Is(err, ErrKeyMalformed) {
			t.Errorf("ResolveKey(%q): got %v, want ErrKeyMalformed", bad, err)
		}
	}
	unknown := secret[:len(secret)-1] + map[bool]string{true: "b", false: "a"}[secret[len(secret)-1] == 'a']
	if _, _, err := s.ResolveKey(unknown); !errors.Is(err, ErrKeyUnknown) {
		t.Errorf("unknown key: got %v, want ErrKeyUnknown", err)
	}

	next, nextSecret, err := s.RotateKey(k.ID)
	if err != nil || next.ID == k.ID || next.Name != "backend" || next.Scope != ScopeWrite || next.Environment != EnvStaging {
		t.Fatalf("RotateKey: got %+v, %v", next, err)
	}
	if _, _, err := s.ResolveKey(secret); !errors.Is(err, ErrKeyRevoked) {
		t.Errorf("rotated key: got %v, want ErrKeyRevoked", err)
	}
	if _, _, err := s.RotateKey(k.ID); !errors.Is(err, ErrKeyRevoked) {
		t.Errorf("rotate a rotated key: got %v, want ErrKeyRevoked", err)
	}
	keys, _ := s.Keys("myapp")
	for _, old := range keys {
		if old.ID == k.ID && old.ReplacedBy != next.ID {
			t.Errorf("rotated key: ReplacedBy %q, want %q", old.ReplacedBy, next.ID)
		}
	}

	if _, err := s.ScheduleRevocation(next.ID, clock.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ResolveKey(nextSecret); err != nil {
		t.Errorf("before revoke_at: got %v, want the key to work", err)
	}
	clock.Advance(time.Hour)
	if _, _, err := s.ResolveKey(nextSecret); !errors.Is(err, ErrKeyRevoked) {
		t.Errorf("at revoke_at: got %v, want ErrKeyRevoked", err)
	}

	third, thirdSecret, _ := s.CreateKey(inst.ID, "reader", ScopeRead, EnvProd)
	if _, err := s.RevokeKey(third.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ResolveKey(thirdSecret); !errors.Is(err, ErrKeyRevoked) {
		t.Errorf("revoked key: got %v, want ErrKeyRevoked", err)
	}
	if _, err := s.RevokeKey("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("revoke unknown: got %v, want ErrNotFound", err)
	}
	if _, _, err := s.CreateKey("myapp", "x", "admin", EnvProd); !errors.Is(err, ErrInvalidScope) {
		t.Errorf("scope admin: got %v, want ErrInvalidScope", err)
	}
	if _, _, err := s.CreateKey("myapp", "x", ScopeRead, "dev"); !errors.Is(err, ErrInvalidEnvironment) {
		t.Errorf("environment dev: got %v, want ErrInvalidEnvironment", err)
	}
	other, _ := s.CreateInstance("other")
	if _, _, err := s.CreateKey(other.ID, "x", ScopeRead, EnvProd); err != nil {
		t.Fatal(err)
	}
	keys, err = s.Keys("myapp")
	if err != nil || len(keys) != 3 {
		t.Errorf("Keys(myapp): got %d keys, %v; want 3 (other's key excluded)", len(keys), err)
	}
}

func TestSecretsAreRandomAndUniform(t *testing.T) {
	seen := map[string]bool{}
	counts := map[byte]int{}
	for i := 0; i < 2000; i++ {
		s := newSecret(EnvProd)
		if seen[s] {
			t.Fatalf("secret %q drawn twice", s)
		}
		seen[s] = true
		for j := len(s) - keySecretLen; j < len(s); j++ {
			counts[s[j]]++
		}
	}
	// 64000 characters over 62 symbols: about 1032 each; a modulo bias or a stuck byte would
	// push some symbol far outside this band.
	for i := 0; i < len(base62); i++ {
		if n := counts[base62[i]]; n < 850 || n > 1250 {
			t.Errorf("symbol %q drawn %d times, want about 1032", base62[i], n)
		}
	}
}

func TestErrorRecords(t *testing.T) {
	s, _ := openStore(t, t.TempDir())
	for i := 0; i < 5; i++ {
		if err := s.RecordError(ErrorRecord{ID: fmt.Sprintf("e%d", i), InstanceID: "i1", Environment: EnvProd, Message: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordError(ErrorRecord{ID: "s0", InstanceID: "i1", Environment: EnvStaging}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, true, true, true} {
		_, err := s.ErrorRecord("i1", EnvProd, fmt.Sprintf("e%d", i))
		if (err == nil) != want {
			t.Errorf("e%d: got %v, want kept=%v (bound 3)", i, err, want)
		}
	}
	if r, err := s.ErrorRecord("i1", EnvStaging, "s0"); err != nil || r.Time.IsZero() {
		t.Errorf("s0: got %+v, %v", r, err)
	}
	if _, err := s.ErrorRecord("i1", EnvProd, "s0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("s0 through prod: got %v, want ErrNotFound", err)
	}
}

func TestReopenKeepsRecords(t *testing.T) {
	dir := t.TempDir()
	s, _ := openStore(t, dir)
	inst, _ := s.CreateInstance("myapp")
	_, secret, _ := s.CreateKey("myapp", "k", ScopeRead, EnvProd)
	if _, err := Open(filepath.Join(dir, "control.db"), Options{}); !errors.Is(err, ErrStoreLocked) {
		t.Errorf("second open: got %v, want ErrStoreLocked", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, _ := openStore(t, dir)
	if got, err := s2.Instance("myapp"); err != nil || got.ID != inst.ID {
		t.Errorf("after reopen: got %+v, %v", got, err)
	}
	if _, _, err := s2.ResolveKey(secret); err != nil {
		t.Errorf("key after reopen: %v", err)
	}
}
