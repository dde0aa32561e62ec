package redis

import (
	"context"
	"errors"
	"net"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rsbd/rsbd/bridge"
)

// consumer reads a stream in a consumer group.
type consumer struct {
	c      *goredis.Client
	stream string
	group  string
	name   string
	format bridge.Format
	once   sync.Once
}

// Receive first reads again the entries the consumer was given and never
// acknowledged, then new ones; each is acknowledged after the bus took it.
func (r *consumer) Receive(ctx context.Context, deliver bridge.Deliver) error {
	from := "0" // the consumer's pending entries first
	for ctx.Err() == nil {
		n, err := r.read(ctx, from, deliver)
		if err != nil {
			return err
		}
		if from == "0" && n == 0 {
			from = ">"
		}
	}
	return ctx.Err()
}

// read reads one batch from id on (">" for new entries), delivers and
// acknowledges each, and returns how many it read.
func (r *consumer) read(ctx context.Context, from string, deliver bridge.Deliver) (int, error) {
	res, err := r.c.XReadGroup(ctx, &goredis.XReadGroupArgs{Group: r.group, Consumer: r.name,
		Streams: []string{r.stream, from}, Count: readCount, Block: readBlock}).Result()
	if errors.Is(err, goredis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, st := range res {
		for _, m := range st.Messages {
			n++
			en := entry{stream: r.stream, id: m.ID, values: m.Values, redelivered: from != ">"}
			if err := deliver(ctx, decodeEntry(r.format, en)); err != nil {
				return n, err
			}
			if err := r.c.XAck(context.WithoutCancel(ctx), r.stream, r.group, m.ID).Err(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// Close closes the client.
func (r *consumer) Close() error {
	r.once.Do(func() { _ = r.c.Close() })
	return nil
}

// subscriber reads a channel.
type subscriber struct {
	c      *goredis.Client
	ps     *goredis.PubSub
	format bridge.Format
	once   sync.Once
}

// Receive delivers the channel's messages until ctx ends or the
// connection fails.
func (s *subscriber) Receive(ctx context.Context, deliver bridge.Deliver) error {
	for ctx.Err() == nil {
		msg, err := s.ps.ReceiveTimeout(ctx, readBlock)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			continue // nothing yet: look at ctx again
		}
		if err != nil {
			return err
		}
		m, ok := msg.(*goredis.Message)
		if !ok {
			continue // a subscription confirmation or a pong
		}
		if err := deliver(ctx, decodeMessage(s.format, m.Channel, []byte(m.Payload), time.Now())); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Close ends the subscription and closes the client.
func (s *subscriber) Close() error {
	s.once.Do(func() {
		_ = s.ps.Close()
		_ = s.c.Close()
	})
	return nil
}
