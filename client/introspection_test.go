package client

import (
	"context"
	"net"
	"os"
	"strconv"
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
