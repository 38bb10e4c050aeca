// Package notify is the fan-out behind the lockers' release
// notifications (driver.ReleaseNotifier): waiters subscribe to a key, and
// whatever learns of a release (the in-memory store itself, PostgreSQL's
// LISTEN connection) signals the key's subscribers.
package notify

import "sync"

// Hub maps keys to their subscribers. The zero Hub is ready to use and
// safe for concurrent use.
type Hub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

// Subscribe returns a channel that receives a value (buffered, never
// blocking Signal) for each Signal of key, until stop is called.
func (h *Hub) Subscribe(key string) (<-chan struct{}, func()) {
	c := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = make(map[string]map[chan struct{}]struct{})
	}
	m := h.subs[key]
	if m == nil {
		m = make(map[chan struct{}]struct{})
		h.subs[key] = m
	}
	m[c] = struct{}{}
	h.mu.Unlock()
	var once sync.Once
	return c, func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			delete(m, c)
			if len(m) == 0 {
				delete(h.subs, key)
			}
		})
	}
}

// Signal wakes every subscriber of key.
func (h *Hub) Signal(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c := range h.subs[key] {
		wake(c)
	}
}

// SignalAll wakes every subscriber of every key: after notifications may
// have been missed (a reconnect), each waiter asks the store again.
func (h *Hub) SignalAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.subs {
		for c := range m {
			wake(c)
		}
	}
}

// Keys returns the number of keys with subscribers.
func (h *Hub) Keys() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Has reports whether key has subscribers.
func (h *Hub) Has(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs[key]) > 0
}

func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
