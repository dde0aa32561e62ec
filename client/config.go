package client

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/rsbd/rsbd/notification"
	"github.com/rsbd/rsbd/rsbsocket/sockclient"
)

// Config configures a Bus. The zero value works: zero fields take the
// defaults of params.go.
type Config struct {
	// Socket configures the connection Dial opens.
	Socket sockclient.ClientConfig
	// Registry converts payloads; nil means notification.DefaultRegistry().
	Registry *notification.Registry
	// QueueSize bounds each participant's event queue unless the
	// participant sets its own (default DefaultQueueSize).
	QueueSize int
	// QueueBytes bounds what the events in each participant's queue
	// weigh together unless the participant sets its own (default
	// DefaultQueueBytes; see WithQueueBytes).
	QueueBytes int64
	// NoIntrospection turns introspection off: participants are not
	// announced and surveys are not answered. Over the socket protocol the
	// daemon then sends the connection every event.
	NoIntrospection bool
	// DisplayName is the process's display name in introspection.
	DisplayName string
	// Logger receives the Bus's logs; nil means slog.Default().
	Logger *slog.Logger

	// quickTick is the period of the quick-delivery guard (zero:
	// quickTick); the package's tests stretch it.
	quickTick time.Duration
}

// DefaultConfig returns the configuration the zero value stands for.
func DefaultConfig() Config {
	return Config{Registry: notification.DefaultRegistry(), QueueSize: DefaultQueueSize, QueueBytes: DefaultQueueBytes, Logger: slog.Default()}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.QueueSize < 0 {
		return fmt.Errorf("%w: QueueSize %d is negative", ErrConfig, c.QueueSize)
	}
	if c.QueueBytes < 0 {
		return fmt.Errorf("%w: QueueBytes %d is negative", ErrConfig, c.QueueBytes)
	}
	if err := c.Socket.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

// withDefaults returns c with its zero fields set.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Registry == nil {
		c.Registry = d.Registry
	}
	if c.QueueSize == 0 {
		c.QueueSize = d.QueueSize
	}
	if c.QueueBytes == 0 {
		c.QueueBytes = d.QueueBytes
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	if c.quickTick == 0 {
		c.quickTick = quickTick
	}
	return c
}
