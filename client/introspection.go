package client

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
	"github.com/rsbd/rsbd/proto/rsbpb/operatingsystem"
	"github.com/rsbd/rsbd/rsbsocket"
	"github.com/rsbd/rsbd/scope"
)

// introspector announces a Bus's participants (Hello, Bye) and answers
// surveys. Hellos and Byes are sent by its own informer, which is not
// announced itself (it lives under /__rsb/).
type introspector struct {
	bus  *Bus
	inf  *Informer
	proc *operatingsystem.Process
	host *operatingsystem.Host
	url  string

	mu    sync.Mutex
	parts map[[16]byte]partInfo

	surveys chan surveyReq
	stop    chan struct{}
	wg      sync.WaitGroup
	detach  func()

	droppedSurveys atomic.Uint64
}

// surveyReq asks for Hellos (or pongs, for a ping) caused by a query: of
// every participant, or of the one named by only.
type surveyReq struct {
	cause notification.EventID
	only  *[16]byte
	ping  bool
}

// newIntrospector starts introspection on b's link: the query sink on the
// participants scope and the process's echo server.
func newIntrospector(b *Bus) *introspector {
	in := &introspector{
		bus:     b,
		inf:     b.newUntrackedInformer(rsbsocket.ParticipantsScope),
		proc:    processInfo(b.cfg.DisplayName),
		host:    hostInfo(),
		url:     b.link.transportURL(),
		parts:   make(map[[16]byte]partInfo),
		surveys: make(chan surveyReq, surveyQueue),
		stop:    make(chan struct{}),
	}
	in.detach = b.link.attach(in)
	in.wg.Add(1)
	go in.answerSurveys()
	in.startEcho()
	return in
}

// startEcho serves the process's echo method, which remote introspection
// calls to learn liveness, latency and clock offset.
func (in *introspector) startEcho() {
	sc, err := IntrospectionProcessScope(in.host.GetId(), in.proc.GetId())
	if err == nil {
		var srv *LocalServer
		if srv, err = in.bus.NewLocalServer(sc); err == nil {
			err = srv.AddMethod(EchoMethod, echo)
		}
	}
	if err != nil {
		in.bus.log.Debug("client: introspection echo server not started", "err", err)
	}
}

// echo answers an echo request with its own payload, and the request's
// send and receive times as the user times request.send and
// request.receive.
func echo(_ context.Context, req *Event) (any, error) {
	rep := &Event{}
	if len(req.Data) > 0 {
		rep.WireSchema, rep.Data = req.WireSchema, req.Data
	}
	rep.MetaData.SetUserTime(UserTimeRequestSend, uint64(req.MetaData.SendTime))
	rep.MetaData.SetUserTime(UserTimeRequestReceive, uint64(req.MetaData.ReceiveTime))
	return rep, nil
}

func (in *introspector) sinkScope() scope.Scope { return rsbsocket.ParticipantsScope }

// deliver spots queries: SURVEY on the participants scope (everyone) and
// REQUEST on one participant's scope (that one, if it is ours), each with
// a void payload asking for Hellos or the string "ping" asking for pongs.
func (in *introspector) deliver(it item) {
	req, ok := queryOf(it.ev)
	if !ok {
		return
	}
	select {
	case in.surveys <- req:
	default:
		in.droppedSurveys.Add(1)
	}
}

// queryOf classifies an event on the participants scope as a query.
func queryOf(ev *notification.Event) (surveyReq, bool) {
	req := surveyReq{cause: ev.ID}
	switch {
	case ev.WireSchema == notification.SchemaVoid || (ev.WireSchema == "" && len(ev.Data) == 0):
	case (ev.WireSchema == notification.SchemaUTF8String || ev.WireSchema == notification.SchemaASCIIString) &&
		string(ev.Data) == "ping":
		req.ping = true
	default:
		return req, false
	}
	switch {
	case ev.Method == MethodSurvey && ev.Scope == rsbsocket.ParticipantsScope:
		return req, true
	case ev.Method == MethodRequest && ev.Scope.IsSubScopeOf(rsbsocket.ParticipantsScope):
		comps := ev.Scope.Components()
		if len(comps) != len(rsbsocket.ParticipantsScope.Components())+1 {
			return req, false
		}
		id, err := notification.ParseUUID(comps[len(comps)-1])
		if err != nil {
			return req, false
		}
		req.only = &id
		return req, true
	}
	return req, false
}

// answerSurveys sends the Hellos surveys ask for, off the receiving path.
func (in *introspector) answerSurveys() {
	defer in.wg.Done()
	for {
		select {
		case <-in.stop:
			return
		case req := <-in.surveys:
			for _, p := range in.snapshot(req.only) {
				if err := in.answer(p, req); err != nil {
					in.bus.log.Debug("client: answering survey failed", "err", err)
				}
			}
		}
	}
}

// answer sends p's Hello, or its pong for a ping, caused by req.
func (in *introspector) answer(p partInfo, req surveyReq) error {
	if !req.ping {
		return in.sendHello(context.Background(), p, &req.cause)
	}
	return in.send(context.Background(), p.id, notification.SchemaUTF8String, []byte("pong"), &req.cause)
}

// snapshot returns the participants to announce again.
func (in *introspector) snapshot(only *[16]byte) []partInfo {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []partInfo
	for id, p := range in.parts {
		if only == nil || *only == id {
			out = append(out, p)
		}
	}
	return out
}

// announce records p and sends its Hello.
func (in *introspector) announce(ctx context.Context, p partInfo) error {
	in.mu.Lock()
	in.parts[p.id] = p
	in.mu.Unlock()
	if err := in.sendHello(ctx, p, nil); err != nil {
		in.mu.Lock()
		delete(in.parts, p.id)
		in.mu.Unlock()
		return fmt.Errorf("client: announcing %s on %s: %w", p.kind, p.scope, err)
	}
	return nil
}

// retire forgets p and sends its Bye, if p was announced.
func (in *introspector) retire(p partInfo) {
	in.mu.Lock()
	_, known := in.parts[p.id]
	delete(in.parts, p.id)
	in.mu.Unlock()
	if !known {
		return
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(&introspection.Bye{Id: p.id[:]})
	if err == nil {
		err = in.send(context.Background(), p.id, rsbsocket.ByeWireSchema, data, nil)
	}
	if err != nil {
		in.bus.log.Debug("client: sending Bye failed", "scope", p.scope.String(), "err", err)
	}
}

// sendHello publishes p's Hello, caused by a survey when cause is set.
func (in *introspector) sendHello(ctx context.Context, p partInfo, cause *notification.EventID) error {
	h := &introspection.Hello{
		Kind:      proto.String(p.kind),
		Id:        p.id[:],
		Scope:     proto.String(p.scope.String()),
		Transport: []string{in.url},
		Process:   in.proc,
		Host:      in.host,
	}
	if p.parent != ([16]byte{}) {
		h.Parent = p.parent[:]
	}
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(h)
	if err != nil {
		return err
	}
	return in.send(ctx, p.id, rsbsocket.HelloWireSchema, data, cause)
}

// send publishes an introspection payload on participants/<id>/.
func (in *introspector) send(ctx context.Context, id [16]byte, schema string, data []byte, cause *notification.EventID) error {
	sc, err := participantScope(id)
	if err != nil {
		return err
	}
	ev := &Event{}
	ev.Scope, ev.WireSchema, ev.Data = sc, schema, data
	if cause != nil {
		ev.Causes = []notification.EventID{*cause}
	}
	return in.inf.PublishEvent(ctx, ev)
}

// participantScope returns /__rsb/introspection/participants/<id>/.
func participantScope(id [16]byte) (scope.Scope, error) {
	return IntrospectionParticipantScope(id)
}

// IntrospectionParticipantScope returns the scope of participant id's
// Hello and Bye: /__rsb/introspection/participants/<ID>/, the id as a
// lowercase RFC 4122 string.
func IntrospectionParticipantScope(id [16]byte) (scope.Scope, error) {
	return scope.Parse(rsbsocket.ParticipantsScope.String() + notification.FormatUUID(id) + "/")
}

// IntrospectionProcessScope returns the scope of a process's echo server:
// /__rsb/introspection/hosts/<HOST-ID>/<PID>/. Characters of hostID and
// pid that a scope component cannot hold become '_'.
func IntrospectionProcessScope(hostID, pid string) (scope.Scope, error) {
	return scope.Parse(IntrospectionHostsScope.String() + scopeComponent(hostID) + "/" + scopeComponent(pid) + "/")
}

// scopeComponent derives a scope component from text as RSB does: every
// character outside [-_a-zA-Z0-9] becomes '_'.
func scopeComponent(text string) string {
	b := []byte(text)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// close stops answering surveys. Byes of remaining participants were sent
// by their own Close.
func (in *introspector) close() {
	in.detach()
	close(in.stop)
	in.wg.Wait()
	in.inf.Close()
}

// announceMethod announces the participants RSB shows for one method of a
// server, as rsb-python does: the method (kind, with the server as parent),
// and its listener and informer on the method scope, with the method as
// parent. It returns those announced.
func (b *Bus) announceMethod(server partInfo, kind string, sc scope.Scope) []partInfo {
	if b.intro == nil || sc.IsReserved() {
		return nil
	}
	m := partInfo{kind: kind, id: notification.NewParticipantID(), parent: server.id, scope: sc}
	parts := []partInfo{m,
		{kind: KindListener, id: notification.NewParticipantID(), parent: m.id, scope: sc},
		{kind: KindInformer, id: notification.NewParticipantID(), parent: m.id, scope: sc}}
	for i, p := range parts {
		if err := b.announce(context.Background(), p); err != nil {
			b.log.Debug("client: announcing a method failed", "scope", sc.String(), "err", err)
			return parts[:i]
		}
	}
	return parts
}

// retireAll retires parts, children first.
func (b *Bus) retireAll(parts []partInfo) {
	for i := len(parts) - 1; i >= 0; i-- {
		b.retire(parts[i])
	}
}
