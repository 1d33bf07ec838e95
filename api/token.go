package api

import (
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/j17-go/j17/engine/control"
)

// operatorClaims are the claims of an operator token (the Authentication page's token contents;
// a self-hosted operator administers every instance, so there is no instance_id).
type operatorClaims struct {
	Email string `json:"email"`
	Role  string `json:"role"`
	jwt.RegisteredClaims
}

const operatorRole = "admin"

// tokenIssuer signs and verifies operator tokens with HS256.
type tokenIssuer struct {
	secret []byte
	clock  control.Clock
	ttl    time.Duration
}

// issue returns a token for op and its expiry.
func (t *tokenIssuer) issue(op control.Operator) (string, time.Time, error) {
	now := t.clock.Now()
	exp := now.Add(t.ttl)
	claims := operatorClaims{
		Email: op.Email,
		Role:  operatorRole,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   op.ID,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
	}
	signed, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(t.secret)
	return signed, exp, err
}

// verify checks a token's signature and expiry and returns the operator id it names.
func (t *tokenIssuer) verify(token string) (string, error) {
	var claims operatorClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return t.secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithTimeFunc(t.clock.Now),
		jwt.WithExpirationRequired(),
	)
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "", problem(ErrUnauthorized, "Token expired")
	case err != nil || claims.Subject == "" || claims.Role != operatorRole:
		return "", problem(ErrUnauthorized, "Invalid token")
	}
	return claims.Subject, nil
}
