package redis

import (
	"testing"

	"github.com/fencekit/fence"
	"github.com/fencekit/fence/resources/resourcetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	c := newClient(t, nil)
	prefix := uniquePrefix("conf")
	// The lost-answer cases drop the answer of a write that the server
	// ran; the script must be cached by then, so that the write is the
	// one EVALSHA that runs it.
	if err := writeScript.Load(t.Context(), c).Err(); err != nil {
		t.Fatal(err)
	}
	resourcetest.Run(t, resourcetest.Harness{
		New: func(t *testing.T) fence.Resource {
			return newResource(t, c, prefix)
		},
		MaxKeyLen: MaxKeyLen,
		LostAnswer: func(t *testing.T, after func()) fence.Resource {
			l := &lostAnswer{after: after}
			return newResource(t, newClient(t, l.dial), prefix)
		},
	})
}
