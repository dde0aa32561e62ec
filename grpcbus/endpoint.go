package grpcbus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/grpcbuspb"
	"github.com/rsbd/rsbd/scope"
)

// endpoint is the bus side shared by ClientConn and Server: one private
// scope with one listener, the informer everything is published with, and
// the map of the streams it multiplexes by their inbound id.
type endpoint struct {
	bus    *client.Bus
	cfg    *Config
	met    *metrics
	prefix scope.Scope
	scope  scope.Scope
	addr   string
	pub    *client.Informer
	lis    *client.Listener
	// onEvent handles what arrives on the private scope that is not a frame
	// (replies, for a ClientConn); it runs on the delivering goroutine.
	onEvent func(ev *client.Event)
	// onPing answers or records a ping; it runs on the endpoint's goroutine.
	onPing func(from string, p *grpcbuspb.Ping)
	// tick runs on the endpoint's goroutine every sweepPeriod.
	tick func(now time.Time)

	mu      sync.Mutex
	streams map[uint64]*stream
	closed  bool
	nextID  atomic.Uint64

	pings  chan pingIn
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// formatInfos are the user infos of a frame with nothing else to say,
// by wire format.
var formatInfos = map[string][]notification.UserInfo{
	WireProto: {{Key: keyWireFormat, Value: WireProto}},
	WireJSON:  {{Key: keyWireFormat, Value: WireJSON}},
}

// pingIn is a received ping and the endpoint that sent it.
type pingIn struct {
	from string
	p    *grpcbuspb.Ping
}

// newEndpoint mints a private scope under cfg.Prefix and listens on it.
// The caller sets the hooks and then calls start.
func newEndpoint(bus *client.Bus, cfg *Config, met *metrics) (*endpoint, error) {
	prefix, err := scope.Parse(cfg.Prefix)
	if err != nil {
		return nil, fmt.Errorf("%w: Prefix: %w", ErrConfig, err)
	}
	var id [16]byte
	_, _ = rand.Read(id[:])
	sub, _ := scope.Parse("/ep/" + hex.EncodeToString(id[:]))
	e := &endpoint{bus: bus, cfg: cfg, met: met, prefix: prefix, scope: prefix.Concat(sub),
		streams: make(map[uint64]*stream), pings: make(chan pingIn, pingQueue), done: make(chan struct{})}
	e.addr = e.scope.String()
	e.ctx, e.cancel = context.WithCancel(context.Background())
	if e.pub, err = bus.NewInformer(prefix); err != nil {
		return nil, fmt.Errorf("grpcbus: informer: %w", err)
	}
	return e, nil
}

// start listens on the private scope and starts the endpoint's goroutine.
func (e *endpoint) start() error {
	lis, err := e.bus.NewListener(e.scope, client.WithInlineDelivery(), client.WithoutConversion())
	if err != nil {
		e.pub.Close()
		return fmt.Errorf("grpcbus: listener: %w", err)
	}
	e.lis = lis
	lis.AddHandler(e.receive)
	go e.run()
	return nil
}

// receive takes an event from the private scope: a frame for one of the
// streams or a ping, or (through onEvent) anything else. It never blocks.
func (e *endpoint) receive(ev *client.Event) error {
	if ev.Method != methodFrame {
		if e.onEvent != nil {
			e.onEvent(ev)
		}
		return nil
	}
	format, _ := userInfo(ev.MetaData.UserInfos, keyWireFormat)
	in, err := readFrame(format, ev.Data)
	if err != nil {
		e.met.drop(dropMalformed)
		return nil
	}
	if p, ok := in.ping(); ok {
		from, _ := userInfo(ev.MetaData.UserInfos, keyEndpoint)
		select {
		case e.pings <- pingIn{from: from, p: p}:
		default:
			e.met.drop(dropOverflow)
		}
		return nil
	}
	s := e.stream(in.streamID)
	if s == nil {
		e.met.drop(dropUnknownStream)
		return nil
	}
	s.onFrame(in, ev.MetaData.UserInfos)
	return nil
}

// run answers pings and calls tick until the endpoint closes.
func (e *endpoint) run() {
	defer close(e.done)
	t := time.NewTicker(sweepPeriod)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case p := <-e.pings:
			if e.onPing != nil {
				e.onPing(p.from, p.p)
			}
		case now := <-t.C:
			e.sweep(now)
			if e.tick != nil {
				e.tick(now)
			}
		}
	}
}

// sweep gives up the streams whose peer has been silent too long.
func (e *endpoint) sweep(now time.Time) {
	for _, s := range e.snapshot() {
		if s.silentSince(now) {
			e.met.missedBeat()
			s.abort(codes.Unavailable, "peer endpoint silent for "+s.timeout.String(), true)
		}
	}
}

// snapshot returns the open streams.
func (e *endpoint) snapshot() []*stream {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*stream, 0, len(e.streams))
	for _, s := range e.streams {
		out = append(out, s)
	}
	return out
}

// heard marks every stream with peer as alive.
func (e *endpoint) heard(peer string) {
	now := time.Now().UnixNano()
	for _, s := range e.snapshot() {
		if s.isPeer(peer) {
			s.lastHeard.Store(now)
		}
	}
}

// add registers s under a fresh id; false when the endpoint is full or
// closed.
func (e *endpoint) add(s *stream) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || len(e.streams) >= e.cfg.MaxStreams {
		return false
	}
	s.id = e.nextID.Add(1)
	e.streams[s.id] = s
	e.met.streamOpened()
	return true
}

// remove unregisters the stream with id.
func (e *endpoint) remove(id uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.streams[id]; ok {
		delete(e.streams, id)
		e.met.streamClosed()
	}
}

// stream returns the stream with id, or nil.
func (e *endpoint) stream(id uint64) *stream {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.streams[id]
}

// outEvent is the event a frame is published as and the buffer it is
// encoded into, used again once the informer returns: PublishEvent keeps
// none of an event's memory.
type outEvent struct {
	ev  client.Event
	buf []byte
}

var outEvents = sync.Pool{New: func() any { return new(outEvent) }}

// sendFrame publishes fr to the endpoint at to, in wire format f, with
// extra user infos.
func (e *endpoint) sendFrame(ctx context.Context, to scope.Scope, f string, fr *grpcbuspb.TransportFrame, infos []notification.UserInfo) error {
	out := outEvents.Get().(*outEvent)
	defer out.release()
	data, err := encodeFrame(out.buf, f, fr)
	if err != nil {
		return err
	}
	if f == WireProto {
		out.buf = data
	}
	return e.publish(ctx, out, to, f, data, infos)
}

// sendMessage publishes a Message frame of stream id with sequence seq and
// payload p to the endpoint at to, in wire format f.
func (e *endpoint) sendMessage(ctx context.Context, to scope.Scope, f string, id, seq uint64, p []byte) error {
	if f != WireProto {
		fr := &grpcbuspb.TransportFrame{StreamId: id, StreamSequence: seq,
			Frame: &grpcbuspb.TransportFrame_Message{Message: &grpcbuspb.Message{Payload: p}}}
		return e.sendFrame(ctx, to, f, fr, nil)
	}
	out := outEvents.Get().(*outEvent)
	defer out.release()
	out.buf = appendMessageFrame(slices.Grow(out.buf[:0], frameOverhead+len(p)), id, seq, p)
	return e.publish(ctx, out, to, f, out.buf, nil)
}

// release gives out back to the pool, without a buffer too large to keep.
func (out *outEvent) release() {
	if cap(out.buf) > maxPooledFrame {
		out.buf = nil
	}
	out.ev = client.Event{}
	outEvents.Put(out)
}

// publish publishes data, a frame in wire format f, as out's event to the
// endpoint at to, with extra user infos.
func (e *endpoint) publish(ctx context.Context, out *outEvent, to scope.Scope, f string, data []byte, infos []notification.UserInfo) error {
	ev := &out.ev
	ev.Scope, ev.Method, ev.WireSchema, ev.Data = to, methodFrame, wireSchemaRaw, data
	if infos == nil {
		infos = formatInfos[f] // PublishEvent keeps none of them: shared is safe
	} else {
		infos = append(infos, notification.UserInfo{Key: keyWireFormat, Value: f})
	}
	ev.MetaData.UserInfos = infos
	return e.pub.PublishEvent(ctx, ev)
}

// ping sends a ping (or its answer) to the endpoint at to.
func (e *endpoint) ping(to string, data uint64, ack bool) {
	sc, err := scope.Parse(to)
	if err != nil || !e.prefix.Contains(sc) {
		e.met.drop(dropMalformed)
		return
	}
	fr := &grpcbuspb.TransportFrame{Frame: &grpcbuspb.TransportFrame_Ping{Ping: &grpcbuspb.Ping{Data: data, Ack: ack}}}
	infos := []notification.UserInfo{{Key: keyEndpoint, Value: e.addr}}
	ctx, cancel := context.WithTimeout(e.ctx, e.cfg.PingInterval)
	defer cancel()
	if err := e.sendFrame(ctx, sc, WireProto, fr, infos); err != nil && e.ctx.Err() == nil {
		e.cfg.Logger.Debug("grpcbus: ping failed", "to", to, "err", err)
	}
}

// close ends every stream with code (telling the peers), stops listening
// and waits for the endpoint's goroutine.
func (e *endpoint) close(code codes.Code) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	e.mu.Unlock()
	for _, s := range e.snapshot() {
		s.abort(code, "grpcbus: endpoint closed", true)
	}
	e.cancel()
	<-e.done
	if e.lis != nil {
		e.lis.Close()
	}
	e.pub.Close()
}

// ping returns the Ping of a frame that is one.
func (in *frameIn) ping() (*grpcbuspb.Ping, bool) {
	if in.fr == nil {
		return nil, false
	}
	p, ok := in.fr.Frame.(*grpcbuspb.TransportFrame_Ping)
	if !ok {
		return nil, false
	}
	return p.Ping, true
}
