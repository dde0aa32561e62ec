package qos

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/rsbd/rsbd/transport/datagram"
)

// push schedules d to arrive at node to after delay.
func (s *sim) push(to int, d *datagram.Datagram, delay time.Duration) {
	s.serial++
	s.queue = append(s.queue, simEvent{at: s.now.Add(delay), serial: s.serial, to: to, d: d})
	for i := len(s.queue) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.eventLess(i, p) {
			break
		}
		s.queue[i], s.queue[p] = s.queue[p], s.queue[i]
		i = p
	}
}

func (s *sim) eventLess(i, j int) bool {
	a, b := &s.queue[i], &s.queue[j]
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.serial < b.serial
}

// pop removes the earliest event.
func (s *sim) pop() simEvent {
	e := s.queue[0]
	last := len(s.queue) - 1
	s.queue[0] = s.queue[last]
	s.queue[last] = simEvent{}
	s.queue = s.queue[:last]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(s.queue) {
			break
		}
		if r := c + 1; r < len(s.queue) && s.eventLess(r, c) {
			c = r
		}
		if !s.eventLess(c, i) {
			break
		}
		s.queue[i], s.queue[c] = s.queue[c], s.queue[i]
		i = c
	}
	return e
}

// nextTime returns the earliest pending action: a publication, an arrival or
// a machine deadline.
func (s *sim) nextTime() (time.Time, bool) {
	var t time.Time
	consider := func(c time.Time) {
		if !c.IsZero() && (t.IsZero() || c.Before(t)) {
			t = c
		}
	}
	if s.sent < s.cfg.n {
		consider(s.next)
	}
	if len(s.queue) > 0 {
		consider(s.queue[0].at)
	}
	consider(s.sender().NextDeadline())
	for _, n := range s.nodes {
		consider(n.table.NextDeadline())
	}
	return t, !t.IsZero()
}

// run advances the virtual clock event by event until done reports true or
// nothing is left to do before the settle time after the last publication.
func (s *sim) run(done func() bool) {
	s.tb.Helper()
	same := 0
	for {
		t, ok := s.nextTime()
		if !ok || (s.sent == s.cfg.n && t.After(s.lastPub.Add(s.cfg.settle))) {
			return
		}
		if t.After(s.now) {
			s.now, same = t, 0
		} else if same++; same > 100000 {
			s.tb.Fatalf("virtual clock stuck at %v", s.now.Sub(simBase))
		}
		s.step()
		s.checkBounds()
		if s.sent == s.cfg.n && done != nil && done() {
			return
		}
	}
}

// step performs everything due at s.now.
func (s *sim) step() {
	s.steps++
	if s.sent < s.cfg.n && !s.next.After(s.now) {
		s.publish()
	}
	for len(s.queue) > 0 && !s.queue[0].at.After(s.now) {
		e := s.pop()
		s.arrive(e)
	}
	// Only the current sender instance is alive; earlier ones have stopped.
	if snd := s.sender(); !snd.NextDeadline().IsZero() && !snd.NextDeadline().After(s.now) {
		snd.Tick(s.now, &s.out)
		s.flush(-1)
	}
	for i, n := range s.nodes {
		if dl := n.table.NextDeadline(); !dl.IsZero() && !dl.After(s.now) {
			n.table.Tick(s.now, &s.out)
			s.flush(i)
		}
	}
}

// arrive hands a datagram to its destination machine. Receivers get a
// private copy whose record bytes are overwritten right after the call, as a
// reused receive buffer would be: anything a receiver holds must be its own.
func (s *sim) arrive(e simEvent) {
	if e.to < 0 {
		if e.d.Kind == datagram.KindNack {
			s.nacksToSender++
			// A restarted sender's old instance is gone and answers nothing.
			if snd := s.sender(); snd.Key().Instance == e.d.Target {
				snd.HandleNack(e.d, s.now, &s.out)
				s.flush(-1)
			}
		}
		return
	}
	d, buf := cloneDatagram(e.d)
	s.nodes[e.to].table.Handle(d, s.now, &s.out)
	s.flush(e.to)
	for i := range buf {
		buf[i] = 0xEE
	}
}

// cloneDatagram copies d and its records into one fresh buffer.
func cloneDatagram(d *datagram.Datagram) (*datagram.Datagram, []byte) {
	c := *d
	if len(d.Records) == 0 {
		return &c, nil
	}
	n := 0
	for _, r := range d.Records {
		n += len(r)
	}
	buf := make([]byte, 0, n)
	c.Records = make([][]byte, len(d.Records))
	for i, r := range d.Records {
		buf = append(buf, r...)
		c.Records[i] = buf[len(buf)-len(r):]
	}
	return &c, buf
}

// consume checks a node's deliveries and records its loss reports.
func (s *sim) consume(n *simNode) {
	for _, dv := range s.out.Deliveries {
		s.checkDelivery(n, dv)
	}
	for _, l := range s.out.Losses {
		if !l.Stream.Class.Reliable() {
			s.tb.Fatalf("loss report on unreliable stream: %+v", l)
		}
		n.losses = append(n.losses, l)
		n.lost += l.Range.Len()
	}
}

// checkDelivery verifies one delivery: intact records, no duplicate, and
// sequence order on ordered classes.
func (s *sim) checkDelivery(n *simNode, dv Delivery) {
	if len(dv.Records) != s.cfg.records {
		s.tb.Fatalf("delivery of seq %d has %d records", dv.Seq, len(dv.Records))
	}
	id := binary.BigEndian.Uint64(dv.Records[0])
	for i, rec := range dv.Records {
		if id >= uint64(s.cfg.n) || !s.intact(rec, id, i) {
			s.tb.Fatalf("seq %d record %d corrupted (held records must be copies)", dv.Seq, i)
		}
	}
	if n.count[id]++; n.count[id] > 1 {
		s.tb.Fatalf("node %x: event %d delivered twice", n.local[1], id)
	}
	gen := dv.Stream.Instance[1] % 8
	if dv.Stream.Class.Ordered() && dv.Seq <= n.lastSeq[gen] {
		s.tb.Fatalf("node %x: ordered delivery of seq %d after %d", n.local[1], dv.Seq, n.lastSeq[gen])
	}
	n.lastSeq[gen] = dv.Seq
	n.delivered++
	n.latency = append(n.latency, s.now.Sub(s.sentAt[id]))
	n.deliverAt[id] = s.now
}

// checkBounds verifies after every step that no machine exceeds its caps.
func (s *sim) checkBounds() {
	snd := s.sender()
	if snd.Retained() > snd.cfg.RetainCount || snd.HeldBytes() > s.senderCap {
		s.tb.Fatalf("sender over its caps: %d datagrams, %d bytes", snd.Retained(), snd.HeldBytes())
	}
	tcfg := &s.tableCfg
	for _, n := range s.nodes {
		if n.table.HeldBytes() > tcfg.MaxBytes {
			s.tb.Fatalf("table holds %d bytes > %d", n.table.HeldBytes(), tcfg.MaxBytes)
		}
		for st := n.table.newest; st != nil; st = st.older {
			r := st.r
			if r.Held() > tcfg.Receiver.ReorderDatagrams || r.Gaps() > tcfg.Receiver.MaxGaps ||
				r.HeldBytes() > s.receiverCap {
				s.tb.Fatalf("receiver over its caps: held %d, gaps %d, bytes %d", r.Held(), r.Gaps(), r.HeldBytes())
			}
		}
	}
}

// resolved reports whether every node has delivered or been told it lost
// all n publications.
func (s *sim) resolved() bool {
	for _, n := range s.nodes {
		if uint64(n.delivered)+n.lost < uint64(s.cfg.n) {
			return false
		}
	}
	return true
}

// percentiles returns the 50th and 99th percentile of d (sorting d).
func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	return d[len(d)*50/100], d[min(len(d)-1, len(d)*99/100)]
}
