package transport

import (
	"slices"
	"sync"
	"sync/atomic"
)

// endpoints are this process's open Endpoints. A datagram from one of them
// comes from a peer that runs on this process's threads: a reader does not
// poll for its answer (Config.SpinWait), since the poll would hold a thread
// the peer needs to answer. A daemon opens one Endpoint; tests and
// in-process clusters open several.
var endpoints struct {
	n   atomic.Int32 // len(all), read without the lock
	mu  sync.Mutex
	all []*Endpoint
}

// register records e as open; its addresses are set and never change.
func register(e *Endpoint) {
	endpoints.mu.Lock()
	defer endpoints.mu.Unlock()
	endpoints.all = append(endpoints.all, e)
	endpoints.n.Store(int32(len(endpoints.all)))
}

// unregister forgets e.
func unregister(e *Endpoint) {
	endpoints.mu.Lock()
	defer endpoints.mu.Unlock()
	endpoints.all = slices.DeleteFunc(endpoints.all, func(o *Endpoint) bool { return o == e })
	endpoints.n.Store(int32(len(endpoints.all)))
}

// fromProcess reports whether any of pkts came from another open Endpoint
// of this process. With one Endpoint open it costs one atomic load.
func (e *Endpoint) fromProcess(pkts []Packet) bool {
	if endpoints.n.Load() < 2 {
		return false
	}
	endpoints.mu.Lock()
	defer endpoints.mu.Unlock()
	for _, o := range endpoints.all {
		if o == e {
			continue
		}
		for _, p := range pkts {
			if o.isOwn(p.From) {
				return true
			}
		}
	}
	return false
}
