package control

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// A key resolved (and so remembered) before its revocation is refused by every resolution that
// starts after RevokeKey returns, even with other resolutions running throughout.
func TestResolvedKeyIsRevokedAtOnce(t *testing.T) {
	s, _ := openStore(t, t.TempDir())
	if _, err := s.CreateInstance("myapp"); err != nil {
		t.Fatal(err)
	}
	k, secret, err := s.CreateKey("myapp", "backend", ScopeWrite, EnvProd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, _, err := s.ResolveKey(secret); err != nil {
			t.Fatal(err)
		}
	}
	var revoked atomic.Bool
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				after := revoked.Load()
				_, _, err := s.ResolveKey(secret)
				if after && !errors.Is(err, ErrKeyRevoked) {
					t.Errorf("a resolution begun after the revocation got %v, want ErrKeyRevoked", err)
					return
				}
			}
		}()
	}
	if _, err := s.RevokeKey(k.ID); err != nil {
		t.Fatal(err)
	}
	revoked.Store(true)
	if _, _, err := s.ResolveKey(secret); !errors.Is(err, ErrKeyRevoked) {
		t.Errorf("after RevokeKey: got %v, want ErrKeyRevoked", err)
	}
	close(stop)
	wg.Wait()
}
