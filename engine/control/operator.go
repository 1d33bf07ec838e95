package control

import (
	"errors"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/j17-go/j17/engine/ident"
)

// Operator is a person who manages instances through the control plane.
type Operator struct {
	ID        string    `json:"id"`
	Email     string    `json:"email"`
	CreatedAt time.Time `json:"created_at"`
}

type operatorRecord struct {
	Operator
	PasswordHash []byte `json:"password_hash"`
}

func normalizeEmail(email string) string {
	return strings.ToLower(strings.TrimSpace(email))
}

// HasOperators reports whether any operator exists (false only on a fresh store).
func (s *Store) HasOperators() (bool, error) {
	var found bool
	err := s.db.View(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketOperators).Cursor().First()
		found = k != nil
		return nil
	})
	return found, err
}

// CreateOperator adds an operator with a bcrypt hash of password.
func (s *Store) CreateOperator(email, password string) (Operator, error) {
	email = normalizeEmail(email)
	if email == "" || password == "" {
		return Operator{}, fmt.Errorf("create operator: %w", ErrBadCredentials)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), s.cost)
	if err != nil {
		return Operator{}, fmt.Errorf("control: hash password: %w", err)
	}
	rec := operatorRecord{Operator: Operator{ID: ident.NewV4(), Email: email, CreatedAt: s.now()}, PasswordHash: hash}
	err = s.update(func(tx *bolt.Tx) error {
		emails := tx.Bucket(bucketOperatorEmail)
		if emails.Get([]byte(email)) != nil {
			return fmt.Errorf("operator %s: %w", email, ErrEmailTaken)
		}
		if err := emails.Put([]byte(email), []byte(rec.ID)); err != nil {
			return err
		}
		return putJSON(tx.Bucket(bucketOperators), []byte(rec.ID), rec)
	})
	if err != nil {
		return Operator{}, err
	}
	return rec.Operator, nil
}

// Authenticate returns the operator whose email and password match, or ErrBadCredentials.
func (s *Store) Authenticate(email, password string) (Operator, error) {
	email = normalizeEmail(email)
	var rec operatorRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		id := tx.Bucket(bucketOperatorEmail).Get([]byte(email))
		if id == nil {
			return ErrNotFound
		}
		return getJSON(tx.Bucket(bucketOperators), id, &rec)
	})
	if errors.Is(err, ErrNotFound) {
		_ = bcrypt.CompareHashAndPassword(s.dummyHash(), []byte(password))
		return Operator{}, ErrBadCredentials
	}
	if err != nil {
		return Operator{}, err
	}
	if bcrypt.CompareHashAndPassword(rec.PasswordHash, []byte(password)) != nil {
		return Operator{}, ErrBadCredentials
	}
	return rec.Operator, nil
}

// Operator returns the operator with the given id.
func (s *Store) Operator(id string) (Operator, error) {
	var rec operatorRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		return getJSON(tx.Bucket(bucketOperators), []byte(id), &rec)
	})
	if err != nil {
		return Operator{}, fmt.Errorf("operator %s: %w", id, err)
	}
	return rec.Operator, nil
}
