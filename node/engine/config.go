package engine

import (
	"errors"
	"fmt"

	"github.com/rsbd/rsbd/fragmentation"
	"github.com/rsbd/rsbd/qos"
	"github.com/rsbd/rsbd/transport/datagram"
)

// ErrConfig is wrapped by every error Config.Validate returns.
var ErrConfig = errors.New("engine: invalid config")

// ErrEnv is wrapped by the error New returns for an Env that lacks what
// the engine needs.
var ErrEnv = errors.New("engine: incomplete environment")

// ErrStopped is returned by Submit once the engine was stopped.
var ErrStopped = errors.New("engine: stopped")

// Config configures an Engine. The zero value works: zero fields take the
// defaults of params.go (DefaultConfig shows them).
type Config struct {
	// Instance is this node's instance id: the sender of its streams.
	Instance datagram.InstanceID
	// MaxDatagram is the datagram size; peers are assumed to use the same.
	MaxDatagram int
	// Unicast sends datagrams to each interested peer instead of the
	// group's multicast address.
	Unicast bool
	// MaxSenders bounds the sender streams; the least recently used idle
	// one is freed past it.
	MaxSenders int
	// Streams configures the qos stream machines.
	Streams qos.Config
	// Assembly configures the reassembly of fragmented events; its Timeout
	// is replaced per class by the params.go timeouts when zero, and the
	// reliable assembler's MaxPartialEvents by DefaultReliablePartialEvents
	// when zero.
	Assembly fragmentation.Config
	// PublishQueue and PublishQueueBytes bound the publishes waiting for
	// the engine (each half queued, half taken); ReceiveQueue and
	// ReceiveQueueBytes the received batches waiting for it.
	PublishQueue, PublishQueueBytes, ReceiveQueue, ReceiveQueueBytes int
	// RecvBuffer is the receive buffer the kernel granted the node's
	// sockets, in bytes (0: unknown); the flow window fits half of it.
	RecvBuffer int
}

// DefaultConfig returns the configuration the zero value stands for.
func DefaultConfig() Config {
	var c Config
	c.applyDefaults()
	return c
}

func (c *Config) applyDefaults() {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.MaxDatagram, DefaultMaxDatagram)
	def(&c.MaxSenders, DefaultMaxSenders)
	def(&c.PublishQueue, DefaultPublishQueue)
	def(&c.PublishQueueBytes, DefaultPublishQueueBytes)
	def(&c.ReceiveQueue, DefaultReceiveQueue)
	def(&c.ReceiveQueueBytes, DefaultReceiveQueueBytes)
}

// Validate reports whether c (with defaults applied) is usable.
func (c Config) Validate() error {
	c.applyDefaults()
	var errs []error
	if c.MaxDatagram < minDatagram || c.MaxDatagram > datagram.MaxDatagramSize {
		errs = append(errs, fmt.Errorf("max datagram %d outside %d..%d", c.MaxDatagram, minDatagram, datagram.MaxDatagramSize))
	}
	if c.PublishQueue < 0 || c.PublishQueueBytes < 0 || c.ReceiveQueue < 0 || c.ReceiveQueueBytes < 0 || c.MaxSenders < 0 || c.RecvBuffer < 0 {
		errs = append(errs, errors.New("queue, sender and buffer bounds must not be negative"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// assemblers returns the configurations of the reliable and the
// unreliable assembler.
func (c *Config) assemblers() (rel, unrel fragmentation.Config) {
	rel, unrel = c.Assembly, c.Assembly
	if rel.Timeout == 0 {
		rel.Timeout = DefaultReliableAssemblyTimeout
	}
	if rel.MaxPartialEvents == 0 {
		rel.MaxPartialEvents = DefaultReliablePartialEvents
	}
	if unrel.Timeout == 0 {
		unrel.Timeout = DefaultUnreliableAssemblyTimeout
	}
	return rel, unrel
}

// RecordCapacity is the largest record a DATA datagram of maxDatagram
// bytes carries.
func RecordCapacity(maxDatagram int) int {
	return maxDatagram - dataHeader - recordOverhead
}
