package amqp1

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/rsbd/rsbd/bridge"
)

func init() { bridge.Register(Kind, Open) }

// OptCredit is the option key of a receiver's link credit.
const OptCredit = "credit"

// Config is what an AMQP 1.0 bridge section says. Its zero value, with a
// URL, reads and writes binary messages with DefaultCredit.
type Config struct {
	// URL is the broker: amqp://user:password@host:port (amqps too).
	URL string
	// Credit is a receiver's link credit; 0 is DefaultCredit.
	Credit int
	// Format is the message format; bridge.FormatDefault is binary.
	Format bridge.Format
}

// DefaultConfig returns the defaults: binary, DefaultCredit.
func DefaultConfig() Config { return Config{Credit: DefaultCredit, Format: bridge.FormatBinary} }

// Validate checks c and fills its defaults; the error wraps
// bridge.ErrSettings.
func (c *Config) Validate() error {
	if c.Credit == 0 {
		c.Credit = DefaultCredit
	}
	u, err := url.Parse(c.URL)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "amqp" && u.Scheme != "amqps"):
		return fmt.Errorf("%w: amqp url %q (amqp://user:password@host:port)", bridge.ErrSettings, c.URL)
	case c.Credit < 1 || c.Credit > 1<<16:
		return fmt.Errorf("%w: amqp credit %d (1 to 65536)", bridge.ErrSettings, c.Credit)
	}
	s := bridge.Settings{Kind: Kind, Format: c.Format}
	c.Format, err = s.CheckFormat(bridge.FormatBinary, bridge.FormatBinary, bridge.FormatStructured, bridge.FormatRaw, bridge.FormatFrame)
	return err
}

// Broker makes the AMQP 1.0 senders and receivers of one bridge section;
// each has a connection of its own.
type Broker struct {
	cfg Config
}

// Open returns the Broker of a [bridge.NAME] section of kind amqp: its
// option is credit (Config). It is the kind's bridge.Factory.
func Open(s bridge.Settings) (bridge.Broker, error) {
	if err := s.CheckOptions(OptCredit); err != nil {
		return nil, err
	}
	c := Config{URL: s.URL, Format: s.Format}
	if v := s.Option(OptCredit, ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("%w: amqp bridge %s: credit %q", bridge.ErrSettings, s.Name, v)
		}
		c.Credit = n
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("amqp bridge %s: %w", s.Name, err)
	}
	return &Broker{cfg: c}, nil
}

// NewSender returns a sender to the address (on RabbitMQ /queue/NAME,
// /exchange/NAME/KEY; on Artemis the address name).
func (b *Broker) NewSender(_ context.Context, address string) (bridge.Sender, error) {
	return &sender{cfg: &b.cfg, address: address}, nil
}

// NewReceiver returns a receiver of the address.
func (b *Broker) NewReceiver(_ context.Context, address string) (bridge.Receiver, error) {
	r := &receiver{cfg: &b.cfg, address: address}
	r.n.Store(time.Now().UnixMicro())
	return r, nil
}

// Close does nothing: each sender and receiver owns its connection.
func (b *Broker) Close() error { return nil }
