package bus

import (
	"bytes"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
)

// TestNATSReplacesClosedConnection has the server close the client's only
// connection, as it closes a slow consumer: the next subscription and
// publish must work on a fresh connection instead of failing.
func TestNATSReplacesClosedConnection(t *testing.T) {
	srv, url, err := StartNATSServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	n, err := DialNATS(url)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	// A topic's handle made before the connection is replaced publishes on
	// the new one.
	on, err := n.PublishOn("/bench/again/")
	if err != nil {
		t.Fatal(err)
	}
	old := n.pub.Load()
	id, err := old.GetClientID()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.DisconnectClientByID(id); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the client to see its connection closed", old.IsClosed)
	var in inbox
	cancel, err := n.Subscribe("/bench/again/", in.handle)
	if err != nil {
		t.Fatalf("subscribe after the server closed the connection: %v", err)
	}
	defer cancel()
	if n.pub.Load() == old {
		t.Fatal("publishes still go to the closed connection")
	}
	if err := n.Publish("/bench/again/", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	if err := on([]byte("ho")); err != nil {
		t.Fatal(err)
	}
	if err := n.Sync(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the events", func() bool { return in.len() == 2 })
	if !bytes.Equal(in.first(), []byte("hi")) {
		t.Fatalf("got %q first", in.first())
	}
}
