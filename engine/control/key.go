package control

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/j17-go/j17/engine/ident"
)

// Key scopes.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
)

// API key format: "j17_" version "_" environment "_" secret, the secret being keySecretLen
// base62 characters drawn uniformly from crypto/rand (about 190 bits). Part of the public key
// format; do not change.
const (
	keyPrefix    = "j17_0_"
	keySecretLen = 32
	// keyShownLen is how many characters of the secret a key listing shows, enough to tell keys
	// apart while leaving over 160 bits unknown.
	keyShownLen = 4
	base62      = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// Key is an API key record. The secret itself is never stored.
type Key struct {
	ID          string `json:"id"`
	InstanceID  string `json:"instance_id"`
	Name        string `json:"name"`
	Scope       string `json:"scope"`
	Environment string `json:"environment"`
	// Prefix is the start of the secret, for telling keys apart in listings.
	Prefix    string     `json:"prefix"`
	CreatedAt time.Time  `json:"created_at"`
	RevokeAt  *time.Time `json:"revoke_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	// ReplacedBy is the id of the key that a rotation created in place of this one.
	ReplacedBy string `json:"replaced_by,omitempty"`
}

// Revoked reports whether the key no longer works at now.
func (k Key) Revoked(now time.Time) bool {
	return k.RevokedAt != nil || k.RevokeAt != nil && !now.Before(*k.RevokeAt)
}

type keyRecord struct {
	Key
	Hash []byte `json:"hash"`
}

// hashKey digests a key secret. A single SHA-256 is enough because the secret holds about 190
// random bits: no dictionary or brute-force search can invert it, so the work factor of a
// password hash buys nothing, while a deterministic digest lets every request find its key by
// one index lookup instead of comparing against every stored hash.
func hashKey(secret string) []byte {
	sum := sha256.Sum256([]byte(secret))
	return sum[:]
}

func newSecret(env string) string {
	var b strings.Builder
	b.Grow(len(keyPrefix) + len(env) + 1 + keySecretLen)
	b.WriteString(keyPrefix)
	b.WriteString(env)
	b.WriteByte('_')
	var buf [64]byte
	for n := 0; n < keySecretLen; {
		_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails on supported platforms.
		for _, c := range buf {
			// Rejection sampling keeps the draw uniform: 248 = 4*62.
			if c < 248 && n < keySecretLen {
				b.WriteByte(base62[c%62])
				n++
			}
		}
	}
	return b.String()
}

// ParseKey splits a key string into its environment, or reports ErrKeyMalformed.
func ParseKey(secret string) (env string, err error) {
	rest, ok := strings.CutPrefix(secret, keyPrefix)
	if !ok {
		return "", ErrKeyMalformed
	}
	env, random, ok := strings.Cut(rest, "_")
	if !ok || !ValidEnvironment(env) || len(random) != keySecretLen {
		return "", ErrKeyMalformed
	}
	for i := 0; i < len(random); i++ {
		if c := random[i]; !('0' <= c && c <= '9' || 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z') {
			return "", ErrKeyMalformed
		}
	}
	return env, nil
}

// insertKeyTx stores k under a fresh secret, sets k.Prefix, and returns the secret.
func insertKeyTx(tx *bolt.Tx, k *Key) (string, error) {
	secret := newSecret(k.Environment)
	k.Prefix = secret[:len(secret)-keySecretLen+keyShownLen]
	rec := keyRecord{Key: *k, Hash: hashKey(secret)}
	if err := tx.Bucket(bucketKeyHashes).Put(rec.Hash, []byte(k.ID)); err != nil {
		return "", err
	}
	return secret, putJSON(tx.Bucket(bucketKeys), []byte(k.ID), rec)
}

// CreateKey issues a key for (instance, env) with the given scope and returns its record and its
// secret; the secret cannot be retrieved again. instance may be the instance's id or name.
func (s *Store) CreateKey(instance, name, scope, env string) (Key, string, error) {
	if scope != ScopeRead && scope != ScopeWrite {
		return Key{}, "", fmt.Errorf("key scope %q: %w", scope, ErrInvalidScope)
	}
	if !ValidEnvironment(env) {
		return Key{}, "", fmt.Errorf("key environment %q: %w", env, ErrInvalidEnvironment)
	}
	var k Key
	var secret string
	err := s.update(func(tx *bolt.Tx) error {
		var inst Instance
		if err := instanceTx(tx, instance, &inst); err != nil {
			return fmt.Errorf("instance %q: %w", instance, err)
		}
		k = Key{ID: ident.NewV4(), InstanceID: inst.ID, Name: name, Scope: scope, Environment: env, CreatedAt: s.now()}
		var err error
		secret, err = insertKeyTx(tx, &k)
		return err
	})
	if err != nil {
		return Key{}, "", err
	}
	return k, secret, nil
}

// Keys returns the keys of an instance (id or name), sorted by id.
func (s *Store) Keys(instance string) ([]Key, error) {
	out := []Key{}
	err := s.db.View(func(tx *bolt.Tx) error {
		var inst Instance
		if err := instanceTx(tx, instance, &inst); err != nil {
			return fmt.Errorf("instance %q: %w", instance, err)
		}
		return tx.Bucket(bucketKeys).ForEach(func(_, v []byte) error {
			var rec keyRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("control: decode key record: %w", err)
			}
			if rec.InstanceID == inst.ID {
				out = append(out, rec.Key)
			}
			return nil
		})
	})
	return out, err
}

// ResolveKey returns the record of a presented key secret and its instance: ErrKeyMalformed if
// it does not have the key format, ErrKeyUnknown if no key matches, ErrKeyRevoked if it no longer
// works. Both records come from one read transaction.
func (s *Store) ResolveKey(secret string) (Key, Instance, error) {
	if _, err := ParseKey(secret); err != nil {
		return Key{}, Instance{}, err
	}
	hash := sha256.Sum256([]byte(secret))
	rec, inst, ok := s.keys.get(hash)
	if !ok {
		var err error
		if rec, inst, err = s.loadKey(hash); err != nil {
			return Key{}, Instance{}, err
		}
	}
	// Checked at every use, cached or not: a key can be set to stop working at a future time.
	if rec.Revoked(s.now()) {
		return Key{}, Instance{}, ErrKeyRevoked
	}
	return rec.Key, inst, nil
}

// loadKey reads the records of the key whose secret has the given hash, and caches them. It is
// apart from ResolveKey so that the records it decodes into, which the transaction's closure makes
// escape, are allocated on a cache miss only.
func (s *Store) loadKey(hash [sha256.Size]byte) (rec keyRecord, inst Instance, err error) {
	gen := s.keys.generation()
	err = s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketKeyHashes).Get(hash[:])
		if id == nil {
			return ErrKeyUnknown
		}
		if err := getJSON(tx.Bucket(bucketKeys), id, &rec); err != nil {
			return err
		}
		return getJSON(tx.Bucket(bucketInstances), []byte(rec.InstanceID), &inst)
	})
	if err != nil {
		return keyRecord{}, Instance{}, err
	}
	s.keys.put(hash, gen, rec, inst)
	return rec, inst, nil
}

// keyCache remembers resolved keys by the hash of their secret, so that a data-plane request
// neither opens a transaction nor decodes two records. Every write transaction of the store
// (Store.update) clears it and moves gen on, and an entry is stored only if gen has not moved
// since before the read that found it, so no entry ever outlives a change of what it holds.
// Only keys that exist are kept, so the cache is bounded by the store's keys.
type keyCache struct {
	mu      sync.RWMutex // read-locked by the data plane's lookups, on every request
	gen     uint64
	entries map[[sha256.Size]byte]cachedKey
}

type cachedKey struct {
	rec  keyRecord
	inst Instance
}

func (c *keyCache) get(hash [sha256.Size]byte) (keyRecord, Instance, bool) {
	c.mu.RLock()
	e, ok := c.entries[hash]
	c.mu.RUnlock()
	return e.rec, e.inst, ok
}

func (c *keyCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

// put stores what a read begun at generation gen found, unless a write came since.
func (c *keyCache) put(hash [sha256.Size]byte, gen uint64, rec keyRecord, inst Instance) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.entries == nil {
		c.entries = map[[sha256.Size]byte]cachedKey{}
	}
	c.entries[hash] = cachedKey{rec: rec, inst: inst}
}

func (c *keyCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.entries)
}

// updateKey applies fn to the stored record of key id inside one write transaction.
func (s *Store) updateKey(id string, fn func(tx *bolt.Tx, rec *keyRecord) error) (Key, error) {
	var rec keyRecord
	err := s.update(func(tx *bolt.Tx) error {
		keys := tx.Bucket(bucketKeys)
		if err := getJSON(keys, []byte(id), &rec); err != nil {
			return fmt.Errorf("key %s: %w", id, err)
		}
		if err := fn(tx, &rec); err != nil {
			return err
		}
		return putJSON(keys, []byte(id), rec)
	})
	return rec.Key, err
}

// RotateKey revokes key id at once and issues a new key with the same instance, name, scope and
// environment. It returns the new key and its secret. A revoked key cannot be rotated.
func (s *Store) RotateKey(id string) (Key, string, error) {
	var next Key
	var secret string
	_, err := s.updateKey(id, func(tx *bolt.Tx, rec *keyRecord) error {
		now := s.now()
		if rec.Revoked(now) {
			return fmt.Errorf("rotate key %s: %w", id, ErrKeyRevoked)
		}
		next = Key{ID: ident.NewV4(), InstanceID: rec.InstanceID, Name: rec.Name, Scope: rec.Scope, Environment: rec.Environment, CreatedAt: now}
		var err error
		if secret, err = insertKeyTx(tx, &next); err != nil {
			return err
		}
		rec.RevokedAt = &now
		rec.ReplacedBy = next.ID
		return nil
	})
	if err != nil {
		return Key{}, "", err
	}
	return next, secret, nil
}

// ScheduleRevocation makes key id stop working at at (at once if at is not in the future).
func (s *Store) ScheduleRevocation(id string, at time.Time) (Key, error) {
	at = at.UTC()
	return s.updateKey(id, func(_ *bolt.Tx, rec *keyRecord) error {
		if rec.Revoked(s.now()) {
			return fmt.Errorf("schedule revocation of key %s: %w", id, ErrKeyRevoked)
		}
		rec.RevokeAt = &at
		return nil
	})
}

// RevokeKey makes key id stop working at once. Revoking a revoked key changes nothing.
func (s *Store) RevokeKey(id string) (Key, error) {
	return s.updateKey(id, func(_ *bolt.Tx, rec *keyRecord) error {
		if rec.RevokedAt == nil {
			now := s.now()
			rec.RevokedAt = &now
		}
		return nil
	})
}
