package introspection

import (
	"slices"
	"time"
)

// tracker keeps the last maxSamples values of a quantity (a clock offset,
// a latency) and reports their median.
type tracker struct {
	samples []time.Duration
	next    int
}

// add records a value, replacing the oldest when full.
func (t *tracker) add(v time.Duration) {
	if len(t.samples) < maxSamples {
		t.samples = append(t.samples, v)
		return
	}
	t.samples[t.next] = v
	t.next = (t.next + 1) % maxSamples
}

// reset forgets every value.
func (t *tracker) reset() { t.samples, t.next = t.samples[:0], 0 }

// median returns the median value, and false when there is none.
func (t *tracker) median() (time.Duration, bool) {
	if len(t.samples) == 0 {
		return 0, false
	}
	s := slices.Clone(t.samples)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2], true
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2, true
}

// Sample is one echo round trip: the request's send time t0 (the caller's
// clock), its receive time t1 and the reply's send time t2 (the remote
// clock), and the reply's receive time t3 (the caller's clock), all in
// microseconds since the epoch.
type Sample struct {
	RequestSend, RequestReceive, ReplySend, ReplyReceive int64
}

// Offset is the remote clock's offset from the local one, ((t1-t0) -
// (t3-t2)) / 2: positive when the remote clock is ahead.
func (s Sample) Offset() time.Duration {
	return time.Duration((s.RequestReceive-s.RequestSend)-(s.ReplyReceive-s.ReplySend)) * time.Microsecond / 2
}

// Latency is the one-way latency, ((t1-t0) + (t3-t2)) / 2.
func (s Sample) Latency() time.Duration {
	return time.Duration((s.RequestReceive-s.RequestSend)+(s.ReplyReceive-s.ReplySend)) * time.Microsecond / 2
}

// valid reports whether every time is set and the round trip is not
// negative on the caller's clock.
func (s Sample) valid() bool {
	return s.RequestSend > 0 && s.RequestReceive > 0 && s.ReplySend > 0 && s.ReplyReceive >= s.RequestSend
}
