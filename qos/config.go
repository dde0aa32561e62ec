package qos

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// ErrConfig is wrapped by every error a Validate method returns.
var ErrConfig = errors.New("qos: invalid config")

// Config gathers the configuration of both sides of a stream. The zero value
// is valid: every zero field takes its default.
type Config struct {
	// Sender configures every Sender.
	Sender SenderConfig
	// Receivers configures the Receivers table and, through its Receiver
	// field, every Receiver in it.
	Receivers ReceiversConfig
}

// DefaultConfig returns the configuration the zero value stands for, with
// every default filled in.
func DefaultConfig() Config {
	return Config{Sender: DefaultSenderConfig(), Receivers: DefaultReceiversConfig()}
}

// Validate reports whether c (with defaults applied) is usable. Errors wrap
// ErrConfig.
func (c Config) Validate() error {
	return errors.Join(c.Sender.Validate(), c.Receivers.Validate())
}

// SenderConfig configures a Sender. Zero fields take the defaults of
// params.go.
type SenderConfig struct {
	// RetainCount bounds the datagrams kept for repair. Default DefaultRetainCount.
	RetainCount int
	// RetainBytes bounds the record bytes kept for repair. Default DefaultRetainBytes.
	RetainBytes int
	// RetainAge bounds how long a datagram is kept for repair. Default DefaultRetainAge.
	RetainAge time.Duration
	// RetainAcked bounds the retained datagrams acknowledged by every
	// receiver (Sender.Acked). Default DefaultRetainAcked.
	RetainAcked int
	// HeartbeatMin is the delay of the first heartbeat after data. Default
	// DefaultHeartbeatMin.
	HeartbeatMin time.Duration
	// HeartbeatMax caps the doubling heartbeat interval and is the ambient
	// heartbeat period. Default DefaultHeartbeatMax.
	HeartbeatMax time.Duration
	// RepairMerge is the window in which NACKs for a datagram just repeated
	// are ignored. Default DefaultRepairMerge.
	RepairMerge time.Duration
	// RepairRate is the repair token refill rate in datagrams per second.
	// Default DefaultRepairRate.
	RepairRate float64
	// RepairBurst is the repair token-bucket depth. Default DefaultRepairBurst.
	RepairBurst int
	// MaxPendingRepairs bounds the queued repairs. Default DefaultMaxPendingRepairs.
	MaxPendingRepairs int
}

// DefaultSenderConfig returns the sender defaults of params.go.
func DefaultSenderConfig() SenderConfig { return SenderConfig{}.withDefaults() }

func (c SenderConfig) withDefaults() SenderConfig {
	setDefault(&c.RetainCount, DefaultRetainCount)
	setDefault(&c.RetainBytes, DefaultRetainBytes)
	setDefault(&c.RetainAge, DefaultRetainAge)
	setDefault(&c.RetainAcked, DefaultRetainAcked)
	setDefault(&c.HeartbeatMin, DefaultHeartbeatMin)
	setDefault(&c.HeartbeatMax, DefaultHeartbeatMax)
	setDefault(&c.RepairMerge, DefaultRepairMerge)
	setDefault(&c.RepairRate, DefaultRepairRate)
	setDefault(&c.RepairBurst, DefaultRepairBurst)
	setDefault(&c.MaxPendingRepairs, DefaultMaxPendingRepairs)
	return c
}

// Validate reports whether c (with defaults applied) is usable. Errors wrap
// ErrConfig.
func (c SenderConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.RetainCount < 1 || c.RetainBytes < 1 || c.RetainAge <= 0 || c.RetainAcked < 1:
		return fmt.Errorf("%w: sender retention bounds must be positive", ErrConfig)
	case c.HeartbeatMin <= 0 || c.HeartbeatMax < c.HeartbeatMin:
		return fmt.Errorf("%w: need 0 < HeartbeatMin (%v) <= HeartbeatMax (%v)", ErrConfig, c.HeartbeatMin, c.HeartbeatMax)
	case c.RepairMerge < 0:
		return fmt.Errorf("%w: RepairMerge %v is negative", ErrConfig, c.RepairMerge)
	case !(c.RepairRate > 0) || c.RepairBurst < 1 || c.MaxPendingRepairs < 1:
		return fmt.Errorf("%w: repair rate, burst and queue must be positive", ErrConfig)
	}
	return nil
}

// ReceiverConfig configures a Receiver. Zero fields take the defaults of
// params.go.
type ReceiverConfig struct {
	// NackBackoff bounds the random delay before a hole is NACKed. Default
	// DefaultNackBackoff.
	NackBackoff time.Duration
	// NackInterval is the wait for a repair before NACKing again. Default
	// DefaultNackInterval.
	NackInterval time.Duration
	// NackIntervalMax bounds the NACK interval as it adapts to the delay of
	// repairs. Default DefaultNackIntervalMax; it is at least NackInterval.
	NackIntervalMax time.Duration
	// NackTries is how many NACKs in a row, unanswered, a hole gets before
	// it is given up. Default DefaultNackTries.
	NackTries int
	// GiveUpAfter is how long a hole is NACKed in vain at least before it is
	// given up, however many NACKs that takes. Default DefaultGiveUpAfter.
	GiveUpAfter time.Duration
	// ReorderDatagrams bounds the datagrams an ordered reliable receiver holds.
	// Default DefaultReorderDatagrams.
	ReorderDatagrams int
	// ReorderBytes bounds the held bytes (records plus per-datagram overhead).
	// Default DefaultReorderBytes.
	ReorderBytes int
	// MaxGaps bounds the holes tracked. Default DefaultMaxGaps.
	MaxGaps int
	// CatchUp makes a reliable receiver whose first datagram of a stream is
	// numbered at most CatchUp take the stream from its start (NACKing what
	// it missed) instead of from the first datagram it heard, and lets a
	// heartbeat of such a young stream open it. Default DefaultCatchUp;
	// negative disables it (every receiver starts where it joins).
	CatchUp int
	// Rand draws the NACK back-off. The machines have no randomness of their
	// own: when nil, each receiver seeds a generator from its own instance id
	// and stream key, which differs between receivers of one stream.
	// A Rand must not be shared between goroutines.
	Rand *rand.Rand
}

// DefaultReceiverConfig returns the receiver defaults of params.go.
func DefaultReceiverConfig() ReceiverConfig { return ReceiverConfig{}.withDefaults() }

func (c ReceiverConfig) withDefaults() ReceiverConfig {
	setDefault(&c.NackBackoff, DefaultNackBackoff)
	setDefault(&c.NackInterval, DefaultNackInterval)
	setDefault(&c.NackIntervalMax, max(DefaultNackIntervalMax, c.NackInterval))
	setDefault(&c.NackTries, DefaultNackTries)
	setDefault(&c.GiveUpAfter, DefaultGiveUpAfter)
	setDefault(&c.ReorderDatagrams, DefaultReorderDatagrams)
	setDefault(&c.ReorderBytes, DefaultReorderBytes)
	setDefault(&c.MaxGaps, DefaultMaxGaps)
	setDefault(&c.CatchUp, DefaultCatchUp)
	return c
}

// Validate reports whether c (with defaults applied) is usable. Errors wrap
// ErrConfig.
func (c ReceiverConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.NackBackoff < 0 || c.NackInterval <= 0 || c.NackTries < 1 || c.NackIntervalMax < c.NackInterval:
		return fmt.Errorf("%w: NACK back-off, interval and tries out of range", ErrConfig)
	case c.GiveUpAfter < 0:
		return fmt.Errorf("%w: GiveUpAfter %v is negative", ErrConfig, c.GiveUpAfter)
	case c.ReorderDatagrams < 1 || c.ReorderBytes < 1 || c.MaxGaps < 1:
		return fmt.Errorf("%w: reorder and gap bounds must be positive", ErrConfig)
	case c.NackTries > MaxNackTries:
		return fmt.Errorf("%w: NackTries %d above %d", ErrConfig, c.NackTries, MaxNackTries)
	}
	return nil
}

// MaxHeldBytes returns the most Receiver.HeldBytes can report between calls
// for a receiver configured with c (defaults applied).
func (c ReceiverConfig) MaxHeldBytes() int {
	c = c.withDefaults()
	return StreamOverhead + maxGapCost(c.MaxGaps) + c.ReorderBytes
}

// HeldDatagrams returns how many DATA datagrams of size bytes, one record
// each, an ordered reliable receiver configured with c (defaults applied)
// holds at most behind a hole before it gives the hole up
// (ReasonReorderOverflow). A sender's flow window must stay below it.
func (c ReceiverConfig) HeldDatagrams(size int) int {
	c = c.withDefaults()
	return min(c.ReorderDatagrams, c.ReorderBytes/(max(size, 0)+heldOverhead+recordOverhead))
}

// ReceiversConfig configures a Receivers table. Zero fields take the defaults
// of params.go.
type ReceiversConfig struct {
	// Receiver configures every receiver of the table. Its Rand, if set, is
	// shared by them (they have the table's single owner).
	Receiver ReceiverConfig
	// MaxStreams bounds the streams. Default DefaultMaxStreams.
	MaxStreams int
	// IdleTimeout frees streams without DATA for this long. Default
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxBytes bounds the bytes held by all receivers. Default DefaultMaxBytes.
	MaxBytes int
}

// DefaultReceiversConfig returns the table defaults of params.go.
func DefaultReceiversConfig() ReceiversConfig { return ReceiversConfig{}.withDefaults() }

func (c ReceiversConfig) withDefaults() ReceiversConfig {
	c.Receiver = c.Receiver.withDefaults()
	setDefault(&c.MaxStreams, DefaultMaxStreams)
	setDefault(&c.IdleTimeout, DefaultIdleTimeout)
	setDefault(&c.MaxBytes, DefaultMaxBytes)
	return c
}

// Validate reports whether c (with defaults applied) is usable. Errors wrap
// ErrConfig.
func (c ReceiversConfig) Validate() error {
	c = c.withDefaults()
	if err := c.Receiver.Validate(); err != nil {
		return err
	}
	switch {
	case c.MaxStreams < 1 || c.IdleTimeout <= 0:
		return fmt.Errorf("%w: MaxStreams and IdleTimeout must be positive", ErrConfig)
	case c.MaxBytes < c.MaxStreams*StreamOverhead:
		return fmt.Errorf("%w: MaxBytes %d below MaxStreams x %d", ErrConfig, c.MaxBytes, StreamOverhead)
	}
	return nil
}

// setDefault replaces a zero *v with def.
func setDefault[T int | float64 | time.Duration](v *T, def T) {
	if *v == 0 {
		*v = def
	}
}
