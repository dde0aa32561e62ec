package engine

import (
	"net/netip"
	"time"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/metrics"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/scope"
	"github.com/rsbd/rsbd/transport"
	"github.com/rsbd/rsbd/transport/datagram"
)

// Request asks the engine to send one serialized Notification to the
// network (Submit).
type Request struct {
	// Body is the serialized Notification, unless Frags carries it.
	Body []byte
	// Record, when set, is Body already wrapped as an unfragmented
	// FragmentedNotification (Body lies inside it).
	Record []byte
	// Frags, when set, are the event's fragments, made without Body.
	Frags [][]byte
	// Owner, when set, is the pooled buffer that Frags or Record lie in,
	// with a hold for this publish that the engine drops once the
	// streams took theirs.
	Owner *fragmentation.Buf
	// Size is the serialized size of the Notification.
	Size int
	// Scope is the event's scope; Class the class of its streams.
	Scope scope.Scope
	Class datagram.Class
}

// senderState is a sender stream and the records waiting to be packed.
type senderState struct {
	s       *qos.Sender
	rx      map[datagram.InstanceID]rxProgress // receivers' ACKed progress
	pending [][]byte
	// pieces are the pending DATA datagram's records when they are the
	// fragments of a large event, each in pieces that alias its body
	// (splitPieces). A datagram has records or pieces, never both.
	pieces [][][]byte
	// owners are the pooled buffers the pending records lie in, in runs
	// of consecutive records (fragOwners).
	owners []ownerRun
	size   int // encoded size of the pending DATA datagram
	// lastRecords is the record count of the last DATA datagram: the next
	// one's record list has room for that many (a released datagram's
	// list, or a new one; see datagramFree).
	lastRecords int
	used        time.Time
	// due is the deadline st is filed under in the engine's senderHeap,
	// dueIdx its index there (-1 when it has none).
	due    time.Time
	dueIdx int
}

// idle reports whether st has no pending DATA datagram.
func (st *senderState) idle() bool { return len(st.pending) == 0 && len(st.pieces) == 0 }

// dataHeader is the encoded size of a DATA datagram without records.
const dataHeader = datagram.HeaderSize + 2

// recordOverhead is the per-record length prefix in a DATA datagram.
const recordOverhead = 4

// publish turns one Notification into records and queues them on the sender
// stream of every group some peer wants.
func (e *Engine) publish(p Request, now time.Time) {
	wanted := e.wantedGroups(p.Scope)
	if len(wanted) == 0 {
		e.settleHolds(p.Owner, 0)
		return
	}
	recs, pieces, err := e.records(p)
	if pieces != nil {
		// Pieces alias the body in its slab, untracked: the slab keeps
		// the publish's hold and is never reused.
		p.Owner = nil
	}
	if err != nil {
		e.settleHolds(p.Owner, 0)
		e.m.Drop(metrics.DropFragmentInvalid)
		e.log.Warn("cannot fragment event", "scope", p.Scope.String(), "size", p.Size, "err", err)
		return
	}
	e.m.EventsOut[metrics.PathNetwork].Inc()
	e.m.BytesOut[metrics.PathNetwork].Add(float64(p.Size))
	queued := 0
	for _, id := range wanted {
		st := e.sender(datagram.StreamKey{Instance: e.cfg.Instance, Group: id, Class: p.Class}, now)
		if st == nil {
			continue
		}
		for _, r := range recs {
			e.queueRecord(st, r, p.Owner, now)
		}
		queued += len(recs)
		for _, ps := range pieces {
			e.queuePieces(st, ps, now)
		}
	}
	// The engine's scratch lists keep no event body alive.
	clear(pieces)
	if p.Frags == nil {
		clear(recs)
	}
	e.settleHolds(p.Owner, queued)
}

// settleHolds turns the hold a publish had on its pooled buffer, if any,
// into one per record of it queued on a stream (queued), pooling the
// buffer when none was and nothing else holds it. It runs before the
// engine handles any release of what it queued (handleOutput).
func (e *Engine) settleHolds(fb *fragmentation.Buf, queued int) {
	switch {
	case fb == nil || queued == 1:
	case queued == 0:
		e.frags.drop(fb, 1)
	default:
		fb.Hold(int32(queued - 1))
	}
}

// wantEntry is the wanted groups of one scope; scope is the engine's own
// copy (the published one may share a socket frame's body).
type wantEntry struct {
	scope scope.Scope
	ids   []datagram.GroupID
}

// wantedGroups returns the groups of sc and its super-scopes that some peer
// wants, cached per scope until the interest table changes.
func (e *Engine) wantedGroups(sc scope.Scope) []datagram.GroupID {
	in := e.env.Interest()
	if g := in.Generation(); g != e.want.gen || len(e.want.m) >= maxWantCache {
		e.want.gen = g
		clear(e.want.m)
		e.want.last = nil
	}
	if w := e.want.last; w != nil && w.scope == sc {
		return w.ids
	}
	w, ok := e.want.m[sc]
	if !ok {
		w = &wantEntry{scope: scope.Clone(sc)}
		e.scratch.groups = group.AppendIDs(e.scratch.groups[:0], sc)
		for _, id := range e.scratch.groups {
			if in.Wanted(id) {
				w.ids = append(w.ids, id)
			}
		}
		e.want.m[w.scope] = w
	}
	e.want.last = w
	return w.ids
}

// records turns a serialized Notification into serialized
// FragmentedNotifications that each fit one datagram: whole records, or
// for an event that must be split the fragments in pieces that alias its
// body, so that its data is not copied on the way to the socket.
func (e *Engine) records(p Request) (recs [][]byte, pieces [][][]byte, err error) {
	if p.Frags != nil {
		return p.Frags, nil, nil
	}
	body := p.Body
	capacity := e.capacity
	if p.Record != nil && len(p.Record) <= capacity {
		e.scratch.recs = append(e.scratch.recs[:0], p.Record)
		return e.scratch.recs, nil, nil
	}
	if fragmentation.WholeSize(len(body)) <= capacity {
		e.scratch.recs = append(e.scratch.recs[:0], fragmentation.AppendWhole(make([]byte, 0, fragmentation.WholeSize(len(body))), body))
		return e.scratch.recs, nil, nil
	}
	pieces, err = fragmentation.SplitPieces(e.scratch.pieces[:0], body, capacity)
	e.scratch.pieces = pieces
	return nil, pieces, err
}

// sender returns the sender state of key, creating it (and evicting the
// least recently used past MaxSenders).
func (e *Engine) sender(key datagram.StreamKey, now time.Time) *senderState {
	if st := e.lastSender; st != nil && st.s.Key() == key {
		st.used = now
		return st
	}
	if st, ok := e.senders[key]; ok {
		st.used = now
		e.lastSender = st
		return st
	}
	if len(e.senders) >= e.cfg.MaxSenders {
		e.evictOldestSender()
	}
	s, err := qos.NewSender(key, e.cfg.Streams.Sender)
	if err != nil {
		e.log.Error("cannot create sender stream", "err", err)
		return nil
	}
	st := &senderState{s: s, used: now, size: dataHeader, dueIdx: -1}
	if key.Class.Reliable() {
		// Until a receiver ACKs, pace the stream as if one sat at its start:
		// the first burst must not overrun receivers before they report.
		st.rx = map[datagram.InstanceID]rxProgress{{}: {edge: qos.FirstSeq, at: now}}
	}
	e.senders[key] = st
	e.lastSender = st
	return st
}

func (e *Engine) evictOldestSender() {
	var oldest datagram.StreamKey
	var t time.Time
	for k, st := range e.senders {
		if st.idle() && (t.IsZero() || st.used.Before(t)) {
			oldest, t = k, st.used
		}
	}
	if !t.IsZero() {
		e.senders[oldest].s.ReleaseAll(&e.out)
		e.dropSender(e.senders[oldest])
		addSenderStats(&e.retired, e.senders[oldest].s.Stats())
		delete(e.blocked, e.senders[oldest])
		delete(e.senders, oldest)
		e.lastSender = nil
		e.m.Drop(metrics.DropStreamLimit)
	}
}

// expireSenders frees sender streams idle past DefaultSenderIdle that no
// longer retain anything for repair.
func (e *Engine) expireSenders(now time.Time) {
	for k, st := range e.senders {
		if st.idle() && st.s.Retained() == 0 && now.Sub(st.used) > DefaultSenderIdle {
			addSenderStats(&e.retired, st.s.Stats())
			e.dropSender(st)
			delete(e.senders, k)
			e.lastSender = nil
		}
	}
}

// queueRecord adds r to the pending DATA datagram of st, sending the
// pending one first when r does not fit or it holds pieces. owner, when
// set, is the pooled buffer r lies in: r holds a ref on it until the
// datagram is released.
func (e *Engine) queueRecord(st *senderState, r []byte, owner *fragmentation.Buf, now time.Time) {
	if len(st.pieces) > 0 || st.size+recordOverhead+len(r) > e.cfg.MaxDatagram || len(st.pending) == datagram.MaxRecords {
		e.sendPending(st, now)
	}
	if len(st.pending) == 0 {
		e.dirty = append(e.dirty, st)
		if st.pending == nil {
			st.pending = e.free.records(st.lastRecords)
		}
	}
	st.pending = append(st.pending, r)
	st.size += recordOverhead + len(r)
	if owner == nil {
		return
	}
	if k := len(st.owners); k > 0 && st.owners[k-1].fb == owner {
		st.owners[k-1].n++
		return
	}
	if st.owners == nil {
		st.owners = e.frags.runs()
	}
	st.owners = append(st.owners, ownerRun{fb: owner, n: 1})
}

// queuePieces adds a fragment given in pieces to the pending DATA datagram
// of st, sending the pending one first when the fragment does not fit or
// it holds whole records.
func (e *Engine) queuePieces(st *senderState, ps [][]byte, now time.Time) {
	n := 0
	for _, p := range ps {
		n += len(p)
	}
	if len(st.pending) > 0 || st.size+recordOverhead+n > e.cfg.MaxDatagram || len(st.pieces) == datagram.MaxRecords {
		e.sendPending(st, now)
	}
	if len(st.pieces) == 0 {
		e.dirty = append(e.dirty, st)
	}
	st.pieces = append(st.pieces, ps)
	st.size += recordOverhead + n
}

// sendPending numbers the pending DATA datagram of st.
func (e *Engine) sendPending(st *senderState, now time.Time) {
	if st.idle() {
		return
	}
	d := e.free.datagram()
	d.Kind, d.Records, d.Pieces = datagram.KindData, st.pending, st.pieces
	if len(st.pending) > 0 {
		st.lastRecords = len(st.pending)
	}
	owners := st.owners
	st.pending, st.pieces, st.owners, st.size = nil, nil, nil, dataHeader
	e.lastActive = now
	if len(owners) > 0 {
		e.frags.attach(d, owners)
	}
	if _, err := st.s.Send(d, now, &e.out); err != nil {
		e.log.Error("sender stream refused datagram", "err", err)
		e.frags.release(d) // neither sent nor kept
		e.free.put(d)
	}
	e.noteSender(st)
	if st.rx != nil {
		e.checkWindow(st, now)
	}
}

// packPending sends every pending DATA datagram.
func (e *Engine) packPending(now time.Time) {
	for _, st := range e.dirty {
		e.sendPending(st, now)
	}
	clear(e.dirty)
	e.dirty = e.dirty[:0]
}

// transmit encodes ds and sends each to its destinations, batching runs of
// datagrams that go to the same destinations into one system call.
func (e *Engine) transmit(ds []*datagram.Datagram) {
	if len(ds) == 0 {
		return
	}
	e.tx.reset()
	_, gather := e.env.Conn.(transport.GatherConn)
	for _, d := range ds {
		dst := e.destinations(d)
		if len(dst) == 0 {
			continue
		}
		if !e.tx.sameDst(dst) {
			e.tx.send(e.env.Conn)
			e.tx.setDst(dst)
		}
		if err := e.tx.add(d, gather); err != nil {
			e.log.Error("cannot encode datagram", "kind", d.Kind, "err", err)
			continue
		}
		e.m.DatagramsOut[kindLabel(d.Kind)].Inc()
	}
	e.tx.send(e.env.Conn)
}

// destinations returns where d goes: its group's multicast address, or in
// unicast mode every interested peer; a NACK also goes to the unicast
// address of the sender it asks.
func (e *Engine) destinations(d *datagram.Datagram) []netip.AddrPort {
	dst := e.tx.dstScratch[:0]
	if d.Kind == datagram.KindAck {
		if a, ok := e.origin[d.Target]; ok {
			dst = append(dst, a)
		}
		e.tx.dstScratch = dst
		return dst
	}
	if d.Kind == datagram.KindNack {
		if a, ok := e.origin[d.Target]; ok {
			dst = append(dst, a)
		}
		if !e.cfg.Unicast {
			dst = append(dst, e.env.Groups.Addr(d.Stream.Group))
		}
		e.tx.dstScratch = dst
		return dst
	}
	if !e.cfg.Unicast {
		dst = append(dst, e.env.Groups.Addr(d.Stream.Group))
		e.tx.dstScratch = dst
		return dst
	}
	e.tx.peers = e.env.Interest().AppendPeers(e.tx.peers[:0], d.Stream.Group)
	for _, p := range e.tx.peers {
		if p.Addr.IsValid() && p.Instance != e.cfg.Instance {
			dst = append(dst, p.Addr)
		}
	}
	e.tx.dstScratch = dst
	return dst
}

func kindLabel(k datagram.Kind) metrics.Kind {
	switch k {
	case datagram.KindHeartbeat:
		return metrics.KindHeartbeat
	case datagram.KindNack:
		return metrics.KindNack
	case datagram.KindGone:
		return metrics.KindGone
	case datagram.KindAck:
		return metrics.KindAck
	}
	return metrics.KindData
}
