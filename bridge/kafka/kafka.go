package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rsbd/rsbd/bridge"
	"github.com/rsbd/rsbd/cloudevent"
)

// Options of a Kafka bridge's section.
const (
	optGroup = "group" // consumer group of the inbound route
	optStart = "start" // latest or earliest, for a group without offsets
)

func init() { bridge.Register(kind, New) }

// Broker is a Kafka cluster as a bridge sees it.
type Broker struct {
	seeds  []string
	format bridge.Format
	group  string
	start  kgo.Offset
	name   string
}

// New is the Factory of kind "kafka".
func New(s bridge.Settings) (bridge.Broker, error) {
	if err := s.CheckOptions(optGroup, optStart); err != nil {
		return nil, err
	}
	f, err := s.CheckFormat(bridge.FormatBinary, bridge.FormatBinary, bridge.FormatStructured, bridge.FormatRaw, bridge.FormatFrame)
	if err != nil {
		return nil, err
	}
	b := &Broker{format: f, group: s.Option(optGroup, "rsbd-"+s.Name), name: s.Name}
	for _, seed := range strings.Split(s.URL, ",") {
		if seed = strings.TrimSpace(seed); seed != "" {
			b.seeds = append(b.seeds, seed)
		}
	}
	if len(b.seeds) == 0 {
		return nil, fmt.Errorf("%w: kafka bridge %s: url lists no broker", bridge.ErrSettings, s.Name)
	}
	switch s.Option(optStart, "latest") {
	case "latest":
		b.start = kgo.NewOffset().AtEnd()
	case "earliest":
		b.start = kgo.NewOffset().AtStart()
	default:
		return nil, fmt.Errorf("%w: kafka bridge %s: start is latest or earliest", bridge.ErrSettings, s.Name)
	}
	return b, nil
}

// client makes a franz-go client with opts and checks that a broker
// answers.
func (b *Broker) client(ctx context.Context, opts ...kgo.Opt) (*kgo.Client, error) {
	opts = append([]kgo.Opt{kgo.SeedBrokers(b.seeds...), kgo.ClientID("rsbd-bridge-" + b.name)}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: kafka: %w", bridge.ErrSettings, err)
	}
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := cl.Ping(pctx); err != nil {
		cl.Close()
		return nil, fmt.Errorf("kafka: no broker answers: %w", err)
	}
	return cl, nil
}

// NewSender returns a producer to topic.
func (b *Broker) NewSender(ctx context.Context, topic string) (bridge.Sender, error) {
	cl, err := b.client(ctx, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.AllowAutoTopicCreation(),
		kgo.MaxBufferedRecords(maxBuffered), kgo.ProducerLinger(0))
	if err != nil {
		return nil, err
	}
	return &sender{cl: cl, topic: topic, format: b.format, done: make(chan error, maxBuffered)}, nil
}

// NewReceiver returns a group consumer of topic.
func (b *Broker) NewReceiver(ctx context.Context, topic string) (bridge.Receiver, error) {
	cl, err := b.client(ctx, kgo.ConsumerGroup(b.group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(b.start), kgo.FetchMaxWait(fetchMaxWait), kgo.BlockRebalanceOnPoll())
	if err != nil {
		return nil, err
	}
	return &receiver{cl: cl, format: b.format}, nil
}

// Close has nothing to release: each Sender and Receiver owns its client.
func (b *Broker) Close() error { return nil }

// sender produces events to one topic. Its records are produced
// asynchronously and their acknowledgements counted: a Send that times out
// leaves them pending, and the next Send first waits for them, so a broker
// that is away never makes records pile up in the client.
type sender struct {
	cl      *kgo.Client
	topic   string
	format  bridge.Format
	done    chan error // one result per record produced
	pending int        // records produced whose result has not come
	once    sync.Once
}

// errTimeout: the broker did not acknowledge within sendTimeout.
var errTimeout = errors.New("kafka: no acknowledgement in time")

// Send produces the events and waits for every acknowledgement.
func (s *sender) Send(ctx context.Context, events []*cloudevent.Event) error {
	if err := s.drain(ctx); err != nil {
		return err
	}
	for len(events) > 0 {
		chunk := events[:min(len(events), maxBuffered)]
		events = events[len(chunk):]
		for _, e := range chunk {
			r, err := encode(s.format, s.topic, e)
			if err != nil {
				return errors.Join(fmt.Errorf("%w: %w", bridge.ErrRejected, err), s.drain(ctx))
			}
			s.pending++
			s.cl.Produce(ctx, r, s.promise)
		}
		if err := s.drain(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Probe checks that a broker answers.
func (s *sender) Probe(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	return s.cl.Ping(ctx)
}

// promise takes a record's result.
func (s *sender) promise(_ *kgo.Record, err error) { s.done <- err }

// drain waits for the results of the pending records, at most
// sendTimeout, and returns the first failure.
func (s *sender) drain(ctx context.Context) error {
	t := time.NewTimer(sendTimeout)
	defer t.Stop()
	var first error
	for s.pending > 0 {
		select {
		case err := <-s.done:
			s.pending--
			if first == nil {
				first = err
			}
		case <-t.C:
			return errTimeout
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if errors.Is(first, kerr.MessageTooLarge) || errors.Is(first, kerr.RecordListTooLarge) {
		return fmt.Errorf("%w: %w", bridge.ErrRejected, first)
	}
	return first
}

// Close closes the client, which fails what is still buffered.
func (s *sender) Close() error {
	s.once.Do(s.cl.Close)
	return nil
}

// receiver consumes one topic in a group.
type receiver struct {
	cl     *kgo.Client
	format bridge.Format
	once   sync.Once
}

// Receive polls, delivers each record in order and commits what was
// delivered.
func (r *receiver) Receive(ctx context.Context, deliver bridge.Deliver) error {
	for {
		fs := r.cl.PollRecords(ctx, maxPoll)
		if ctx.Err() != nil {
			r.cl.AllowRebalance()
			return ctx.Err()
		}
		if err := fetchErr(fs); err != nil {
			r.cl.AllowRebalance()
			return err
		}
		err := r.deliverAll(ctx, fs.Records(), deliver)
		r.cl.AllowRebalance()
		if err != nil {
			return err
		}
	}
}

// deliverAll delivers recs in order and commits those delivered.
func (r *receiver) deliverAll(ctx context.Context, recs []*kgo.Record, deliver bridge.Deliver) error {
	var err error
	n := 0
	for _, rec := range recs {
		if err = deliver(ctx, decode(r.format, rec)); err != nil {
			break
		}
		n++
	}
	if n > 0 {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sendTimeout)
		defer cancel()
		if cerr := r.cl.CommitRecords(cctx, recs[:n]...); cerr != nil && err == nil {
			err = fmt.Errorf("kafka: commit: %w", cerr)
		}
	}
	return err
}

// fetchErr returns the first error of a poll.
func fetchErr(fs kgo.Fetches) error {
	for _, fe := range fs.Errors() {
		return fmt.Errorf("kafka: fetch %s/%d: %w", fe.Topic, fe.Partition, fe.Err)
	}
	return nil
}

// Close leaves the group and closes the client.
func (r *receiver) Close() error {
	r.once.Do(r.cl.Close)
	return nil
}
