package control

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
	"golang.org/x/crypto/bcrypt"
)

// Bucket names: part of the on-disk format; do not change.
var (
	bucketOperators     = []byte("operators")      // id -> operatorRecord
	bucketOperatorEmail = []byte("operator_email") // email -> id
	bucketInstances     = []byte("instances")      // id -> Instance
	bucketInstanceNames = []byte("instance_names") // name -> id
	bucketSpecs         = []byte("specs")          // instance/env/<u64 version> -> specRecord
	bucketKeys          = []byte("keys")           // id -> keyRecord
	bucketKeyHashes     = []byte("key_hashes")     // sha256(secret) -> id
	bucketErrors        = []byte("errors")         // instance/env/<u64 seq> -> ErrorRecord
	bucketErrorIDs      = []byte("error_ids")      // error id -> key in bucketErrors
)

var allBuckets = [][]byte{
	bucketOperators, bucketOperatorEmail, bucketInstances, bucketInstanceNames,
	bucketSpecs, bucketKeys, bucketKeyHashes, bucketErrors, bucketErrorIDs,
}

// Options configures a Store. The zero value is usable.
type Options struct {
	// Clock defaults to SystemClock.
	Clock Clock
	// BcryptCost is the cost of new password hashes; 0 means bcrypt.DefaultCost.
	BcryptCost int
	// MaxErrorsPerPair bounds the error records kept per (instance, environment); 0 means 1000.
	MaxErrorsPerPair int
}

// Store is the control-plane record store.
type Store struct {
	db        *bolt.DB
	clock     Clock
	cost      int
	maxErrors int
	// dummy is compared against when an email is unknown, so that a login attempt takes as long
	// for an unknown email as for a wrong password. It is made on first use: hashing costs as
	// much as a login, and most starts never need it.
	dummy struct {
		once sync.Once
		hash []byte
	}
	keys keyCache
}

// update runs a write transaction, then clears the cache of resolved keys: whatever fn changed,
// a key resolved before it is read again.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	defer s.keys.invalidate()
	return s.db.Update(fn)
}

// Open opens (creating if needed) the store at path.
func Open(path string, opts Options) (*Store, error) {
	if opts.Clock == nil {
		opts.Clock = SystemClock{}
	}
	if opts.BcryptCost == 0 {
		opts.BcryptCost = bcrypt.DefaultCost
	}
	if opts.BcryptCost < bcrypt.MinCost || opts.BcryptCost > bcrypt.MaxCost {
		return nil, fmt.Errorf("control: bcrypt cost %d out of range %d..%d", opts.BcryptCost, bcrypt.MinCost, bcrypt.MaxCost)
	}
	if opts.MaxErrorsPerPair <= 0 {
		opts.MaxErrorsPerPair = 1000
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open %s: %w", path, ErrStoreLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("control: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("control: create buckets in %s: %w", path, err)
	}
	return &Store{db: db, clock: opts.Clock, cost: opts.BcryptCost, maxErrors: opts.MaxErrorsPerPair}, nil
}

// Close flushes and closes the store.
func (s *Store) Close() error {
	return s.db.Close()
}

// dummyHash returns a bcrypt hash of a password nobody has.
func (s *Store) dummyHash() []byte {
	s.dummy.once.Do(func() {
		// GenerateFromPassword fails only for a cost out of range, which Open refuses.
		s.dummy.hash, _ = bcrypt.GenerateFromPassword([]byte("j17 dummy password"), s.cost)
	})
	return s.dummy.hash
}

func (s *Store) now() time.Time {
	return s.clock.Now().UTC()
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	buf, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, buf)
}

func getJSON(b *bolt.Bucket, key []byte, v any) error {
	buf := b.Get(key)
	if buf == nil {
		return ErrNotFound
	}
	if err := json.Unmarshal(buf, v); err != nil {
		return fmt.Errorf("control: decode record %q: %w", key, err)
	}
	return nil
}

// pairPrefix is the key prefix of every record of one (instance, environment) pair.
func pairPrefix(instanceID, env string) []byte {
	return []byte(instanceID + "/" + env + "/")
}
