package problem

import (
	"errors"
	"testing"
)

func TestInBatchMarksACopy(t *testing.T) {
	e := At(ErrInvalid, "data.x", "bad %d", 1)
	got := InBatch(e, 2)
	var pe *Error
	if !errors.As(got, &pe) || pe.EventIndex == nil || *pe.EventIndex != 2 || pe.Path != "data.x" || pe.Message != "bad 1" {
		t.Fatalf("InBatch = %+v", got)
	}
	if e.EventIndex != nil {
		t.Error("InBatch changed the original")
	}
	if !errors.Is(got, ErrInvalid) {
		t.Error("the kind is lost")
	}
	plain := errors.New("x")
	if InBatch(plain, 1) != plain {
		t.Error("a plain error was changed")
	}
}
