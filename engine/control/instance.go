package control

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/j17-go/j17/engine/ident"
)

// Instance is one tenant of the server, with its three environments.
type Instance struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// slugPattern is a DNS label in lowercase: the name appears as a host name under --base-domain.
var slugPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidateName reports why name cannot be an instance name, or nil.
func ValidateName(name string) error {
	switch {
	case !slugPattern.MatchString(name):
		return fmt.Errorf("%q must be 1 to 63 lowercase letters, digits and inner hyphens: %w", name, ErrInvalidName)
	case isUUID(name):
		return fmt.Errorf("%q has the shape of a UUID: %w", name, ErrInvalidName)
	case strings.HasSuffix(name, "-staging") || strings.HasSuffix(name, "-test"):
		return fmt.Errorf("%q ends in an environment suffix: %w", name, ErrInvalidName)
	}
	return nil
}

// CreateInstance adds an instance named name.
func (s *Store) CreateInstance(name string) (Instance, error) {
	if err := ValidateName(name); err != nil {
		return Instance{}, err
	}
	inst := Instance{ID: ident.NewV4(), Name: name, CreatedAt: s.now()}
	err := s.update(func(tx *bolt.Tx) error {
		names := tx.Bucket(bucketInstanceNames)
		if names.Get([]byte(name)) != nil {
			return fmt.Errorf("instance %q: %w", name, ErrNameTaken)
		}
		if err := names.Put([]byte(name), []byte(inst.ID)); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bucketInstances), []byte(inst.ID), inst)
	})
	if err != nil {
		return Instance{}, err
	}
	return inst, nil
}

// Instance returns the instance whose id or name is ref.
func (s *Store) Instance(ref string) (Instance, error) {
	var inst Instance
	err := s.db.View(func(tx *bolt.Tx) error {
		return instanceTx(tx, ref, &inst)
	})
	if err != nil {
		return Instance{}, fmt.Errorf("instance %q: %w", ref, err)
	}
	return inst, nil
}

func instanceTx(tx *bolt.Tx, ref string, inst *Instance) error {
	id := []byte(ref)
	if !isUUID(ref) {
		id = tx.Bucket(bucketInstanceNames).Get([]byte(ref))
		if id == nil {
			return ErrNotFound
		}
	}
	return getJSON(tx.Bucket(bucketInstances), []byte(strings.ToLower(string(id))), inst)
}

// Instances returns every instance, sorted by name.
func (s *Store) Instances() ([]Instance, error) {
	out := []Instance{}
	err := s.db.View(func(tx *bolt.Tx) error {
		all := tx.Bucket(bucketInstances)
		return tx.Bucket(bucketInstanceNames).ForEach(func(_, id []byte) error {
			var inst Instance
			if err := getJSON(all, id, &inst); err != nil {
				return err
			}
			out = append(out, inst)
			return nil
		})
	})
	return out, err
}
