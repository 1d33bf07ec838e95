package implication

import (
	"fmt"

	"github.com/j17-go/j17/engine/problem"
)

// refusal is a 422 about the implication at ptr in the spec.
func refusal(ptr, format string, args ...any) error {
	return &problem.Error{Kind: problem.ErrInvalid, Message: "Implication " + ptr + ": " + fmt.Sprintf(format, args...)}
}

// refusalOf is a refusal that errors.Is also matches against sentinel.
func refusalOf(sentinel error, ptr, format string, args ...any) error {
	return &problem.Error{Kind: fmt.Errorf("%w: %w", problem.ErrInvalid, sentinel), Message: "Implication " + ptr + ": " + fmt.Sprintf(format, args...)}
}
