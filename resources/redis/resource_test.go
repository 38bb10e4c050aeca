package redis

import (
	"testing"

	goredis "github.com/redis/go-redis/v9"

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
		New: func(t *testing.T) *fence.Resource {
			return newResource(t, c, prefix)
		},
		MaxKeyLen: MaxKeyLen,
		LostAnswer: func(t *testing.T, after func()) *fence.Resource {
			l := &lostAnswer{after: after}
			return newResource(t, newClient(t, l.dial), prefix)
		},
	})
}

// TestAs: As gives the client New was given, and nothing else.
func TestAs(t *testing.T) {
	t.Parallel()
	c := goredis.NewClient(&goredis.Options{Addr: "localhost:1"})
	defer c.Close()
	r, err := New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got goredis.UniversalClient
	if !r.As(&got) || got != goredis.UniversalClient(c) {
		t.Errorf("As(*goredis.UniversalClient) = %v; want the client New was given", got)
	}
	var cl *goredis.Client
	if r.As(&cl) {
		t.Errorf("As(**goredis.Client) = true; want false")
	}
	if r.As(nil) {
		t.Errorf("As(nil) = true; want false")
	}
}
