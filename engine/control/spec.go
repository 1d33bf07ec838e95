package control

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// SpecVersion is one deployed spec document of an (instance, environment).
type SpecVersion struct {
	InstanceID  string    `json:"instance_id"`
	Environment string    `json:"environment"`
	Version     int       `json:"version"`
	Document    []byte    `json:"document"`
	DeployedAt  time.Time `json:"deployed_at"`
	DeployedBy  string    `json:"deployed_by"`
}

func specKey(instanceID, env string, version int) []byte {
	return binary.BigEndian.AppendUint64(pairPrefix(instanceID, env), uint64(version))
}

// DeploySpec records a new spec version for (instanceID, env). build receives the current version
// (nil before the first deploy) and returns the document to store, or an error that aborts the
// deploy. build runs inside the write transaction, so the version it checks against is the one the
// new version replaces.
func (s *Store) DeploySpec(instanceID, env, deployedBy string, build func(prev *SpecVersion) ([]byte, error)) (SpecVersion, error) {
	if !ValidEnvironment(env) {
		return SpecVersion{}, fmt.Errorf("deploy spec %q: %w", env, ErrInvalidEnvironment)
	}
	var out SpecVersion
	err := s.update(func(tx *bolt.Tx) error {
		var inst Instance
		if err := instanceTx(tx, instanceID, &inst); err != nil {
			return fmt.Errorf("instance %q: %w", instanceID, err)
		}
		prev, err := currentSpecTx(tx, inst.ID, env)
		if err != nil {
			return err
		}
		doc, err := build(prev)
		if err != nil {
			return err
		}
		out = SpecVersion{InstanceID: inst.ID, Environment: env, Version: 1, Document: doc, DeployedAt: s.now(), DeployedBy: deployedBy}
		if prev != nil {
			out.Version = prev.Version + 1
		}
		return putJSON(tx.Bucket(bucketSpecs), specKey(inst.ID, env, out.Version), out)
	})
	if err != nil {
		return SpecVersion{}, err
	}
	return out, nil
}

// currentSpecTx returns the latest version of (instanceID, env), or nil if none was deployed.
func currentSpecTx(tx *bolt.Tx, instanceID, env string) (*SpecVersion, error) {
	prefix := pairPrefix(instanceID, env)
	c := tx.Bucket(bucketSpecs).Cursor()
	// Seek past the largest possible version, then step back to the last key of the prefix.
	k, _ := c.Seek(binary.BigEndian.AppendUint64(bytes.Clone(prefix), ^uint64(0)))
	if k == nil {
		k, _ = c.Last()
	} else if !bytes.HasPrefix(k, prefix) || len(k) != len(prefix)+8 {
		k, _ = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, prefix) || len(k) != len(prefix)+8 {
		return nil, nil
	}
	var v SpecVersion
	if err := getJSON(tx.Bucket(bucketSpecs), k, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// Spec returns the spec of (instanceID, env) at version, or the current one when version is 0.
// instanceID may be the instance's name.
func (s *Store) Spec(instanceID, env string, version int) (SpecVersion, error) {
	if !ValidEnvironment(env) {
		return SpecVersion{}, fmt.Errorf("spec %q: %w", env, ErrInvalidEnvironment)
	}
	var out SpecVersion
	err := s.db.View(func(tx *bolt.Tx) error {
		var inst Instance
		if err := instanceTx(tx, instanceID, &inst); err != nil {
			return fmt.Errorf("instance %q: %w", instanceID, err)
		}
		if version > 0 {
			if err := getJSON(tx.Bucket(bucketSpecs), specKey(inst.ID, env, version), &out); err != nil {
				return fmt.Errorf("spec %s/%s version %d: %w", inst.Name, env, version, err)
			}
			return nil
		}
		cur, err := currentSpecTx(tx, inst.ID, env)
		if err != nil {
			return err
		}
		if cur == nil {
			return fmt.Errorf("spec %s/%s: %w", inst.Name, env, ErrNotFound)
		}
		out = *cur
		return nil
	})
	return out, err
}
