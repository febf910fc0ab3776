package task

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/state"
)

// A panic of an error keeps its class (a state handle's registration
// panics with state.ErrIncompatible, which no restart gets past); any
// other panic is its value printed.
func TestPanicErrorKeepsClass(t *testing.T) {
	id := event.SubtaskID{Vertex: "v", Index: 1}
	err := panicError(id, fmt.Errorf("state %q: %w", "m", state.ErrIncompatible))
	if !errors.Is(err, state.ErrIncompatible) || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("panic of an error: %v, want it wrapped", err)
	}
	if err := panicError(id, "index out of range"); !strings.Contains(err.Error(), "panicked: index out of range") {
		t.Fatalf("panic of a string: %v", err)
	}
}
