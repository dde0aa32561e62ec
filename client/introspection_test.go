package client

import (
	"context"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/proto/rsbpb/introspection"
	"github.com/rsbd/rsbd/rsbsocket"
	sockframe "github.com/rsbd/rsbd/rsbsocket/frame"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// frameLog is an rsbsocket.Server handler keeping every published frame.
type frameLog chan sockframe.Frame

func (f frameLog) OnFrame(_ rsbsocket.ConnID, fr sockframe.Frame) { f <- fr }

// startServer runs a bare rsbsocket.Server on loopback.
func startServer(t *testing.T) (*rsbsocket.Server, string, frameLog) {
	t.Helper()
	log := make(frameLog, 256)
	srv, err := rsbsocket.NewServer(rsbsocket.Config{Logger: testLogger()}, log)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return srv, ln.Addr().String(), log
}

// nextIntrospection returns the next frame with the given wire schema.
func nextIntrospection(t *testing.T, log frameLog, schema string) (sockframe.Frame, *notification.Event) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case f := <-log:
			if string(f.WireSchema) != schema {
				continue
			}
			ev, err := notification.Unmarshal(f.Body)
			if err != nil {
				t.Fatal(err)
			}
			return f, ev
		case <-timeout:
			t.Fatalf("no %s frame", schema)
		}
	}
}

// TestIntrospection checks Hello on creation, Bye on Close, the Hello's
// process and host fields, and answers to surveys.
func TestIntrospection(t *testing.T) {
	srv, addr, log := startServer(t)
	ctx, cancel := context.WithTimeout(bg(), 5*time.Second)
	defer cancel()
	b, err := DialConfig(ctx, "socket://"+addr, Config{Logger: testLogger(), DisplayName: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, err := b.NewListener(mustScope("/intro/x"))
	if err != nil {
		t.Fatal(err)
	}
	f, ev := nextIntrospection(t, log, rsbsocket.HelloWireSchema)
	h := &introspection.Hello{}
	if err := proto.Unmarshal(f.Data, h); err != nil {
		t.Fatal(err)
	}
	wantScope, _ := participantScope(l.ID())
	id := l.ID()
	switch {
	case ev.Scope != wantScope, ev.Method != "", len(ev.Causes) != 0:
		t.Fatalf("hello event %s %q %v", ev.Scope, ev.Method, ev.Causes)
	case h.GetKind() != KindListener || string(h.GetId()) != string(id[:]) || h.GetScope() != "/intro/x/":
		t.Fatalf("hello %v", h)
	case h.GetProcess().GetId() != strconv.Itoa(os.Getpid()) || h.GetProcess().GetDisplayName() != "tester":
		t.Fatalf("process %v", h.GetProcess())
	case h.GetProcess().GetStartTime() == 0 || h.GetProcess().GetProgramName() == "":
		t.Fatalf("process %v", h.GetProcess())
	case h.GetHost().GetId() == "" || h.GetHost().GetHostname() == "" || h.GetHost().GetSoftwareType() == "":
		t.Fatalf("host %v", h.GetHost())
	case len(h.GetTransport()) != 1 || h.GetTransport()[0] != "socket://"+addr:
		t.Fatalf("transport %v", h.GetTransport())
	}
	if in := srv.Interest(); in.All || len(in.Scopes) != 2 {
		t.Fatalf("server learnt %+v, want /intro/x/ and introspection", in)
	}

	survey := surveyor(t, addr)
	surveyID := survey(MethodSurvey, "/__rsb/introspection/participants/")
	_, ev = nextIntrospection(t, log, rsbsocket.HelloWireSchema)
	if len(ev.Causes) != 1 || ev.Causes[0] != surveyID {
		t.Fatalf("survey answer causes %v, want %v", ev.Causes, surveyID)
	}
	reqID := survey(MethodRequest, wantScope.String())
	_, ev = nextIntrospection(t, log, rsbsocket.HelloWireSchema)
	if ev.Scope != wantScope || len(ev.Causes) != 1 || ev.Causes[0] != reqID {
		t.Fatalf("request answer %s %v", ev.Scope, ev.Causes)
	}

	l.Close()
	f, _ = nextIntrospection(t, log, rsbsocket.ByeWireSchema)
	bye := &introspection.Bye{}
	if err := proto.Unmarshal(f.Data, bye); err != nil || string(bye.GetId()) != string(id[:]) {
		t.Fatalf("bye %v %v", bye, err)
	}
}

// surveyor returns a function publishing a void event with a method on a
// scope through a raw client connection, returning the event's id.
func surveyor(t *testing.T, addr string) func(method, sc string) notification.EventID {
	conn, err := sockclient.Dial(bg(), addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	sender := notification.NewParticipantID()
	var seq uint32
	return func(method, sc string) notification.EventID {
		ev := &notification.Event{Scope: mustScope(sc), Method: method, WireSchema: notification.SchemaVoid,
			ID: notification.EventID{SenderID: sender, SequenceNumber: seq}}
		seq++
		ev.MetaData.CreateTime, ev.MetaData.SendTime = nowMicros(), nowMicros()
		body, err := notification.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.Send(body); err != nil {
			t.Fatal(err)
		}
		return ev.ID
	}
}

// TestIntrospectionPingAndEcho checks that a "ping" survey is answered by a
// "pong" per participant caused by the ping, and that the process's echo
// server returns the request's payload with its send and receive times.
func TestIntrospectionPingAndEcho(t *testing.T) {
	_, addr, log := startServer(t)
	ctx, cancel := context.WithTimeout(bg(), 10*time.Second)
	defer cancel()
	b, err := DialConfig(ctx, "socket://"+addr, Config{Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	l, err := b.NewListener(mustScope("/intro/ping"))
	if err != nil {
		t.Fatal(err)
	}
	nextIntrospection(t, log, rsbsocket.HelloWireSchema)

	conn, err := sockclient.Dial(bg(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ping := &notification.Event{Scope: rsbsocket.ParticipantsScope, Method: MethodSurvey,
		WireSchema: notification.SchemaUTF8String, Data: []byte("ping"),
		ID: notification.EventID{SenderID: notification.NewParticipantID()}}
	ping.MetaData.CreateTime, ping.MetaData.SendTime = nowMicros(), nowMicros()
	body, err := notification.Marshal(ping)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.Send(body); err != nil {
		t.Fatal(err)
	}
	f, ev := nextIntrospection(t, log, notification.SchemaUTF8String)
	if string(f.Data) == "ping" { // the server's handler sees the ping itself first
		f, ev = nextIntrospection(t, log, notification.SchemaUTF8String)
	}
	wantScope, _ := IntrospectionParticipantScope(l.ID())
	if string(f.Data) != "pong" || ev.Scope != wantScope || len(ev.Causes) != 1 || ev.Causes[0] != ping.ID {
		t.Fatalf("pong %q on %s caused by %v", f.Data, ev.Scope, ev.Causes)
	}

	caller, err := DialConfig(ctx, "socket://"+addr, Config{Logger: testLogger(), NoIntrospection: true})
	if err != nil {
		t.Fatal(err)
	}
	defer caller.Close()
	h := hostInfo()
	psc, err := IntrospectionProcessScope(h.GetId(), strconv.Itoa(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := caller.NewRemoteServer(psc)
	if err != nil {
		t.Fatal(err)
	}
	before := nowMicros()
	rep, err := rs.CallEvent(ctx, EchoMethod, "are you there")
	if err != nil {
		t.Fatal(err)
	}
	sent, ok1 := rep.MetaData.UserTime(UserTimeRequestSend)
	recv, ok2 := rep.MetaData.UserTime(UserTimeRequestReceive)
	switch {
	case rep.Payload != "are you there" || rep.WireSchema != notification.SchemaUTF8String:
		t.Fatalf("echo payload %v (%s)", rep.Payload, rep.WireSchema)
	case !ok1 || !ok2 || int64(sent) < before || recv < sent || int64(recv) > nowMicros():
		t.Fatalf("echo user times send %d (%v) receive %d (%v), call at %d", sent, ok1, recv, ok2, before)
	}
	rep, err = rs.CallEvent(ctx, EchoMethod, nil)
	if err != nil || rep.WireSchema != notification.SchemaVoid {
		t.Fatalf("void echo: %v %v", rep, err)
	}
}

// TestQueryOf classifies introspection queries as the RSB implementations
// do: void SURVEY on the participants scope, void REQUEST on one
// participant's scope, and the string "ping" for pongs.
func TestQueryOf(t *testing.T) {
	id := notification.NewParticipantID()
	one, _ := IntrospectionParticipantScope(id)
	for _, tc := range []struct {
		sc, method, schema, data string
		ok, ping, only           bool
	}{
		{"/__rsb/introspection/participants/", MethodSurvey, notification.SchemaVoid, "", true, false, false},
		{"/__rsb/introspection/participants/", MethodSurvey, notification.SchemaUTF8String, "ping", true, true, false},
		{one.String(), MethodRequest, notification.SchemaVoid, "", true, false, true},
		{one.String(), MethodRequest, notification.SchemaUTF8String, "ping", true, true, true},
		{"/__rsb/introspection/participants/", MethodRequest, notification.SchemaVoid, "", false, false, false},
		{"/__rsb/introspection/participants/not-a-uuid/", MethodRequest, notification.SchemaVoid, "", false, false, false},
		{one.String() + "x/", MethodRequest, notification.SchemaVoid, "", false, false, false},
		{"/__rsb/introspection/participants/", "", notification.SchemaVoid, "", false, false, false},
		{"/__rsb/introspection/participants/", MethodSurvey, notification.SchemaUTF8String, "pong", false, false, false},
		{"/__rsb/introspection/participants/", MethodSurvey, rsbsocket.HelloWireSchema, "x", false, false, false},
	} {
		ev := &notification.Event{Scope: mustScope(tc.sc), Method: tc.method, WireSchema: tc.schema, Data: []byte(tc.data)}
		req, ok := queryOf(ev)
		if ok != tc.ok || (ok && (req.ping != tc.ping || (req.only != nil) != tc.only || (tc.only && *req.only != id))) {
			t.Errorf("%s %s %s %q: ok %v ping %v only %v", tc.sc, tc.method, tc.schema, tc.data, ok, req.ping, req.only)
		}
	}
}

// TestIntrospectionProcessScope derives scope components as RSB does.
func TestIntrospectionProcessScope(t *testing.T) {
	sc, err := IntrospectionProcessScope("host.example", "42")
	if err != nil || sc.String() != "/__rsb/introspection/hosts/host_example/42/" {
		t.Fatalf("%s %v", sc, err)
	}
}

// TestIntrospectionServerMethods: as in rsb-python, a LocalServer's method
// and a RemoteServer's method (on its first call) are announced with
// their server as parent, each with a listener and an informer whose
// parent is the method; closing the servers sends their Byes.
func TestIntrospectionServerMethods(t *testing.T) {
	_, addr, log := startServer(t)
	ctx, cancel := context.WithTimeout(bg(), 10*time.Second)
	defer cancel()
	b, err := DialConfig(ctx, "socket://"+addr, Config{Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	srv, err := b.NewLocalServer(mustScope("/intro/srv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddMethod("m", func(context.Context, *Event) (any, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	rs, err := b.NewRemoteServer(mustScope("/intro/srv"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Call(ctx, "m", nil); err != nil {
		t.Fatal(err)
	}
	byID := map[string]*introspection.Hello{}
	for len(byID) < 8 {
		f, _ := nextIntrospection(t, log, rsbsocket.HelloWireSchema)
		h := &introspection.Hello{}
		if err := proto.Unmarshal(f.Data, h); err != nil {
			t.Fatal(err)
		}
		byID[string(h.GetId())] = h
	}
	for _, server := range []struct {
		id           [16]byte
		kind, method string
	}{{srv.ID(), KindLocalServer, KindLocalMethod}, {rs.ID(), KindRemoteServer, KindRemoteMethod}} {
		if byID[string(server.id[:])].GetKind() != server.kind {
			t.Fatalf("no %s Hello", server.kind)
		}
		var method *introspection.Hello
		for _, h := range byID {
			if h.GetKind() == server.method && string(h.GetParent()) == string(server.id[:]) && h.GetScope() == "/intro/srv/m/" {
				method = h
			}
		}
		if method == nil {
			t.Fatalf("no %s under the %s", server.method, server.kind)
		}
		var kids []string
		for _, h := range byID {
			if string(h.GetParent()) == string(method.GetId()) && h.GetScope() == "/intro/srv/m/" {
				kids = append(kids, h.GetKind())
			}
		}
		if slices.Sort(kids); strings.Join(kids, " ") != "informer listener" {
			t.Fatalf("%s children %v", server.method, kids)
		}
	}
	srv.Close()
	rs.Close()
	byes := 0
	for byes < 8 {
		nextIntrospection(t, log, rsbsocket.ByeWireSchema)
		byes++
	}
}
