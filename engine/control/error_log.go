package control

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ErrorRecord describes a request that failed with a server error, for later lookup by its id.
// InstanceID and Environment are empty when the request had no (instance, environment).
type ErrorRecord struct {
	ID          string    `json:"error_id"`
	InstanceID  string    `json:"instance_id"`
	Environment string    `json:"environment"`
	RequestID   string    `json:"request_id"`
	Method      string    `json:"method"`
	Path        string    `json:"path"`
	Status      int       `json:"status"`
	Message     string    `json:"message"`
	Stack       string    `json:"stack,omitempty"`
	Time        time.Time `json:"time"`
}

// RecordError stores r and drops the oldest records of its (instance, environment) beyond the
// store's bound. r.Time is set from the store's clock when zero.
func (s *Store) RecordError(r ErrorRecord) error {
	if r.Time.IsZero() {
		r.Time = s.now()
	}
	return s.update(func(tx *bolt.Tx) error {
		errs := tx.Bucket(bucketErrors)
		seq, err := errs.NextSequence()
		if err != nil {
			return err
		}
		prefix := pairPrefix(r.InstanceID, r.Environment)
		key := binary.BigEndian.AppendUint64(bytes.Clone(prefix), seq)
		if err := putJSON(errs, key, r); err != nil {
			return err
		}
		ids := tx.Bucket(bucketErrorIDs)
		if err := ids.Put([]byte(r.ID), key); err != nil {
			return err
		}
		return trimErrorsTx(errs, ids, prefix, s.maxErrors)
	})
}

// trimErrorsTx deletes the oldest records under prefix until at most max remain.
func trimErrorsTx(errs, ids *bolt.Bucket, prefix []byte, max int) error {
	c := errs.Cursor()
	n := 0
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		n++
	}
	var victims [][]byte
	for k, _ := c.Seek(prefix); n > max && k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		var r ErrorRecord
		if err := getJSON(errs, k, &r); err != nil {
			return err
		}
		victims = append(victims, bytes.Clone(k))
		if err := ids.Delete([]byte(r.ID)); err != nil {
			return err
		}
		n--
	}
	for _, k := range victims {
		if err := errs.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// ErrorRecord returns the error record id of (instanceID, env); a record of another pair is
// ErrNotFound, so that one environment never sees another's errors.
func (s *Store) ErrorRecord(instanceID, env, id string) (ErrorRecord, error) {
	var r ErrorRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		key := tx.Bucket(bucketErrorIDs).Get([]byte(id))
		if key == nil || !bytes.HasPrefix(key, pairPrefix(instanceID, env)) {
			return ErrNotFound
		}
		return getJSON(tx.Bucket(bucketErrors), key, &r)
	})
	if err != nil {
		return ErrorRecord{}, fmt.Errorf("error %s: %w", id, err)
	}
	return r, nil
}
