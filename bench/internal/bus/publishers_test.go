package bus

import (
	"slices"
	"testing"
	"time"

	"github.com/rsbd/rsbd/internal/testutil"
)

// recordingEndpoint is an Endpoint without topic handles that records its
// publishes.
type recordingEndpoint struct {
	Endpoint
	topics []string
}

func (r *recordingEndpoint) Publish(topic string, _ []byte) error {
	r.topics = append(r.topics, topic)
	return nil
}

// TestPublishersFallBackToPublish: an endpoint without topic handles gets
// one function per topic that calls its Publish with that topic.
func TestPublishersFallBackToPublish(t *testing.T) {
	ep := &recordingEndpoint{}
	topics := []string{"/a/", "/b/", "/c/"}
	pubs, err := Publishers(ep, topics)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{2, 0, 1, 2} {
		if err := pubs[i](nil); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"/c/", "/a/", "/b/", "/c/"}; !slices.Equal(ep.topics, want) {
		t.Fatalf("published on %v, want %v", ep.topics, want)
	}
}

// TestPublishersUseTopicHandles: the socket and embedded endpoints' handles
// deliver on their own topics, and a topic that is no scope is refused
// when the handle is made.
func TestPublishersUseTopicHandles(t *testing.T) {
	d := startDaemon(t)
	sock := dialSocket(t, d.Node().SocketAddr().String(), 1)
	var onA, onB inbox
	cancelA, err := d.Subscribe("/h/a/", onA.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer cancelA()
	cancelB, err := sock.Subscribe("/h/b/", onB.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer cancelB()
	fromSock, err := Publishers(sock, []string{"/h/a/"})
	if err != nil {
		t.Fatal(err)
	}
	fromNode, err := Publishers(d, []string{"/h/b/"})
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "deliveries through topic handles", func() bool {
		if err := fromSock[0]([]byte("a")); err != nil {
			t.Fatal(err)
		}
		if err := sock.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := fromNode[0]([]byte("b")); err != nil {
			t.Fatal(err)
		}
		return onA.len() > 0 && onB.len() > 0
	})
	if a, b := string(onA.first()), string(onB.first()); a != "a" || b != "b" {
		t.Fatalf("payloads %q %q", a, b)
	}
	for _, ep := range []Endpoint{sock, d} {
		if _, err := Publishers(ep, []string{"/ok/", "no scope"}); err == nil {
			t.Errorf("%T: a handle for a topic that is no scope was made", ep)
		}
	}
}
