package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/rsbd/rsbd/client"
	"github.com/rsbd/rsbd/group"
	"github.com/rsbd/rsbd/node"
	"github.com/rsbd/rsbd/scope"
)

// exampleNode is a single-host rsbd node on loopback with ephemeral ports
// and a private multicast pool, as an example program would embed it.
func exampleNode() node.Config {
	pool := group.DefaultConfig()
	pool.PoolBase = netip.AddrFrom4([4]byte{239, 255, byte(rand.IntN(200) + 20), 0})
	pool.PoolPort = uint16(20000 + rand.IntN(12000))
	return node.Config{
		SocketAddr:   "127.0.0.1:0",
		GossipAddr:   "127.0.0.1:0",
		DataAddr:     "127.0.0.1:0",
		LocalProfile: true,
		Group:        pool,
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// An Informer publishes on its scope; a Reader on a super-scope receives it.
func ExampleInformer() {
	bus, err := client.NewEmbedded(exampleNode(), client.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer bus.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	rd, _ := bus.NewReader(scope.MustParse("/robot"))
	inf, err := bus.NewInformer(scope.MustParse("/robot/arm"))
	if err != nil {
		log.Fatal(err)
	}
	id, _ := inf.Publish(ctx, "moving")
	_, _ = inf.Publish(ctx, int64(42))

	for range 2 {
		ev, err := rd.Read(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ev.Scope, ev.WireSchema, ev.Payload, ev.ID.SequenceNumber)
	}
	fmt.Println("first id is from the informer:", id.SenderID == inf.ID())
	// Output:
	// /robot/arm/ utf-8-string moving 0
	// /robot/arm/ int64 42 1
	// first id is from the informer: true
}

// A Listener calls its handlers on its own goroutine; filters select events.
func ExampleListener() {
	bus, err := client.NewEmbedded(exampleNode(), client.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer bus.Close()

	l, err := bus.NewListener(scope.MustParse("/sensors"),
		client.WithFilter(client.WireSchemaFilter("double")))
	if err != nil {
		log.Fatal(err)
	}
	got := make(chan string, 4)
	l.AddHandler(func(ev *client.Event) error {
		got <- fmt.Sprintf("%s %v", ev.Scope, ev.Payload)
		return nil
	})

	inf, _ := bus.NewInformer(scope.MustParse("/sensors"))
	ev := &client.Event{Payload: "not a double"}
	_ = inf.PublishEvent(context.Background(), ev)
	ev = &client.Event{Payload: 21.5}
	ev.Scope = scope.MustParse("/sensors/temperature")
	_ = inf.PublishEvent(context.Background(), ev)

	fmt.Println(<-got)
	// Output: /sensors/temperature/ 21.5
}

// A Reader's Read waits with a context; a deadline gives ErrTimeout.
func ExampleReader() {
	bus, err := client.NewEmbedded(exampleNode(), client.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer bus.Close()

	rd, _ := bus.NewReader(scope.MustParse("/quiet"), client.WithQueue(16, client.DropOldest))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = rd.Read(ctx)
	fmt.Println(errors.Is(err, client.ErrTimeout))
	// Output: true
}

// A LocalServer offers methods; a RemoteServer calls them. Error replies
// arrive as *RemoteError.
func ExampleLocalServer() {
	bus, err := client.NewEmbedded(exampleNode(), client.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer bus.Close()

	srv, _ := bus.NewLocalServer(scope.MustParse("/calc"))
	_ = srv.AddMethod("square", func(_ context.Context, req *client.Event) (any, error) {
		n, ok := req.Payload.(int64)
		if !ok {
			return nil, fmt.Errorf("want an integer, got %T", req.Payload)
		}
		return n * n, nil
	})

	remote, _ := bus.NewRemoteServer(scope.MustParse("/calc"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := remote.Call(ctx, "square", int64(12))
	fmt.Println(res, err)
	_, err = remote.Call(ctx, "square", "twelve")
	var re *client.RemoteError
	fmt.Println(errors.As(err, &re), re.Message)
	// Output:
	// 144 <nil>
	// true want an integer, got string
}

// A RemoteServer call nobody answers ends with ErrTimeout.
func ExampleRemoteServer() {
	bus, err := client.NewEmbedded(exampleNode(), client.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer bus.Close()

	remote, _ := bus.NewRemoteServer(scope.MustParse("/nobody"), client.WithCallTimeout(50*time.Millisecond))
	_, err = remote.Call(context.Background(), "ping", nil)
	fmt.Println(errors.Is(err, client.ErrTimeout))
	// Output: true
}

// Dial reaches the bus over the RSB socket protocol, here the socket server
// of an in-process node (normally the local rsbd at socket://localhost:55555).
func ExampleDial() {
	n, err := node.New(exampleNode(), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	bus, err := client.Dial(ctx, "socket://"+n.SocketAddr().String())
	if err != nil {
		log.Fatal(err)
	}
	defer bus.Close()
	rd, _ := bus.NewReader(scope.MustParse("/chat"))
	inf, _ := bus.NewInformer(scope.MustParse("/chat"))
	_, _ = inf.Publish(ctx, "own events are delivered locally")
	ev, err := rd.Read(ctx)
	fmt.Println(ev.Payload, err)
	// Output: own events are delivered locally <nil>
}
