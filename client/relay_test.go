package client

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// relay is a minimal RSB socket server written from the protocol rules alone
// (no rsbd code): it greets each client with 4 zero bytes and copies every
// length-prefixed frame it reads to all other clients, never back to the
// sender, without looking inside.
type relay struct {
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]*sync.Mutex // per-connection write lock
	wg    sync.WaitGroup
}

// startRelay listens on loopback and serves until the test ends.
func startRelay(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, conns: make(map[net.Conn]*sync.Mutex)}
	r.wg.Add(1)
	go r.accept()
	t.Cleanup(r.close)
	return ln.Addr().String()
}

func (r *relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		// Registered before the handshake, so that a client that has read
		// the handshake gets every frame published after it; its write
		// lock, taken first, keeps frames behind the handshake.
		wmu := new(sync.Mutex)
		wmu.Lock()
		r.mu.Lock()
		r.conns[c] = wmu
		r.mu.Unlock()
		_, err = c.Write([]byte{0, 0, 0, 0})
		wmu.Unlock()
		r.wg.Add(1)
		if err != nil {
			c.Close() // serve's first read fails and removes c
		}
		go r.serve(c)
	}
}

// serve relays the frames of c until it ends.
func (r *relay) serve(c net.Conn) {
	defer r.wg.Done()
	defer func() {
		r.mu.Lock()
		delete(r.conns, c)
		r.mu.Unlock()
		c.Close()
	}()
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return
		}
		n := binary.LittleEndian.Uint32(hdr[:])
		if n > 16<<20 {
			return
		}
		frame := make([]byte, 4+n)
		copy(frame, hdr[:])
		if _, err := io.ReadFull(c, frame[4:]); err != nil {
			return
		}
		r.forward(c, frame)
	}
}

// forward writes frame to every connection but from, each in one write.
func (r *relay) forward(from net.Conn, frame []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c, wmu := range r.conns {
		if c == from {
			continue
		}
		wmu.Lock()
		c.Write(frame)
		wmu.Unlock()
	}
}

func (r *relay) close() {
	r.ln.Close()
	r.mu.Lock()
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// TestForeignServer runs informer, listener, reader and RPC through the
// independent relay: the client needs nothing rsbd-specific from its server.
func TestForeignServer(t *testing.T) {
	addr := startRelay(t)
	dial := func() *Bus {
		ctx, cancel := context.WithTimeout(bg(), 5*time.Second)
		defer cancel()
		b, err := DialConfig(ctx, "socket://"+addr+"/ignored", Config{Logger: testLogger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	a, b := dial(), dial()
	sc := mustScope("/relay/")
	l, _ := b.NewListener(sc)
	got := collectEvents(t, l)
	own := collectEvents(t, must(a.NewListener(sc)))
	inf, _ := a.NewInformer(sc.Concat(mustScope("/sub")))
	if _, err := inf.Publish(bg(), "via relay"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, got); ev.Payload != "via relay" || ev.Scope.String() != "/relay/sub/" {
		t.Fatalf("got %s %v", ev.Scope, ev.Payload)
	}
	if ev := next(t, own); ev.Payload != "via relay" {
		t.Fatalf("own listener got %v", ev.Payload)
	}
	quiet(t, own) // delivered once locally, never echoed

	ls, _ := b.NewLocalServer(mustScope("/relay/svc"))
	ls.AddMethod("twice", func(_ context.Context, req *Event) (any, error) {
		s, _ := req.Payload.(string)
		if s == "" {
			return nil, errors.New("empty")
		}
		return s + s, nil
	})
	rs, _ := a.NewRemoteServer(mustScope("/relay/svc"))
	ctx, cancel := context.WithTimeout(bg(), 10*time.Second)
	defer cancel()
	if res, err := rs.Call(ctx, "twice", "ab"); err != nil || res != "abab" {
		t.Fatalf("call: %v %v", res, err)
	}
	if _, err := rs.Call(ctx, "twice", ""); !errors.Is(err, ErrRemote) {
		t.Fatalf("error call: %v", err)
	}
	hostileFrames(t, addr, b)
}

// hostileFrames sends b garbage and an event nobody listens to through the
// relay: both are counted and skipped, and b keeps working.
func hostileFrames(t *testing.T, addr string, b *Bus) {
	t.Helper()
	got := collectEvents(t, must(b.NewListener(mustScope("/hostile/"))))
	raw, err := sockclient.Dial(bg(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	send := func(sc string, payload string) {
		ev := &notification.Event{Scope: mustScope(sc), WireSchema: notification.SchemaUTF8String, Data: []byte(payload),
			ID: notification.EventID{SenderID: notification.NewParticipantID()}}
		ev.MetaData.CreateTime, ev.MetaData.SendTime = nowMicros(), nowMicros()
		body, err := notification.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if err := raw.Send(body); err != nil {
			t.Fatal(err)
		}
	}
	before := b.Stats()
	if err := raw.Send([]byte("\xff\xffnot a notification")); err != nil {
		t.Fatal(err)
	}
	send("/nobody/listens/", "x")
	send("/hostile/", "still fine")
	if ev := next(t, got); ev.Payload != "still fine" {
		t.Fatalf("after garbage got %v", ev.Payload)
	}
	st := b.Stats()
	if st.Malformed != before.Malformed+1 || st.Unwanted < before.Unwanted+1 {
		t.Fatalf("stats before %+v after %+v", before, st)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
