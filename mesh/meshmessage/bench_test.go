package meshmessage

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/client/clienttest"
	"github.com/rsbd/rsbd/mesh/internal/meshtest"
)

// benchEnv is a node with the listener embedded and two socket clients.
type benchEnv struct {
	addr     string
	pub, sub *client.Bus
}

// startBench starts a node, its meshmessage listener and two socket
// clients of the node.
func startBench(b *testing.B) *benchEnv {
	b.Helper()
	n := clienttest.StartNodes(b, 1)[0]
	mbus := client.Embedded(n)
	s, err := New(mbus, Config{Logger: clienttest.Logger()})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = s.Serve(ln) }()
	b.Cleanup(func() { _ = s.Close(); _ = mbus.Close() })
	return &benchEnv{addr: ln.Addr().String(), pub: meshtest.Dial(b, n), sub: meshtest.Dial(b, n)}
}

// meshClient connects to the listener, says HELLO and returns the
// connection with a reader that discards what the listener sends (the
// ACKs) unless keep is set, which then gets every Package.
func meshClient(b *testing.B, addr string, keep chan<- *Package) net.Conn {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = nc.Close() })
	hello, _ := Marshal(&Package{Header: Header{Command: HelloRequest, Seq: "1"}})
	if _, err := nc.Write(hello); err != nil {
		b.Fatal(err)
	}
	go func() {
		r := bufio.NewReaderSize(nc, 64<<10)
		for {
			p, err := Read(r)
			if err != nil {
				return
			}
			if keep != nil {
				keep <- p
			}
		}
	}()
	return nc
}

// BenchmarkPublish measures one event from publish to a socket
// subscriber: published by a socket client, or sent by an EventMesh TCP
// client as ASYNC_MESSAGE_TO_SERVER.
func BenchmarkPublish(b *testing.B) {
	for _, size := range meshtest.Sizes {
		data := bytes.Repeat([]byte("x"), size.N)
		b.Run("socket-"+size.Name, func(b *testing.B) {
			e := startBench(b)
			send := meshtest.Publisher(b, e.pub, "/bench/", TextSchema, data)
			meshtest.Measure(b, send, meshtest.Read(b, meshtest.ReaderReady(b, e.sub, "/bench/", send)), "events/s")
		})
		b.Run("meshmessage-"+size.Name, func(b *testing.B) {
			e := startBench(b)
			nc := meshClient(b, e.addr, nil)
			body, _ := json.Marshal(Message{Topic: "/bench/", Body: string(data)})
			pkg, err := Marshal(&Package{Header: Header{Command: AsyncMessageToServer, Seq: "2",
				Properties: map[string]string{PropProtocolType: ProtocolMeshMessage}}, Body: body})
			if err != nil {
				b.Fatal(err)
			}
			send := func() {
				if _, err := nc.Write(pkg); err != nil {
					b.Fatal(err)
				}
			}
			meshtest.Measure(b, send, meshtest.Read(b, meshtest.ReaderReady(b, e.sub, "/bench/", send)), "events/s")
		})
	}
}

// BenchmarkSubscribe measures one event from a socket publisher to an
// EventMesh TCP client's subscription, as ASYNC_MESSAGE_TO_CLIENT.
func BenchmarkSubscribe(b *testing.B) {
	for _, size := range meshtest.Sizes {
		data := bytes.Repeat([]byte("x"), size.N)
		b.Run("meshmessage-"+size.Name, func(b *testing.B) {
			e := startBench(b)
			in := make(chan *Package, 1024)
			nc := meshClient(b, e.addr, in)
			for _, p := range []*Package{
				{Header: Header{Command: SubscribeRequest, Seq: "2"}, Body: []byte(`{"topicList":[{"topic":"/bench/"}]}`)},
				{Header: Header{Command: ListenRequest, Seq: "3"}},
			} {
				w, _ := Marshal(p)
				if _, err := nc.Write(w); err != nil {
					b.Fatal(err)
				}
			}
			send := meshtest.Publisher(b, e.pub, "/bench/", TextSchema, data)
			recv := func(timeout time.Duration) bool {
				deadline := time.After(timeout)
				for {
					select {
					case p := <-in:
						if p.Header.Command == AsyncMessageToClient {
							return true
						}
					case <-deadline:
						return false
					}
				}
			}
			for i := 0; ; i++ {
				if i == 200 {
					b.Fatal("subscription never reached")
				}
				send()
				if recv(20 * time.Millisecond) {
					break
				}
			}
			for recv(20 * time.Millisecond) {
			}
			meshtest.Measure(b, send, func() {
				if !recv(10 * time.Second) {
					b.Fatal("event lost")
				}
			}, "events/s")
		})
	}
}
